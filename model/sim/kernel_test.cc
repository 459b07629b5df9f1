#include "model/sim/kernel.h"

#include <gtest/gtest.h>

namespace qptwin::model::sim {
namespace {

TEST(SimKernel, AdvanceMovesSystemCTime) {
  uint64_t before = KernelNowNs();
  Advance(1500);
  EXPECT_EQ(KernelNowNs(), before + 1500);
  Advance(0);
  EXPECT_EQ(KernelNowNs(), before + 1500);
}

}  // namespace
}  // namespace qptwin::model::sim
