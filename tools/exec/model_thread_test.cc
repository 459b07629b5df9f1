#include "tools/exec/model_thread.h"

#include <atomic>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace qptwin::exec {
namespace {

TEST(ModelThread, RunsEveryCallOnTheOneModelThread) {
  ModelThread t(nullptr, 1'000'000);
  std::thread::id first;
  ASSERT_TRUE(t.Run([&] { first = std::this_thread::get_id(); }));
  EXPECT_NE(first, std::this_thread::get_id());
  std::vector<std::thread> callers;
  std::atomic<int> elsewhere{0};
  int count = 0;  // touched only on the model thread: no race if calls are serialized
  for (int i = 0; i < 4; ++i) {
    callers.emplace_back([&] {
      for (int j = 0; j < 1000; ++j) {
        t.Run([&] {
          ++count;
          if (std::this_thread::get_id() != first) ++elsewhere;
        });
      }
    });
  }
  for (auto& c : callers) c.join();
  EXPECT_EQ(count, 4000);
  EXPECT_EQ(elsewhere.load(), 0);
}

TEST(ModelThread, NestedRunRunsAtOnce) {
  ModelThread t(nullptr, 1'000'000);
  int order = 0;
  ASSERT_TRUE(t.Run([&] {
    t.Run([&] { order = 1; });
    order = order * 10 + 2;
  }));
  EXPECT_EQ(order, 12);
}

TEST(ModelThread, IdleRunsWhenNoCallComes) {
  std::atomic<int> idles{0};
  ModelThread t([&] { ++idles; }, 1'000'000);  // 1 ms
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  EXPECT_GE(idles.load(), 3);
}

TEST(ModelThread, SleepingModelThreadWakesForACall) {
  ModelThread t(nullptr, 1'000'000'000);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));  // past the spin: asleep
  int v = 0;
  ASSERT_TRUE(t.Run([&] { v = 7; }));
  EXPECT_EQ(v, 7);
}

}  // namespace
}  // namespace qptwin::exec
