#include "tools/exec/model_thread.h"

#include <atomic>
#include <chrono>
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

// A progress thread's pump counts its turns and notes whether it ever overlapped a call.
struct ProgressProbe {
  std::atomic<int> pumps{0};
  std::atomic<bool> in_call{false};
  std::atomic<bool> overlapped{false};
  std::atomic<int> moves{0};
  ModelThread::Progress Make() {
    ModelThread::Progress p;
    p.pump = [this] {
      if (in_call.load()) overlapped = true;
      ++pumps;
      return true;  // busy: keep the shortest period
    };
    p.wait = [](uint64_t ns) { std::this_thread::sleep_for(std::chrono::nanoseconds(ns)); };
    p.move = [this](std::thread::id, std::thread::id) { ++moves; };
    p.period_ns = 100'000;
    return p;
  }
};

TEST(ModelThread, ProgressPumpsWhileTheOwnerMakesNoCall) {
  ModelThread t(ModelThread::Mode::kCaller, nullptr, 0);
  ProgressProbe probe;
  ASSERT_TRUE(t.Run([] {}));
  ASSERT_TRUE(t.StartProgress(probe.Make()));
  EXPECT_FALSE(t.StartProgress(probe.Make()));  // once
  // At a 100 us period three pumps take well under a millisecond; a loaded 2-core machine
  // may keep the thread off a core for long, so wait for them (bounded), not for a time.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (probe.pumps.load() < 3 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  EXPECT_GE(probe.pumps.load(), 3);
  EXPECT_EQ(probe.moves.load() % 2, 0);  // handed over and back each turn
}

TEST(ModelThread, ProgressNeverRunsInsideTheOwnersCall) {
  ModelThread t(ModelThread::Mode::kCaller, nullptr, 0);
  ProgressProbe probe;
  ASSERT_TRUE(t.StartProgress(probe.Make()));
  for (int i = 0; i < 20; ++i) {
    t.Run([&] {
      probe.in_call = true;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
      probe.in_call = false;
    });
    std::this_thread::sleep_for(std::chrono::microseconds(300));
  }
  // The progress thread is alive: it pumps once the owner stays away. A loaded 2-core machine
  // may keep it off a core through every 300 us gap above (a fresh clone's test run did), so
  // wait for a pump (bounded), not for a time.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (probe.pumps.load() < 1 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  EXPECT_FALSE(probe.overlapped.load());
  EXPECT_GE(probe.pumps.load(), 1);
}

TEST(ModelThread, ProgressRunsAnotherThreadsCallWhileTheOwnerIsAway) {
  ModelThread t(ModelThread::Mode::kCaller, nullptr, 0);
  ProgressProbe probe;
  ASSERT_TRUE(t.StartProgress(probe.Make()));
  std::thread::id ran, caller;
  int nested = 0;
  std::thread other([&] {
    caller = std::this_thread::get_id();
    t.Run([&] {
      ran = std::this_thread::get_id();
      t.Run([&] { nested = 1; });  // a nested call runs at once
    });
  });
  other.join();  // the owner makes no call: the progress thread ran it
  EXPECT_NE(ran, std::this_thread::get_id());
  EXPECT_NE(ran, caller);
  EXPECT_EQ(nested, 1);
}

TEST(ModelThread, ProgressStaysAwayWhileTheOwnerRunsTheModelItself) {
  ModelThread t(ModelThread::Mode::kCaller, nullptr, 0);
  ProgressProbe probe;
  ModelThread::Progress p = probe.Make();
  p.period_ns = 20'000'000;  // quiet for 20 ms before a pump: far above the notes' 1 ms
  ASSERT_TRUE(t.StartProgress(std::move(p)));
  for (int i = 0; i < 60; ++i) {
    t.NoteProgress();
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  EXPECT_LE(probe.pumps.load(), 1);  // (one, should this thread be preempted for 20 ms)
}

TEST(ModelThread, DedicatedModeHasNoProgressThread) {
  ModelThread t(ModelThread::Mode::kDedicated, nullptr, 1'000'000);
  ProgressProbe probe;
  EXPECT_FALSE(t.StartProgress(probe.Make()));
}

TEST(ModelThread, ChildForkedByTheOwnerRunsInPlaceWithoutProgress) {
  ModelThread t(ModelThread::Mode::kCaller, nullptr, 0);
  ProgressProbe probe;
  ASSERT_TRUE(t.StartProgress(probe.Make()));
  std::this_thread::sleep_for(std::chrono::milliseconds(2));
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    std::thread::id ran;
    const bool ok = t.Run([&] { ran = std::this_thread::get_id(); });
    _exit(ok && ran == std::this_thread::get_id() && !t.progress_running() ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  EXPECT_TRUE(t.progress_running());
}

}  // namespace
}  // namespace qptwin::exec
