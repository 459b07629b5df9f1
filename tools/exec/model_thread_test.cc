#include "tools/exec/model_thread.h"

#include <atomic>
#include <thread>
#include <vector>

#include <sys/wait.h>
#include <unistd.h>

#include "gtest/gtest.h"

namespace qptwin::exec {
namespace {

TEST(ModelThread, DedicatedRunsEveryCallOnTheOneModelThread) {
  ModelThread t(ModelThread::Mode::kDedicated, nullptr, 1'000'000);
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
  ModelThread t(ModelThread::Mode::kDedicated, nullptr, 1'000'000);
  int order = 0;
  ASSERT_TRUE(t.Run([&] {
    t.Run([&] { order = 1; });
    order = order * 10 + 2;
  }));
  EXPECT_EQ(order, 12);
}

TEST(ModelThread, IdleRunsWhenNoCallComes) {
  std::atomic<int> idles{0};
  ModelThread t(ModelThread::Mode::kDedicated, [&] { ++idles; }, 1'000'000);  // 1 ms
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  EXPECT_GE(idles.load(), 3);
}

TEST(ModelThread, SleepingModelThreadWakesForACall) {
  ModelThread t(ModelThread::Mode::kDedicated, nullptr, 1'000'000'000);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));  // past the spin: asleep
  int v = 0;
  ASSERT_TRUE(t.Run([&] { v = 7; }));
  EXPECT_EQ(v, 7);
}

TEST(ModelThread, CallerModeRunsTheOwnersCallsInPlace) {
  ModelThread t(ModelThread::Mode::kCaller, nullptr, 0);
  std::thread::id ran;
  ASSERT_TRUE(t.Run([&] { ran = std::this_thread::get_id(); }));
  EXPECT_EQ(ran, std::this_thread::get_id());
}

TEST(ModelThread, CallerModeRunsAnotherThreadsCallWhenTheOwnerEnters) {
  ModelThread t(ModelThread::Mode::kCaller, nullptr, 0);
  std::thread::id ran;
  std::atomic<bool> finished{false};
  std::thread other([&] {
    t.Run([&] { ran = std::this_thread::get_id(); });
    finished = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_FALSE(finished.load());  // waits for the owner
  for (int i = 0; i < 1000 && !finished.load(); ++i) {
    t.Run([] {});
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  other.join();
  EXPECT_EQ(ran, std::this_thread::get_id());  // ran on the owner
}

TEST(ModelThread, ChildForkedByTheOwnerKeepsRunningInPlace) {
  ModelThread t(ModelThread::Mode::kCaller, nullptr, 0);
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    int v = 0;
    const bool ran_on_model_thread = t.Run([&] { v = 5; });
    _exit(ran_on_model_thread && v == 5 ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

}  // namespace
}  // namespace qptwin::exec
