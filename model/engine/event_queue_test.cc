#include "model/engine/event_queue.h"

#include <gtest/gtest.h>

#include <string>

namespace qptwin::model::engine {
namespace {

TEST(EventQueue, RunsInTimeThenSchedulingOrder) {
  HeapQueue q;
  std::string log;
  q.At(20, [&] { log += "c"; });
  q.At(10, [&] { log += "a"; });
  q.At(10, [&] { log += "b"; });
  q.AdvanceBy(15);
  EXPECT_EQ(log, "ab");
  EXPECT_EQ(q.Now(), 15u);
  q.AdvanceBy(5);
  EXPECT_EQ(log, "abc");
}

TEST(EventQueue, CallbackMaySchedulePastTimeWhichRunsNow) {
  HeapQueue q;
  int runs = 0;
  q.At(10, [&] { q.At(0, [&] { ++runs; }); });
  q.AdvanceBy(10);
  EXPECT_EQ(runs, 1);
  EXPECT_EQ(q.Now(), 10u);
}

TEST(EventQueue, StepHookSeesEveryForwardMove) {
  HeapQueue q;
  uint64_t total = 0;
  q.SetStepHook([&](uint64_t d) { total += d; });
  q.At(7, [] {});
  q.AdvanceBy(100);
  EXPECT_EQ(total, 100u);
}

TEST(EventQueue, RunUntilStopsAtConditionOrDeadline) {
  HeapQueue q;
  bool flag = false;
  q.At(50, [&] { flag = true; });
  q.At(60, [] {});
  EXPECT_TRUE(q.RunUntil([&] { return flag; }, 1000));
  EXPECT_EQ(q.Now(), 50u);
  EXPECT_FALSE(q.RunUntil([] { return false; }, 200));
  EXPECT_EQ(q.Now(), 200u);
  EXPECT_TRUE(q.Empty());
}

}  // namespace
}  // namespace qptwin::model::engine
