// Makes a program's own buffer and a model memory region the same memory.
//
// spec/backend.h's RegMr allocates the region's buffer in the backend; a verbs program
// registers memory it already has (ibv_reg_mr(pd, addr, length, ...)). The preload lets
// the model own a buffer and then maps one memfd page at both places: the program's page
// (its contents copied in first) and the model buffer's page. Writes by either side are
// seen by the other at once, with no copying on the data path.
//
// Contract:
//  1. Alias(user, length, model) needs model page aligned and at least
//     Offset(user) + length bytes long; user + i and model + Offset(user) + i are then the
//     same byte for i < length. The program's pages keep their contents.
//  2. A page of the program shared by several registrations keeps one memfd page: each
//     registration maps it; Release() undoes one Alias(), and the last release of a page
//     gives the program a private copy again (contents kept) and frees the memfd page.
//  3. Errors are errnos: EFAULT when part of [user, user + length) is not mapped, ENOMEM.
//  4. Not thread-safe: the preload calls it from its model thread only.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>

namespace qptwin::exec {

class UserMemory {
 public:
  static constexpr size_t kPage = 4096;
  static size_t Offset(const void* user) { return reinterpret_cast<uintptr_t>(user) % kPage; }

  UserMemory() = default;
  ~UserMemory();
  UserMemory(const UserMemory&) = delete;
  UserMemory& operator=(const UserMemory&) = delete;

  [[nodiscard]] int Alias(uint8_t* user, size_t length, uint8_t* model);
  void Release(uint8_t* user, size_t length);
  size_t pages() const { return pages_.size(); }

 private:
  struct Page {
    uint64_t file_offset = 0;
    int refs = 0;
  };
  int EnsureFile();
  // Gives each page of [first, first + n pages) a memfd page holding its current contents.
  int Share(uintptr_t first, size_t n);

  int fd_ = -1;
  uint64_t file_size_ = 0;
  std::map<uint64_t, int> free_runs_;  // file offset -> pages (freed pages for reuse)
  std::map<uintptr_t, Page> pages_;    // the program's page address -> its memfd page
};

}  // namespace qptwin::exec
