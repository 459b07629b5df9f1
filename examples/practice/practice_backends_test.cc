// The practices on every backend: the library sees only spec/backend.h, so the same checks
// run on the model profiles and on a real device (skipped, with the reason, without one).
#include <gtest/gtest.h>

#include <cerrno>
#include <ostream>
#include <memory>
#include <string>

#include "spec/bring_up.h"
#include "examples/practice/batching.h"
#include "examples/practice/qp_pool.h"
#include "examples/practice/recovery.h"
#include "examples/practice/state_history.h"
#include "examples/practice/test_env.h"

namespace qptwin::practice {
namespace {

struct Case {
  testing::BackendChoice backend;
  std::string local_dev, peer_dev;
};

std::ostream& operator<<(std::ostream& os, const Case& c) { return os << c.backend.name; }

std::vector<Case> Cases() {
  return {{testing::ModelChoice("rxe"), "mdev0", "mdev1"},
          {testing::ModelChoice("ibta"), "mdev0", "mdev1"},
          {testing::HwChoice(), "", ""}};  // hw: loopback through two contexts of the first device
}

class PracticeOnBackend : public ::testing::TestWithParam<Case> {
 protected:
  void SetUp() override {
    std::unique_ptr<Backend> b = testing::MakeBackendOrSkip(GetParam().backend);
    if (!b) return;
    ASSERT_EQ(OpenEnv(std::move(b), GetParam().local_dev, GetParam().peer_dev, &env_), 0);
    peer_ = std::make_unique<LocalPeer>(env_.peer.dev.get(), env_.peer.Init());
  }
  void TearDown() override { peer_.reset(); }
  Device& dev() { return *env_.local.dev; }
  int WriteAndWait(QpHandle qp, uint64_t wr_id, WcStatus* status) {
    size_t bad = 0;
    if (int err = dev().PostSend(qp, {WriteWr(env_.local, env_.peer, wr_id, 0, 64, true)}, &bad))
      return err;
    std::vector<WorkCompletion> wcs;
    if (int err = dev().WaitForCompletions(env_.local.scq, 1, 1000 * kMs, &wcs)) return err;
    *status = wcs[0].status;
    return wcs[0].wr_id == wr_id ? 0 : EIO;
  }

  TestEnv env_;
  std::unique_ptr<LocalPeer> peer_;
};

TEST_P(PracticeOnBackend, PoolHitCarriesData) {
  QpPoolOptions o;
  o.capacity = 2;
  o.init = env_.local.Init();
  QpPool pool(env_.backend.get(), &dev(), peer_.get(), o);
  ASSERT_EQ(pool.Warm(1), 0);
  PooledQp q;
  ASSERT_EQ(pool.Acquire(&q), 0);
  EXPECT_EQ(pool.stats().hits, 1u);
  env_.local.buf[0] = 0x42;
  WcStatus st;
  ASSERT_EQ(WriteAndWait(q.qp, 1, &st), 0);
  EXPECT_EQ(st, WcStatus::kSuccess);
  EXPECT_EQ(env_.peer.buf[0], 0x42);
  ASSERT_EQ(pool.Release(q), 0);
}

TEST_P(PracticeOnBackend, RecoveryAfterRemoteAccessErrorRestoresRts) {
  QpHandle qp;
  ASSERT_EQ(dev().CreateQp(env_.local.Init(), &qp, nullptr), 0);
  StoredConnection conn;
  ASSERT_EQ(ConnectThroughPeer(dev(), qp, *peer_, &conn), 0);
  SendWr bad = WriteWr(env_.local, env_.peer, 7, 0, 64, true);
  bad.rkey ^= 0xff00;
  size_t bad_index = 0;
  ASSERT_EQ(dev().PostSend(qp, {bad}, &bad_index), 0);
  // The error CQE first (recovering at once would flush the WR before the NAK arrives).
  std::vector<WorkCompletion> wcs;
  ASSERT_EQ(dev().WaitForCompletions(env_.local.scq, 1, 1000 * kMs, &wcs), 0);
  EXPECT_EQ(wcs[0].status, WcStatus::kRemAccessErr);
  RecoveryOptions opts;  // nothing outstanding any more
  RecoveryResult r;
  ASSERT_EQ(RecoverQp(*env_.backend, dev(), qp, &conn, peer_.get(), opts, &r), 0);
  QpState s;
  ASSERT_EQ(QueryState(dev(), qp, &s), 0);
  EXPECT_EQ(s, QpState::kRts);
  WcStatus st;
  ASSERT_EQ(WriteAndWait(qp, 8, &st), 0);
  EXPECT_EQ(st, WcStatus::kSuccess);
}

TEST_P(PracticeOnBackend, BatchingThroughSmallSqAccountsEveryWr) {
  CqHandle rcq;
  ASSERT_EQ(dev().CreateCq(64, ChannelHandle{}, &rcq, nullptr), 0);
  QpInitAttr init = env_.local.Init(8, 8);
  init.recv_cq = rcq;
  QpHandle qp;
  ASSERT_EQ(dev().CreateQp(init, &qp, nullptr), 0);
  StoredConnection conn;
  ASSERT_EQ(ConnectThroughPeer(dev(), qp, *peer_, &conn), 0);
  BatchPoster p(&dev(), qp, BatchOptions{16});
  ASSERT_EQ(p.Init(), 0);
  std::vector<SendWr> wrs;
  for (int i = 0; i < 500; ++i) wrs.push_back(WriteWr(env_.local, env_.peer, i, 0, 32, false));
  size_t posted = 0;
  ASSERT_EQ(p.Post(wrs, &posted), 0);
  ASSERT_EQ(p.WaitIdle(1000 * kMs), 0);
  EXPECT_EQ(p.stats().posted, 500u);
  EXPECT_EQ(p.stats().silent, 500u);
  EXPECT_EQ(p.outstanding(), 0u);
}

TEST_P(PracticeOnBackend, StateHistoryRecordsConnect) {
  StateHistory h(env_.backend.get(), &dev());
  QpHandle qp;
  ASSERT_EQ(dev().CreateQp(env_.local.Init(), &qp, nullptr), 0);
  StoredConnection conn;
  ASSERT_EQ(PeerConnection(dev(), qp, *peer_, &conn), 0);
  QpAttr a;
  ASSERT_EQ(ConnectAttr(dev(), conn, &a), 0);
  std::vector<BringUpStep> steps;
  ASSERT_EQ(BringUpPlan(QpType::kRc, QpState::kReset, QpState::kRts, &steps), 0);
  for (const BringUpStep& step : steps) {
    a.qp_state = step.to;
    ASSERT_EQ(h.Modify(qp, a, step.mask, "connect"), 0);
  }
  std::vector<QpState> tos;
  for (const StateChange& c : h.History(qp)) {
    if (c.cause == "connect") tos.push_back(c.to);
  }
  EXPECT_EQ(tos, (std::vector<QpState>{QpState::kInit, QpState::kRtr, QpState::kRts}));
}

INSTANTIATE_TEST_SUITE_P(All, PracticeOnBackend, ::testing::ValuesIn(Cases()),
                         [](const auto& info) { return info.param.backend.name; });

}  // namespace
}  // namespace qptwin::practice
