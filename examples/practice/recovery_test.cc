#include "examples/practice/recovery.h"

#include <gtest/gtest.h>

#include <cerrno>

#include "examples/practice/test_env.h"

namespace qptwin::practice {
namespace {

class RecoveryTest : public EnvTest {
 protected:
  void SetUp() override {
    EnvTest::SetUp();
    if (HasFatalFailure()) return;
    qp_ = ConnectedQp(&conn_);
  }
  // A WRITE that the peer refuses (bad rkey): REM_ACCESS_ERR, the QP goes to ERR.
  SendWr BadWrite(uint64_t wr_id, bool signaled) {
    SendWr wr = WriteWr(env_.local, env_.peer, wr_id, 0, 64, signaled);
    wr.rkey ^= 0xff00;
    return wr;
  }
  // Posts and lets `run_ns` of time pass (the error happens; its CQEs wait in the CQ).
  void PostAndFail(std::vector<SendWr> wrs, uint64_t run_ns = 10 * kMs) {
    size_t bad = 0;
    ASSERT_EQ(dev().PostSend(qp_, wrs, &bad), 0);
    env_.backend->Advance(run_ns);
  }
  void ExpectWriteWorks(QpHandle qp) {
    size_t bad = 0;
    ASSERT_EQ(dev().PostSend(qp, {WriteWr(env_.local, env_.peer, 99, 128, 32, true)}, &bad), 0);
    std::vector<WorkCompletion> wcs;
    ASSERT_EQ(dev().WaitForCompletions(env_.local.scq, 1, 100 * kMs, &wcs), 0);
    EXPECT_EQ(wcs[0].wr_id, 99u);
    EXPECT_EQ(wcs[0].status, WcStatus::kSuccess);
  }

  QpHandle qp_;
  StoredConnection conn_;
};

TEST_F(RecoveryTest, ResetModeKeepsQpNumberAndEveryWrIsAccounted) {
  PostAndFail({WriteWr(env_.local, env_.peer, 1, 0, 64, true), BadWrite(2, true),
               WriteWr(env_.local, env_.peer, 3, 0, 64, true),
               WriteWr(env_.local, env_.peer, 4, 0, 64, true)});
  RecoveryOptions opts;
  opts.outstanding.send_cqes = 4;
  RecoveryResult r;
  ASSERT_EQ(RecoverQp(*env_.backend, dev(), qp_, &conn_, peer_.get(), opts, &r), 0);
  ASSERT_EQ(r.drained.size(), 4u);
  EXPECT_EQ(r.drained[0].status, WcStatus::kSuccess);
  EXPECT_EQ(r.drained[1].status, WcStatus::kRemAccessErr);
  EXPECT_EQ(r.drained[2].status, WcStatus::kWrFlushErr);
  EXPECT_EQ(r.drained[3].status, WcStatus::kWrFlushErr);
  EXPECT_TRUE(r.others.empty());
  EXPECT_EQ(r.qp, qp_);
  EXPECT_EQ(r.qp_num, r.old_qp_num);
  EXPECT_EQ(StateOf(qp_), QpState::kRts);
  ExpectWriteWorks(qp_);
}

TEST_F(RecoveryTest, RecreateModeGivesNewQpNumberAndPeerReconnects) {
  PostAndFail({BadWrite(1, true)});
  RecoveryOptions opts;
  opts.mode = RecoveryMode::kRecreate;
  opts.outstanding.send_cqes = 1;
  RecoveryResult r;
  uint32_t old_peer_qpn = conn_.remote.qp_num;
  ASSERT_EQ(RecoverQp(*env_.backend, dev(), qp_, &conn_, peer_.get(), opts, &r), 0);
  EXPECT_NE(r.qp, qp_);
  EXPECT_NE(r.qp_num, r.old_qp_num);
  EXPECT_FALSE(peer_->PeerOf(r.old_qp_num));
  EXPECT_TRUE(peer_->PeerOf(r.qp_num));
  EXPECT_NE(conn_.remote.qp_num, old_peer_qpn);
  uint32_t n = 0;
  EXPECT_EQ(dev().QpNum(qp_, &n), EINVAL) << "the old QP is destroyed";
  EXPECT_EQ(StateOf(r.qp), QpState::kRts);
  ExpectWriteWorks(r.qp);
}

TEST_F(RecoveryTest, SelectiveSignalingDrainsUntilNewestSignaledWr) {
  // Unsignaled successes produce no CQE; after the error every WR gets one (IBTA 10.7.3.1).
  PostAndFail({WriteWr(env_.local, env_.peer, 1, 0, 64, false),
               WriteWr(env_.local, env_.peer, 2, 0, 64, false), BadWrite(3, false),
               WriteWr(env_.local, env_.peer, 4, 0, 64, false),
               WriteWr(env_.local, env_.peer, 5, 0, 64, true)});
  RecoveryOptions opts;
  opts.outstanding.last_send_wr_id = 5;
  RecoveryResult r;
  ASSERT_EQ(RecoverQp(*env_.backend, dev(), qp_, &conn_, peer_.get(), opts, &r), 0);
  ASSERT_EQ(r.drained.size(), 3u);
  EXPECT_EQ(r.drained[0].wr_id, 3u);
  EXPECT_EQ(r.drained[0].status, WcStatus::kRemAccessErr);
  EXPECT_EQ(r.drained[1].wr_id, 4u);
  EXPECT_EQ(r.drained[2].wr_id, 5u);
  EXPECT_EQ(StateOf(qp_), QpState::kRts);
}

// WRs still queued at the recovery: on rxe a post's WRITEs have completed when ibv_post_send
// returns (Behaviour::post_send_runs_to_completion); the ibta profile keeps them queued.
class RecoveryQueuedTest : public RecoveryTest {
 protected:
  void SetUp() override {
    profile_ = "ibta";
    RecoveryTest::SetUp();
  }
};

TEST_F(RecoveryQueuedTest, HealthyQpWithQueuedWorkIsFlushedNotDiscarded) {
  // Recovery of an RTS QP: WRs still queued are flushed by ERR before RESET (R6 before R9).
  PostAndFail({WriteWr(env_.local, env_.peer, 1, 0, 64, true),
               WriteWr(env_.local, env_.peer, 2, 0, 64, true)},
              /*run_ns=*/0);
  RecoveryOptions opts;
  opts.outstanding.send_cqes = 2;
  RecoveryResult r;
  ASSERT_EQ(RecoverQp(*env_.backend, dev(), qp_, &conn_, peer_.get(), opts, &r), 0);
  ASSERT_EQ(r.drained.size(), 2u);
  for (const auto& wc : r.drained) EXPECT_EQ(wc.status, WcStatus::kWrFlushErr);
  ExpectWriteWorks(qp_);
}

TEST_F(RecoveryTest, DrainTimeoutLeavesQpInErrAndReturnsWhatArrived) {
  PostAndFail({BadWrite(1, true)});
  RecoveryOptions opts;
  opts.outstanding.send_cqes = 3;  // more than were posted: never satisfied
  opts.drain_timeout_ns = 5 * kMs;
  RecoveryResult r;
  uint64_t t0 = env_.backend->NowNs();
  EXPECT_EQ(RecoverQp(*env_.backend, dev(), qp_, &conn_, peer_.get(), opts, &r), ETIMEDOUT);
  EXPECT_GE(env_.backend->NowNs() - t0, 5 * kMs);
  EXPECT_EQ(r.drained.size(), 1u);
  EXPECT_EQ(StateOf(qp_), QpState::kErr);
}

TEST_F(RecoveryTest, OtherQpsCompletionsOnSharedCqAreHandedBack) {
  QpHandle other;
  ASSERT_EQ(dev().CreateQp(env_.local.Init(), &other, nullptr), 0);
  StoredConnection oc;
  ASSERT_EQ(ConnectThroughPeer(dev(), other, *peer_, &oc), 0);
  size_t bad = 0;
  ASSERT_EQ(dev().PostSend(other, {WriteWr(env_.local, env_.peer, 50, 0, 8, true)}, &bad), 0);
  env_.backend->Advance(kMs);  // the other QP's CQE is now in the shared CQ
  PostAndFail({BadWrite(1, true)});
  RecoveryOptions opts;
  opts.outstanding.send_cqes = 1;
  RecoveryResult r;
  ASSERT_EQ(RecoverQp(*env_.backend, dev(), qp_, &conn_, peer_.get(), opts, &r), 0);
  ASSERT_EQ(r.others.size(), 1u);
  EXPECT_EQ(r.others[0].wr_id, 50u);
  ASSERT_EQ(r.drained.size(), 1u);
  EXPECT_EQ(r.drained[0].wr_id, 1u);
}

TEST_F(RecoveryTest, WithoutPeerUsesStoredRemoteAndPeerMustReconnect) {
  PostAndFail({BadWrite(1, true)});
  RecoveryOptions opts;
  opts.outstanding.send_cqes = 1;
  RecoveryResult r;
  ASSERT_EQ(RecoverQp(*env_.backend, dev(), qp_, &conn_, nullptr, opts, &r), 0);
  EXPECT_EQ(StateOf(qp_), QpState::kRts);
  // The peer was not told: re-establish it now (as an out-of-band exchange would).
  ConnectionInfo li;
  ASSERT_EQ(dev().LocalConnectionInfo(qp_, &li), 0);
  ConnectionInfo again;
  ASSERT_EQ(peer_->Connect(li, conn_.params, &again), 0);
  EXPECT_EQ(again.qp_num, conn_.remote.qp_num);
  ExpectWriteWorks(qp_);
}

TEST_F(RecoveryTest, SeparateRecvCqDrainsReceiveFlushesToo) {
  CqHandle rcq;
  ASSERT_EQ(dev().CreateCq(64, ChannelHandle{}, &rcq, nullptr), 0);
  QpInitAttr init = env_.local.Init();
  init.recv_cq = rcq;
  QpHandle qp;
  ASSERT_EQ(dev().CreateQp(init, &qp, nullptr), 0);
  StoredConnection conn;
  ASSERT_EQ(ConnectThroughPeer(dev(), qp, *peer_, &conn), 0);
  size_t bad = 0;
  ASSERT_EQ(dev().PostRecv(qp, {Rwr(11, {env_.local.At(0, 64)}), Rwr(12, {env_.local.At(64, 64)}),
                                Rwr(13, {env_.local.At(128, 64)})},
                           &bad),
            0);
  SendWr wr = WriteWr(env_.local, env_.peer, 1, 0, 64, true);
  wr.rkey ^= 0xff00;
  ASSERT_EQ(dev().PostSend(qp, {wr}, &bad), 0);
  env_.backend->Advance(10 * kMs);
  RecoveryOptions opts;
  opts.outstanding.send_cqes = 1;
  opts.outstanding.recv_cqes = 3;
  RecoveryResult r;
  ASSERT_EQ(RecoverQp(*env_.backend, dev(), qp, &conn, peer_.get(), opts, &r), 0);
  ASSERT_EQ(r.drained.size(), 4u);
  int recv_flushes = 0;
  for (const auto& wc : r.drained) {
    if (wc.wr_id >= 11 && wc.wr_id <= 13 && wc.status == WcStatus::kWrFlushErr) ++recv_flushes;
  }
  EXPECT_EQ(recv_flushes, 3);
  QpState s;
  ASSERT_EQ(QueryState(dev(), qp, &s), 0);
  EXPECT_EQ(s, QpState::kRts);
}

TEST_F(RecoveryTest, BadArgumentsAreEinval) {
  RecoveryResult r;
  RecoveryOptions opts;
  EXPECT_EQ(RecoverQp(*env_.backend, dev(), QpHandle{4242}, &conn_, nullptr, opts, &r), EINVAL);
  EXPECT_EQ(RecoverQp(*env_.backend, dev(), qp_, nullptr, nullptr, opts, &r), EINVAL);
  EXPECT_EQ(RecoverQp(*env_.backend, dev(), qp_, &conn_, nullptr, opts, nullptr), EINVAL);
  EXPECT_EQ(StateOf(qp_), QpState::kRts);
}

}  // namespace
}  // namespace qptwin::practice
