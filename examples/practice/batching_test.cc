#include "examples/practice/batching.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <set>

#include "examples/practice/peer_link.h"
#include "examples/practice/qp_connect.h"
#include "examples/practice/test_env.h"

namespace qptwin::practice {
namespace {

class BatchingTest : public EnvTest {
 protected:
  void SetUp() override {
    peer_send_wr_ = 1024;
    peer_recv_wr_ = 16;
    EnvTest::SetUp();
    if (HasFatalFailure()) return;
    ASSERT_EQ(dev().CreateCq(256, ChannelHandle{}, &recv_cq_, nullptr), 0);
  }
  // A connected RC QP with an SQ of `depth` whose send CQ holds only send completions.
  QpHandle MakeQp(uint32_t depth, bool sig_all = false) {
    QpInitAttr init = env_.local.Init(depth, 16);
    init.recv_cq = recv_cq_;
    init.sq_sig_all = sig_all;
    QpHandle qp;
    EXPECT_EQ(dev().CreateQp(init, &qp, nullptr), 0);
    StoredConnection conn;
    EXPECT_EQ(ConnectThroughPeer(dev(), qp, *peer_, &conn), 0);
    conns_[qp.id] = conn;
    return qp;
  }
  std::vector<SendWr> Writes(size_t n, uint64_t first_id = 1000, bool signaled = false) {
    std::vector<SendWr> wrs;
    for (size_t i = 0; i < n; ++i) {
      wrs.push_back(WriteWr(env_.local, env_.peer, first_id + i, (i % 64) * 16, 16, signaled));
    }
    return wrs;
  }
  static void ExpectAccounted(const BatchPoster& p) {
    const BatchStats& s = p.stats();
    EXPECT_EQ(s.posted, s.delivered + s.silent + p.outstanding())
        << "posted=" << s.posted << " delivered=" << s.delivered << " silent=" << s.silent
        << " outstanding=" << p.outstanding();
  }

  CqHandle recv_cq_;
  std::map<uint32_t, StoredConnection> conns_;
};

// A send queue that fills: on rxe a post's WRITEs have completed when ibv_post_send returns
// (Behaviour::post_send_runs_to_completion), so the queue never fills there; the ibta profile
// keeps them in flight and the poster must wait for reclaimed slots.
class BatchingFullSqTest : public BatchingTest {
 protected:
  void SetUp() override {
    profile_ = "ibta";
    BatchingTest::SetUp();
  }
};

TEST_F(BatchingFullSqTest, ThousandWrsThroughEightDeepSqNeverEnomem) {
  QpHandle qp = MakeQp(8);
  BatchPoster p(&dev(), qp, BatchOptions{/*signal_every=*/16});  // N larger than the SQ
  ASSERT_EQ(p.Init(), 0);
  QpAttr qa;
  QpInitAttr qi;
  ASSERT_EQ(dev().QueryQp(qp, &qa, &qi), 0);
  ASSERT_EQ(p.depth(), qa.cap.max_send_wr) << "the depth the device granted (rxe rounds up)";
  ASSERT_LT(p.depth(), 16u) << "smaller than N: the SQ-filling WR must be signaled";
  size_t posted = 0;
  ASSERT_EQ(p.Post(Writes(1000), &posted), 0) << "a full SQ is waited for, never ENOMEM";
  EXPECT_EQ(posted, 1000u);
  ASSERT_EQ(p.WaitIdle(100 * kMs), 0);
  EXPECT_EQ(p.outstanding(), 0u);
  EXPECT_EQ(p.stats().posted, 1000u);
  EXPECT_EQ(p.stats().silent, 1000u) << "nothing was caller-signaled, nothing failed";
  EXPECT_TRUE(p.TakeCompletions().empty());
  EXPECT_GT(p.stats().reclaim_waits, 0u);
  EXPECT_LT(p.stats().signaled, 1000u);
  EXPECT_GE(p.stats().post_calls, 1000u / p.depth());
  ExpectAccounted(p);
}

TEST_F(BatchingTest, SignalsEveryNthAndTheLastOfTheCall) {
  QpHandle qp = MakeQp(128);
  BatchPoster p(&dev(), qp, BatchOptions{16});
  ASSERT_EQ(p.Init(), 0);
  size_t posted = 0;
  ASSERT_EQ(p.Post(Writes(70), &posted), 0);
  // WRs 16, 32, 48, 64 (every 16th) and 70 (the last of the call).
  EXPECT_EQ(p.stats().signaled, 5u);
  EXPECT_EQ(p.stats().post_calls, 1u) << "all 70 fit: one PostSend";
  ASSERT_EQ(p.WaitIdle(100 * kMs), 0);
  EXPECT_EQ(p.stats().cqes, 5u);
  ExpectAccounted(p);
}

TEST_F(BatchingTest, SignalEveryOneSignalsAll) {
  QpHandle qp = MakeQp(64);
  BatchPoster p(&dev(), qp, BatchOptions{1});
  ASSERT_EQ(p.Init(), 0);
  size_t posted = 0;
  ASSERT_EQ(p.Post(Writes(40), &posted), 0);
  EXPECT_EQ(p.stats().signaled, 40u);
  ASSERT_EQ(p.WaitIdle(100 * kMs), 0);
  EXPECT_EQ(p.stats().cqes, 40u);
}

TEST_F(BatchingTest, MaxPerCallLimitsWrsPerPostSend) {
  QpHandle qp = MakeQp(64);
  BatchPoster p(&dev(), qp, BatchOptions{16, /*max_per_call=*/1});
  ASSERT_EQ(p.Init(), 0);
  size_t posted = 0;
  ASSERT_EQ(p.Post(Writes(32), &posted), 0);
  EXPECT_EQ(p.stats().post_calls, 32u);
  ASSERT_EQ(p.WaitIdle(100 * kMs), 0);
  ExpectAccounted(p);
}

TEST_F(BatchingTest, CallerSignaledWrsComeBackWithTheirOwnWrIds) {
  QpHandle qp = MakeQp(16);
  BatchPoster p(&dev(), qp, BatchOptions{16});
  ASSERT_EQ(p.Init(), 0);
  std::vector<SendWr> wrs = Writes(50);
  for (size_t i = 0; i < wrs.size(); ++i) {
    wrs[i].wr_id = 42;  // duplicates are fine: the tracker keys by its own sequence
    if (i % 7 == 0) wrs[i].send_flags |= send_flag::kSignaled;
  }
  size_t posted = 0;
  ASSERT_EQ(p.Post(wrs, &posted), 0);
  ASSERT_EQ(p.WaitIdle(100 * kMs), 0);
  std::vector<WorkCompletion> wcs = p.TakeCompletions();
  ASSERT_EQ(wcs.size(), 8u);  // i = 0, 7, ..., 49
  for (const auto& wc : wcs) {
    EXPECT_EQ(wc.wr_id, 42u);
    EXPECT_EQ(wc.status, WcStatus::kSuccess);
  }
  EXPECT_EQ(p.stats().silent, 42u);
  ExpectAccounted(p);
}

TEST_F(BatchingTest, ErrorMidBatchAccountsEveryWrExactlyOnce) {
  QpHandle qp = MakeQp(32);
  BatchPoster p(&dev(), qp, BatchOptions{16});
  ASSERT_EQ(p.Init(), 0);
  std::vector<SendWr> wrs = Writes(100);
  wrs[40].rkey ^= 0xff00;  // REM_ACCESS_ERR: the QP goes to ERR, later WRs are flushed
  size_t posted = 0;
  int err = p.Post(wrs, &posted);
  // Posting to a QP in ERR is allowed (R3: flushed at once), so all 100 are posted.
  ASSERT_EQ(err, 0);
  ASSERT_EQ(posted, 100u);
  ASSERT_EQ(p.WaitIdle(100 * kMs), 0);
  std::vector<WorkCompletion> wcs = p.TakeCompletions();
  ASSERT_EQ(wcs.size(), 60u) << "the failed WR and the 59 after it";
  EXPECT_EQ(wcs[0].wr_id, 1040u);
  EXPECT_EQ(wcs[0].status, WcStatus::kRemAccessErr);
  std::set<uint64_t> ids;
  for (size_t i = 1; i < wcs.size(); ++i) {
    EXPECT_EQ(wcs[i].status, WcStatus::kWrFlushErr);
    ids.insert(wcs[i].wr_id);
  }
  EXPECT_EQ(ids.size(), 59u);
  EXPECT_EQ(*ids.begin(), 1041u);
  EXPECT_EQ(*ids.rbegin(), 1099u);
  EXPECT_EQ(p.stats().silent, 40u) << "the 40 before the error completed without CQE";
  ExpectAccounted(p);
}

TEST_F(BatchingTest, RecoveryDrainTargetAndAbsorbCloseTheBooks) {
  QpHandle qp = MakeQp(32);
  BatchPoster p(&dev(), qp, BatchOptions{16});
  ASSERT_EQ(p.Init(), 0);
  std::vector<SendWr> wrs = Writes(20);
  wrs[5].rkey ^= 0xff00;
  size_t posted = 0;
  ASSERT_EQ(p.Post(wrs, &posted), 0);
  // No polling by the poster: recovery drains the CQ and hands the CQEs back.
  RecoveryOptions opts;
  opts.outstanding = p.DrainTarget();
  ASSERT_TRUE(opts.outstanding.last_send_wr_id.has_value());
  RecoveryResult r;
  StoredConnection conn = conns_[qp.id];
  ASSERT_EQ(RecoverQp(*env_.backend, dev(), qp, &conn, peer_.get(), opts, &r), 0);
  p.Absorb(r.drained);
  EXPECT_EQ(p.outstanding(), 0u);
  ExpectAccounted(p);
  // The recovered QP takes a new batch.
  ASSERT_EQ(p.Post(Writes(10, 5000), &posted), 0);
  ASSERT_EQ(p.WaitIdle(100 * kMs), 0);
  ExpectAccounted(p);
}

TEST_F(BatchingTest, SqSigAllQpDeliversEveryCompletion) {
  QpHandle qp = MakeQp(16, /*sig_all=*/true);
  BatchPoster p(&dev(), qp, BatchOptions{16});
  ASSERT_EQ(p.Init(), 0);
  size_t posted = 0;
  ASSERT_EQ(p.Post(Writes(30), &posted), 0);
  ASSERT_EQ(p.WaitIdle(100 * kMs), 0);
  EXPECT_EQ(p.TakeCompletions().size(), 30u);
  ExpectAccounted(p);
}

TEST_F(BatchingTest, OtherQpsCompletionsAreKeptForTheCaller) {
  QpHandle qp = MakeQp(16);
  QpHandle other = MakeQp(16);  // same send CQ
  size_t bad = 0;
  ASSERT_EQ(dev().PostSend(other, {WriteWr(env_.local, env_.peer, 77, 0, 8, true)}, &bad), 0);
  BatchPoster p(&dev(), qp, BatchOptions{16});
  ASSERT_EQ(p.Init(), 0);
  size_t posted = 0;
  ASSERT_EQ(p.Post(Writes(5), &posted), 0);
  ASSERT_EQ(p.WaitIdle(100 * kMs), 0);
  env_.backend->Advance(kMs);
  ASSERT_EQ(p.Poll(), 0);
  std::vector<WorkCompletion> others = p.TakeOthers();
  ASSERT_EQ(others.size(), 1u);
  EXPECT_EQ(others[0].wr_id, 77u);
}

TEST_F(BatchingTest, BadSetupIsEinval) {
  BatchPoster bad_qp(&dev(), QpHandle{999}, BatchOptions{});
  EXPECT_EQ(bad_qp.Init(), EINVAL);
  QpHandle qp = MakeQp(8);
  BatchPoster zero_n(&dev(), qp, BatchOptions{0});
  EXPECT_EQ(zero_n.Init(), EINVAL);
  size_t posted = 0;
  EXPECT_EQ(zero_n.Post(Writes(1), &posted), EINVAL) << "not initialised";
  BatchPoster ok(&dev(), qp, BatchOptions{});
  ASSERT_EQ(ok.Init(), 0);
  EXPECT_EQ(ok.Post(Writes(1), nullptr), EINVAL);
}

}  // namespace
}  // namespace qptwin::practice
