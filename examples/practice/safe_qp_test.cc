#include "examples/practice/safe_qp.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cerrno>
#include <set>
#include <thread>
#include <vector>

#include "examples/practice/test_env.h"

namespace qptwin::practice {
namespace {

constexpr int kThreads = 8;
constexpr int kOpsPerThread = 1000;

// Two QPs on ONE Device object connected to each other: on the model every Device of a
// Backend shares one engine and answers only on its thread, so every Device call (and
// Advance) goes through one DeviceLock owned by this (the test's) thread.
class SafeQpTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(MakeModelEnv(&env_, /*cq_depth=*/16384), 0);
    lock_ = std::make_shared<DeviceLock>();
    ASSERT_EQ(dev().CreateQp(env_.local.Init(128, 16), &a_, nullptr), 0);
    ASSERT_EQ(dev().CreateQp(env_.local.Init(128, 16), &b_, nullptr), 0);
  }
  Device& dev() { return *env_.local.dev; }
  StoredConnection ConnTo(QpHandle peer) {
    StoredConnection c;
    EXPECT_EQ(dev().LocalConnectionInfo(peer, &c.remote), 0);
    return c;
  }
  TestEnv env_;
  std::shared_ptr<DeviceLock> lock_;
  QpHandle a_, b_;
};

TEST_F(SafeQpTest, EightThreadsPostAndModifyWithoutLostWrsOrTornState) {
  SafeQp a(&dev(), lock_, a_);
  SafeQp b(&dev(), lock_, b_);
  ASSERT_EQ(a.Connect(ConnTo(b_)), 0);
  ASSERT_EQ(b.Connect(ConnTo(a_)), 0);
  ASSERT_EQ(a.state(), QpState::kRts);

  std::atomic<int> torn{0}, bad_state{0}, post_errors{0}, modify_errors{0};
  std::atomic<int> workers_done{0};
  auto worker = [&](int t) {
    for (int i = 0; i < kOpsPerThread; ++i) {
      uint64_t id = (static_cast<uint64_t>(t) << 32) | static_cast<uint32_t>(i);
      SendWr wr = WriteWr(env_.local, env_.local, id, (t * 64) % 4096, 8, true);
      for (;;) {
        size_t bad = 0;
        int err = a.PostSend({wr}, &bad);
        if (err == 0) break;
        if (err != ENOMEM) {  // ENOMEM: SQ full until the progress loop reaps
          ++post_errors;
          break;
        }
        std::this_thread::yield();
      }
      if (i % 50 == 0) {
        // RTS->RTS: two attributes changed together must be read together.
        QpAttr m;
        m.qp_state = QpState::kRts;
        m.min_rnr_timer = static_cast<uint8_t>((t * 7 + i) % 32);
        m.qp_access_flags = access::kLocalWrite | access::kRemoteWrite |
                            ((m.min_rnr_timer & 1) ? access::kRemoteRead : 0);
        if (a.Modify(m, attr::kState | attr::kMinRnrTimer | attr::kAccessFlags)) ++modify_errors;
      }
      if (i % 10 == 0) {
        QpAttr q;
        QpInitAttr init;
        if (a.Query(&q, &init) == 0) {
          bool odd = q.min_rnr_timer & 1;
          bool read = q.qp_access_flags & access::kRemoteRead;
          if (q.min_rnr_timer != 0 && odd != read) ++torn;
        }
      }
      if (a.state() != QpState::kRts) ++bad_state;
    }
    ++workers_done;
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) threads.emplace_back(worker, t);

  // Progress on this (the SystemC) thread: time passes and completions are reaped.
  std::multiset<uint64_t> seen;
  int failed_wcs = 0;
  const size_t total = static_cast<size_t>(kThreads) * kOpsPerThread;
  uint64_t sim_limit = env_.backend->NowNs() + 60'000 * kMs;
  while (seen.size() < total && env_.backend->NowNs() < sim_limit) {
    lock_->Run([&] {
      env_.backend->Advance(20'000);  // 20 us
      WorkCompletion wc[64];
      int n;
      while ((n = dev().PollCq(env_.local.scq, 64, wc)) > 0) {
        for (int i = 0; i < n; ++i) {
          seen.insert(wc[i].wr_id);
          if (wc[i].status != WcStatus::kSuccess) ++failed_wcs;
        }
      }
    });
    if (workers_done.load() < kThreads) std::this_thread::yield();
  }
  lock_->ServeUntil([&] { return workers_done.load() == kThreads; });
  for (auto& th : threads) th.join();

  EXPECT_EQ(post_errors.load(), 0);
  EXPECT_EQ(modify_errors.load(), 0);
  EXPECT_EQ(torn.load(), 0);
  EXPECT_EQ(bad_state.load(), 0);
  EXPECT_EQ(failed_wcs, 0);
  ASSERT_EQ(seen.size(), total) << "every posted WR completes exactly once";
  std::set<uint64_t> unique(seen.begin(), seen.end());
  EXPECT_EQ(unique.size(), total) << "no duplicates";
  for (int t = 0; t < kThreads; ++t) {
    uint64_t first = static_cast<uint64_t>(t) << 32;
    EXPECT_EQ(unique.count(first), 1u);
    EXPECT_EQ(unique.count(first | (kOpsPerThread - 1)), 1u);
  }
  QpState s;
  ASSERT_EQ(QueryState(dev(), a_, &s), 0);
  EXPECT_EQ(s, QpState::kRts);
}

TEST_F(SafeQpTest, RacingConnectsOfOneQpRunAsOneUninterleavedSequence) {
  SafeQp a(&dev(), lock_, a_);
  StoredConnection conn = ConnTo(b_);
  std::atomic<int> ok{0}, einval{0}, other{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      int err = a.Connect(conn);
      if (err == 0) {
        ++ok;
      } else if (err == EINVAL) {
        ++einval;
      } else {
        ++other;
      }
    });
  }
  lock_->ServeUntil([&] { return ok + einval + other == kThreads; });
  for (auto& th : threads) th.join();
  EXPECT_EQ(ok.load(), 1);
  EXPECT_EQ(einval.load(), kThreads - 1) << "the others find the QP no longer in RESET";
  EXPECT_EQ(other.load(), 0);
  std::vector<StateChange> h;
  ASSERT_EQ(dev().QpHistory(a_, &h), 0);
  std::vector<QpState> tos;
  for (const auto& c : h) {
    if (c.cause == "modify") tos.push_back(c.to);
  }
  EXPECT_EQ(tos, (std::vector<QpState>{QpState::kInit, QpState::kRtr, QpState::kRts}));
}

TEST_F(SafeQpTest, ManyQpsChangeStateInParallelThroughOneHistory) {
  StateHistory history(env_.backend.get(), &dev());
  std::atomic<int> callbacks{0};
  history.OnChange([&](QpHandle, const StateChange&) { ++callbacks; });
  std::vector<QpHandle> qps(kThreads);
  for (auto& q : qps) ASSERT_EQ(dev().CreateQp(env_.local.Init(16, 16), &q, nullptr), 0);
  std::atomic<int> errors{0}, finished{0};
  constexpr int kCycles = 50;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      SafeQp q(&dev(), lock_, qps[t], &history);
      StoredConnection conn = lock_->Run([&] { return ConnTo(b_); });
      for (int c = 0; c < kCycles; ++c) {
        if (q.Connect(conn)) ++errors;
        QpAttr r;
        r.qp_state = QpState::kReset;
        if (q.Modify(r, attr::kState)) ++errors;
      }
      ++finished;
    });
  }
  lock_->ServeUntil([&] { return finished.load() == kThreads; });
  for (auto& th : threads) th.join();
  EXPECT_EQ(errors.load(), 0);
  // Each cycle records 4 changes (INIT, RTR, RTS, RESET) on each QP, plus "create".
  for (QpHandle q : qps) {
    std::vector<StateChange> h = history.History(q);
    ASSERT_EQ(h.size(), 1u + 4u * kCycles);
    for (size_t i = 1; i < h.size(); ++i) EXPECT_EQ(h[i].from, h[i - 1].to) << "step " << i;
  }
  EXPECT_EQ(callbacks.load(), kThreads * (1 + 4 * kCycles));
}

TEST_F(SafeQpTest, ErrorsPassThroughAndStateRefreshes) {
  SafeQp a(&dev(), lock_, a_);
  QpAttr bad;
  bad.qp_state = QpState::kRts;
  EXPECT_EQ(a.Modify(bad, attr::kState), EINVAL);  // RESET->RTS is illegal
  EXPECT_EQ(a.state(), QpState::kReset);
  size_t bad_wr = 0;
  EXPECT_EQ(a.PostSend({WriteWr(env_.local, env_.local, 1, 0, 8, true)}, &bad_wr), EINVAL);
  ASSERT_EQ(a.Connect(ConnTo(b_)), 0);
  QpAttr e;
  e.qp_state = QpState::kErr;
  ASSERT_EQ(dev().ModifyQp(a_, e, attr::kState), 0);  // behind the wrapper
  EXPECT_EQ(a.state(), QpState::kRts);
  ASSERT_EQ(a.Refresh(), 0);
  EXPECT_EQ(a.state(), QpState::kErr);
  SafeQp ghost(&dev(), lock_, QpHandle{5555});
  EXPECT_EQ(ghost.Refresh(), EINVAL);
}

}  // namespace
}  // namespace qptwin::practice
