#include "model/engine/cq.h"

#include <gtest/gtest.h>

namespace qptwin::model::engine {
namespace {

TEST(Cq, FullQueueRefusesAndStaysInError) {
  Cq cq(1, 1, 2, 0);
  WorkCompletion wc;
  EXPECT_TRUE(cq.Push(wc));
  EXPECT_TRUE(cq.Push(wc));
  EXPECT_FALSE(cq.Push(wc));
  EXPECT_TRUE(cq.in_error());
  WorkCompletion out[4];
  EXPECT_EQ(cq.Poll(4, out), 2);
  EXPECT_FALSE(cq.Push(wc));
}

TEST(Cq, NonStickyCqAcceptsAgainOnceThereIsRoom) {
  Cq cq(1, 1, 1, 0, /*sticky_error=*/false);
  WorkCompletion wc;
  EXPECT_TRUE(cq.Push(wc));
  EXPECT_FALSE(cq.Push(wc));
  WorkCompletion out;
  EXPECT_EQ(cq.Poll(1, &out), 1);
  EXPECT_TRUE(cq.Push(wc));
}

TEST(Cq, PollReturnsInOrder) {
  Cq cq(1, 1, 8, 0);
  for (uint64_t i = 0; i < 5; ++i) {
    WorkCompletion wc;
    wc.wr_id = i;
    ASSERT_TRUE(cq.Push(wc));
  }
  WorkCompletion out[3];
  ASSERT_EQ(cq.Poll(3, out), 3);
  EXPECT_EQ(out[0].wr_id, 0u);
  EXPECT_EQ(out[2].wr_id, 2u);
  EXPECT_EQ(cq.size(), 2u);
}

TEST(Cq, SolicitedOnlyArmIgnoresPlainCompletionsAndFiresOnce) {
  Cq cq(1, 1, 8, 3);
  EXPECT_FALSE(cq.TakeNotify(true, false));  // not armed
  cq.Arm(true);
  EXPECT_FALSE(cq.TakeNotify(false, false));
  EXPECT_TRUE(cq.TakeNotify(false, true));  // errors always wake
  EXPECT_FALSE(cq.TakeNotify(true, false));  // disarmed
  cq.Arm(false);
  EXPECT_TRUE(cq.TakeNotify(false, false));
}

}  // namespace
}  // namespace qptwin::model::engine
