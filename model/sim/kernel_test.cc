#include "model/sim/kernel.h"

#include <gtest/gtest.h>

#include <thread>

namespace qptwin::model::sim {
namespace {

TEST(SimKernel, AdvanceMovesSystemCTime) {
  uint64_t before = KernelNowNs();
  Advance(1500);
  EXPECT_EQ(KernelNowNs(), before + 1500);
  Advance(0);
  EXPECT_EQ(KernelNowNs(), before + 1500);
}

TEST(SimKernel, MeasureRawActivationsRunsBothLoopsInKernelTime) {
  const uint64_t before = KernelNowNs();
  const RawActivationRates r = MeasureRawActivations(10000);
  EXPECT_GT(r.method_per_s, 0);
  EXPECT_GT(r.thread_per_s, 0);
  EXPECT_EQ(KernelNowNs(), before + 2 * 10001) << "each loop's 10,000 ns and one more";
  const RawActivationRates again = MeasureRawActivations(100);  // the method is reused
  EXPECT_GT(again.method_per_s, 0);
  EXPECT_EQ(KernelNowNs(), before + 2 * 10001 + 2 * 101);
  const RawActivationRates none = MeasureRawActivations(0);
  EXPECT_EQ(none.method_per_s, 0);
}

TEST(SimKernel, MoveKernelHandsItToAnotherThreadAndBack) {
  ASSERT_TRUE(Advance(0));  // this thread owns the kernel
  const std::thread::id me = std::this_thread::get_id();
  const uint64_t before = KernelNowNs();
  bool moved = false, ran = false, moved_back = false, stranger = true;
  std::thread other([&] {
    const std::thread::id it = std::this_thread::get_id();
    stranger = MoveKernel(it, it);  // it is not the owner: refused
    moved = MoveKernel(me, it);
    ran = Advance(250) && KernelNowNs() == before + 250;
    moved_back = MoveKernel(it, me);
  });
  other.join();
  EXPECT_FALSE(stranger);
  EXPECT_TRUE(moved);
  EXPECT_TRUE(ran);
  EXPECT_TRUE(moved_back);
  EXPECT_TRUE(OnKernelThread());
  EXPECT_EQ(KernelNowNs(), before + 250);
}

TEST(SimKernel, WhileMovedTheOwnerIsRefused) {
  ASSERT_TRUE(Advance(0));
  const std::thread::id me = std::this_thread::get_id();
  std::thread::id it;
  bool owner_refused = false;
  std::thread other([&] {
    it = std::this_thread::get_id();
    ASSERT_TRUE(MoveKernel(me, it));
  });
  other.join();
  owner_refused = !OnKernelThread() && !Advance(10) && KernelNowNs() == 0;
  ASSERT_TRUE(MoveKernel(it, me));  // the thread has ended; the kernel comes back
  EXPECT_TRUE(owner_refused);
  EXPECT_TRUE(OnKernelThread());
}

}  // namespace
}  // namespace qptwin::model::sim
