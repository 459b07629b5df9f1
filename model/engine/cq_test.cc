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

namespace qptwin::model::engine {
namespace {

TEST(CqVisibility, ACqeIsPolledOnlyOnceItsDmaWriteLanded) {
  Cq cq(1, 1, 4, 0, false);
  WorkCompletion wc;
  wc.wr_id = 7;
  ASSERT_TRUE(cq.Push(wc, 1000));
  WorkCompletion out;
  EXPECT_EQ(cq.Poll(1, &out, 999), 0);
  EXPECT_EQ(cq.size(), 1u) << "in the queue already: it counts against the depth";
  EXPECT_EQ(cq.Poll(1, &out, 1000), 1);
  EXPECT_EQ(out.wr_id, 7u);
}

TEST(CqVisibility, VisibilityNeverReordersTheQueue) {
  Cq cq(1, 1, 4, 0, false);
  WorkCompletion a, b;
  a.wr_id = 1;
  b.wr_id = 2;
  ASSERT_TRUE(cq.Push(a, 500));
  ASSERT_TRUE(cq.Push(b, 100));  // an earlier time is raised to the previous one
  WorkCompletion out[2];
  EXPECT_EQ(cq.Poll(2, out, 499), 0);
  ASSERT_EQ(cq.Poll(2, out, 500), 2);
  EXPECT_EQ(out[0].wr_id, 1u);
  EXPECT_EQ(out[1].wr_id, 2u);
}

}  // namespace
}  // namespace qptwin::model::engine
