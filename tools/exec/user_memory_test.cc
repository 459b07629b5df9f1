#include "tools/exec/user_memory.h"

#include <sys/mman.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "gtest/gtest.h"

namespace qptwin::exec {
namespace {

uint8_t* ModelBuffer(size_t len) {
  void* p = mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  return p == MAP_FAILED ? nullptr : static_cast<uint8_t*>(p);
}

TEST(UserMemory, ProgramBufferAndModelBufferAreTheSameBytes) {
  UserMemory mem;
  auto* user = static_cast<uint8_t*>(malloc(10000));
  std::memset(user, 0xab, 10000);
  const size_t off = UserMemory::Offset(user);
  uint8_t* model = ModelBuffer(off + 10000 + UserMemory::kPage);
  ASSERT_EQ(mem.Alias(user, 10000, model), 0);
  EXPECT_EQ(model[off], 0xab);  // the program's contents were kept
  EXPECT_EQ(model[off + 9999], 0xab);
  model[off + 5] = 1;  // the model writes, the program sees it
  EXPECT_EQ(user[5], 1);
  user[9000] = 2;  // and the other way round
  EXPECT_EQ(model[off + 9000], 2);
  mem.Release(user, 10000);
  EXPECT_EQ(mem.pages(), 0u);
  EXPECT_EQ(user[5], 1);  // a private copy again, contents kept
  model[off + 5] = 3;
  EXPECT_EQ(user[5], 1);  // no longer shared
  free(user);
}

TEST(UserMemory, TwoRegistrationsOfOnePageShareIt) {
  UserMemory mem;
  auto* user = static_cast<uint8_t*>(aligned_alloc(4096, 8192));
  uint8_t* m1 = ModelBuffer(8192);
  uint8_t* m2 = ModelBuffer(4096);
  ASSERT_EQ(mem.Alias(user, 8192, m1), 0);
  ASSERT_EQ(mem.Alias(user + 100, 50, m2), 0);
  m2[100] = 9;
  EXPECT_EQ(user[100], 9);
  EXPECT_EQ(m1[100], 9);
  mem.Release(user, 8192);
  EXPECT_EQ(mem.pages(), 1u);  // the second registration still holds its page
  m2[101] = 8;
  EXPECT_EQ(user[101], 8);
  mem.Release(user + 100, 50);
  EXPECT_EQ(mem.pages(), 0u);
  free(user);
}

TEST(UserMemory, UnmappedMemoryIsEfault) {
  UserMemory mem;
  uint8_t* model = ModelBuffer(4096);
  uint8_t* region = ModelBuffer(2 * 4096);
  uint8_t* hole = region + 4096;
  munmap(hole, 4096);
  EXPECT_EQ(mem.Alias(hole, 100, model), EFAULT);
  EXPECT_EQ(mem.pages(), 0u);
}

}  // namespace
}  // namespace qptwin::exec
