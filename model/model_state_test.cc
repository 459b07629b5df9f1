// The QP state machine on the model: legality + values (EINVAL/EOPNOTSUPP), posting in
// every state (R2, R4, R5), flush on ERR (R6, R7), discard on RESET (R9), SQD drain
// (R11, R12), LAST_WQE_REACHED with an SRQ, and the recorded history.
#include "tests/support/support.h"

namespace qptwin::model::testing {
namespace {

using namespace ::qptwin::testing;  // tests/support/support.h

class StateTest : public ::testing::Test {
 protected:
  void SetUp() override {
    be_ = RxeModel();
    a_ = MakeSide(*be_, "mdev0");
    b_ = MakeSide(*be_, "mdev1");
  }
  int ToErr(Side& s) {
    QpAttr at;
    at.qp_state = QpState::kErr;
    return s.dev->ModifyQp(s.qp, at, attr::kState);
  }
  int ToReset(Side& s) {
    QpAttr at;
    at.qp_state = QpState::kReset;
    return s.dev->ModifyQp(s.qp, at, attr::kState);
  }
  int Send(Side& s, uint64_t id, SendFlags f = send_flag::kSignaled) {
    size_t bad = 0;
    return s.dev->PostSend(s.qp, {Wr(id, WrOpcode::kSend, {s.At(0, 8)}, f)}, &bad);
  }
  int Recv(Side& s, uint64_t id) {
    size_t bad = 0;
    return s.dev->PostRecv(s.qp, {Rwr(id, {s.At(0, 8)})}, &bad);
  }
  std::unique_ptr<Backend> be_;
  Side a_, b_;
};

TEST_F(StateTest, PostingInEveryStateOfAnRcQp) {
  // state, post_send errno, post_recv errno, and whether accepted WRs flush at once.
  struct Row {
    QpState state;
    int send;
    int recv;
    bool flushed;
  };
  const Row rows[] = {
      {QpState::kReset, EINVAL, EINVAL, false}, {QpState::kInit, EINVAL, 0, false},
      {QpState::kRtr, EINVAL, 0, false},        {QpState::kRts, 0, 0, false},
      // rxe: a receive posted in ERR waits for the responder (model_quirks_test.cc).
      {QpState::kSqd, 0, 0, false},             {QpState::kErr, 0, 0, false},
  };
  Connect(a_, b_);  // b_ is the peer; a_ walks the states
  ASSERT_EQ(ToReset(a_), 0);
  uint64_t id = 1;
  for (const Row& r : rows) {
    QpAttr at;
    switch (r.state) {
      case QpState::kInit: ASSERT_EQ(ToInit(a_), 0); break;
      case QpState::kRtr: ASSERT_EQ(ToRtr(a_, b_), 0); break;
      case QpState::kRts: ASSERT_EQ(ToRts(a_), 0); break;
      case QpState::kSqd:
        at.qp_state = QpState::kSqd;
        ASSERT_EQ(a_.dev->ModifyQp(a_.qp, at, attr::kState), 0);
        break;
      case QpState::kErr: ASSERT_EQ(ToErr(a_), 0); break;
      default: break;
    }
    ASSERT_EQ(StateOf(a_), r.state);
    be_->Advance(1000000);
    WorkCompletion drain[64];
    while (a_.dev->PollCq(a_.scq, 64, drain) > 0) {}
    while (a_.dev->PollCq(a_.rcq, 64, drain) > 0) {}
    EXPECT_EQ(Send(a_, id++), r.send) << ToName(r.state);
    EXPECT_EQ(Recv(a_, id++), r.recv) << ToName(r.state);
    WorkCompletion wc;
    EXPECT_EQ(a_.dev->PollCq(a_.rcq, 1, &wc), r.flushed ? 1 : 0) << ToName(r.state);
    if (r.flushed) {
      EXPECT_EQ(wc.status, WcStatus::kWrFlushErr);
    }
  }
}

TEST_F(StateTest, FullQueueIsEnomemAndBadWrIndexesFirstUnposted) {
  Connect(a_, b_);
  // rxe grants 2^k - 1 entries for a request of 16 (rxe_queue_init).
  ASSERT_EQ(b_.cap.max_recv_wr, 31u);
  ASSERT_EQ(a_.cap.max_send_wr, 31u);
  const int depth = 31;
  std::vector<RecvWr> rwrs;
  for (int i = 0; i < depth + 1; ++i) rwrs.push_back(Rwr(100 + i, {b_.At(0, 8)}));
  size_t bad = 999;
  EXPECT_EQ(b_.dev->PostRecv(b_.qp, rwrs, &bad), ENOMEM);
  EXPECT_EQ(bad, static_cast<size_t>(depth));
  std::vector<SendWr> wrs;
  for (int i = 0; i < depth + 4; ++i) wrs.push_back(Wr(i, WrOpcode::kSend, {a_.At(0, 8)}));
  EXPECT_EQ(a_.dev->PostSend(a_.qp, wrs, &bad), ENOMEM);
  EXPECT_EQ(bad, static_cast<size_t>(depth));
  // R3: the WRs before bad_wr were posted and run; the rest left no trace.
  auto swc = Wait(a_, a_.scq, depth);
  EXPECT_EQ(swc.back().wr_id, depth - 1u);
  auto rwc = Wait(b_, b_.rcq, depth);
  EXPECT_EQ(rwc.back().wr_id, 100u + depth - 1);
  be_->Advance(1000000);
  WorkCompletion wc;
  EXPECT_EQ(a_.dev->PollCq(a_.scq, 1, &wc), 0);
}

TEST_F(StateTest, TooManySgesIsEinval) {
  Connect(a_, b_);
  size_t bad = 9;
  std::vector<Sge> five(5, a_.At(0, 1));
  EXPECT_EQ(a_.dev->PostSend(a_.qp, {Wr(1, WrOpcode::kSend, {}), Wr(2, WrOpcode::kSend, five)}, &bad),
            EINVAL);
  EXPECT_EQ(bad, 1u);
  EXPECT_EQ(a_.dev->PostRecv(a_.qp, {Rwr(1, five)}, &bad), EINVAL);
  EXPECT_EQ(bad, 0u);
}

TEST_F(StateTest, ErrFlushesEverythingInOrderIncludingUnsignaled) {
  Connect(a_, b_);
  // No receives on b: the first SEND is stuck in RNR retries (rnr_retry = 7).
  ASSERT_EQ(Send(a_, 1), 0);
  ASSERT_EQ(Send(a_, 2, 0), 0);  // unsignaled
  ASSERT_EQ(Send(a_, 3), 0);
  ASSERT_EQ(Recv(a_, 10), 0);
  ASSERT_EQ(Recv(a_, 11), 0);
  be_->Advance(100000);
  ASSERT_EQ(ToErr(a_), 0);
  auto swc = Wait(a_, a_.scq, 3);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(swc[i].wr_id, static_cast<uint64_t>(i + 1));
    EXPECT_EQ(swc[i].status, WcStatus::kWrFlushErr);
    EXPECT_EQ(swc[i].qp_num, a_.qpn);
  }
  auto rwc = Wait(a_, a_.rcq, 2);
  EXPECT_EQ(rwc[0].wr_id, 10u);
  EXPECT_EQ(rwc[1].wr_id, 11u);
  EXPECT_EQ(rwc[1].status, WcStatus::kWrFlushErr);
  // In ERR, new sends are flushed at once; rxe flushes a new receive when the responder
  // runs next (here: the ERR -> ERR modify). R4 / Behaviour::recv_in_err_waits.
  ASSERT_EQ(Send(a_, 4, 0), 0);
  ASSERT_EQ(Recv(a_, 12), 0);
  EXPECT_EQ(Wait(a_, a_.scq, 1)[0].wr_id, 4u);
  ASSERT_EQ(ToErr(a_), 0);
  EXPECT_EQ(Wait(a_, a_.rcq, 1)[0].wr_id, 12u);
}

TEST_F(StateTest, ResetDiscardsWithoutCompletions) {
  Connect(a_, b_);
  ASSERT_EQ(Send(a_, 1), 0);
  ASSERT_EQ(Recv(a_, 2), 0);
  ASSERT_EQ(ToReset(a_), 0);
  be_->Advance(10000000);
  WorkCompletion wc;
  EXPECT_EQ(a_.dev->PollCq(a_.scq, 1, &wc), 0);
  EXPECT_EQ(a_.dev->PollCq(a_.rcq, 1, &wc), 0);
  EXPECT_EQ(StateOf(a_), QpState::kReset);
}

TEST_F(StateTest, IllegalTransitionsAndBadValuesChangeNothing) {
  QpAttr at;
  at.qp_state = QpState::kRtr;
  EXPECT_EQ(a_.dev->ModifyQp(a_.qp, at, attr::kState), EINVAL);  // RESET->RTR
  at.qp_state = QpState::kErr;
  EXPECT_EQ(a_.dev->ModifyQp(a_.qp, at, attr::kState), EINVAL);  // RESET->ERR (Linux)
  EXPECT_EQ(a_.dev->ModifyQp(a_.qp, at, attr::kState | (1u << 21)), EOPNOTSUPP);  // rxe
  at.qp_state = QpState::kInit;
  at.port_num = 2;
  EXPECT_EQ(a_.dev->ModifyQp(a_.qp, at, attr::kState | attr::kPort | attr::kPkeyIndex |
                                           attr::kAccessFlags),
            EINVAL);  // no port 2
  at.qp_state = static_cast<QpState>(9);  // not a state at all
  EXPECT_EQ(a_.dev->ModifyQp(a_.qp, at, attr::kState), EINVAL);
  at.qp_state = QpState::kInit;
  at.cur_qp_state = static_cast<QpState>(200);
  EXPECT_EQ(a_.dev->ModifyQp(a_.qp, at, attr::kState | attr::kCurState), EINVAL);
  EXPECT_EQ(StateOf(a_), QpState::kReset);
  ASSERT_EQ(ToInit(a_), 0);
  QpAttr r;
  ConnectionInfo info;
  ASSERT_EQ(b_.dev->LocalConnectionInfo(b_.qp, &info), 0);
  r.qp_state = QpState::kRtr;
  r.ah_attr = AddressTo(info, 1);
  r.path_mtu = static_cast<Mtu>(6);  // not an ibv_mtu (rxe accepts up to max_mtu 4096)
  AttrMask m = attr::kState | attr::kAv | attr::kPathMtu | attr::kDestQpn | attr::kRqPsn |
               attr::kMaxDestRdAtomic | attr::kMinRnrTimer;
  EXPECT_EQ(a_.dev->ModifyQp(a_.qp, r, m), EINVAL);
  r.path_mtu = Mtu::k1024;
  r.ah_attr.is_global = false;  // RoCE needs a GRH
  EXPECT_EQ(a_.dev->ModifyQp(a_.qp, r, m), EINVAL);
  EXPECT_EQ(StateOf(a_), QpState::kInit);
}

TEST_F(StateTest, SqdDrainsInFlightThenRaisesSqDrained) {
  // The ibta profile: on rxe a post's exchange has run when ibv_post_send returns
  // (Behaviour::post_send_runs_to_completion), so nothing would be in flight at the SQD.
  ModelOptions o;
  o.profile = "ibta";
  be_ = MakeModelBackend(o);
  a_ = MakeSide(*be_, "mdev0");
  b_ = MakeSide(*be_, "mdev1");
  Connect(a_, b_);
  for (int i = 0; i < 4; ++i) ASSERT_EQ(Recv(b_, 100 + i), 0);
  ASSERT_EQ(Send(a_, 1), 0);
  ASSERT_EQ(Send(a_, 2), 0);
  be_->Advance(600);  // both started, neither acknowledged yet (ibta timing)
  QpAttr at;
  at.qp_state = QpState::kSqd;
  at.en_sqd_async_notify = true;
  ASSERT_EQ(a_.dev->ModifyQp(a_.qp, at, attr::kState | attr::kEnSqdAsyncNotify), 0);
  QpAttr q;
  ASSERT_EQ(a_.dev->QueryQp(a_.qp, &q, nullptr), 0);
  EXPECT_TRUE(q.sq_draining);
  // R12: leaving SQD while draining is refused.
  QpAttr rts;
  rts.qp_state = QpState::kRts;
  EXPECT_EQ(a_.dev->ModifyQp(a_.qp, rts, attr::kState), EINVAL);
  ASSERT_EQ(Send(a_, 3), 0);  // posting in SQD is allowed, it does not start
  ASSERT_EQ(a_.dev->WaitForAsyncEvent(EventType::kSqDrained, a_.qp, 100000000), 0);
  auto swc = Wait(a_, a_.scq, 2);
  EXPECT_EQ(swc[1].wr_id, 2u);
  be_->Advance(1000000);
  WorkCompletion wc;
  EXPECT_EQ(a_.dev->PollCq(a_.scq, 1, &wc), 0);  // WR 3 waits in SQD
  ASSERT_EQ(a_.dev->QueryQp(a_.qp, &q, nullptr), 0);
  EXPECT_FALSE(q.sq_draining);
  ASSERT_EQ(a_.dev->ModifyQp(a_.qp, rts, attr::kState), 0);
  // ibta: SQD -> RTS starts WR 3 (rxe waits for the next doorbell:
  // Behaviour::rts_waits_for_doorbell, examples/fidelity/08, conformance
  // WrQueuedInSqdStartsInRtsOrAtTheNextDoorbell).
  ASSERT_EQ(Send(a_, 4), 0);
  auto after = Wait(a_, a_.scq, 2);
  EXPECT_EQ(after[0].wr_id, 3u);
  EXPECT_EQ(after[1].wr_id, 4u);
  auto events = a_.dev->TakeAsyncEvents();
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].type, EventType::kSqDrained);
  EXPECT_EQ(events[0].qp, a_.qp);
}

// rxe on Linux 6.1 raises no LAST_WQE_REACHED (measured in the rxe VM, hw/README.md;
// Behaviour::last_wqe_reached_event); the ibta profile's event is checked by
// tests/conformance (SrqQpEnteringErrRaisesLastWqeReachedAsTheDeviceDoes).
TEST_F(StateTest, SrqQpEnteringErrRaisesNoLastWqeReachedOnRxe) {
  SrqHandle srq;
  ASSERT_EQ(b_.dev->CreateSrq(b_.pd, 8, 2, &srq), 0);
  QpInitAttr init;
  init.qp_type = QpType::kRc;
  init.pd = b_.pd;
  init.send_cq = b_.scq;
  init.recv_cq = b_.rcq;
  init.srq = srq;
  init.cap = QpCap{4, 0, 1, 0, 0};
  Side s = SiblingQp(b_, init);
  EXPECT_EQ(b_.dev->DestroySrq(srq), EBUSY);
  size_t bad = 0;
  EXPECT_EQ(s.dev->PostRecv(s.qp, {Rwr(1, {})}, &bad), EINVAL);  // R4: QP with an SRQ
  ASSERT_EQ(ToInit(s), 0);
  ASSERT_EQ(ToErr(s), 0);
  EXPECT_EQ(s.dev->WaitForAsyncEvent(EventType::kQpLastWqeReached, s.qp, 1000), ETIMEDOUT);
  ASSERT_EQ(s.dev->DestroyQp(s.qp), 0);
  EXPECT_EQ(s.dev->DestroySrq(srq), 0);
}

TEST_F(StateTest, HistoryRecordsEveryChangeWithCause) {
  Connect(a_, b_);
  QpAttr at;
  at.qp_state = QpState::kErr;
  ASSERT_EQ(a_.dev->ModifyQp(a_.qp, at, attr::kState), 0);
  std::vector<StateChange> h;
  ASSERT_EQ(a_.dev->QpHistory(a_.qp, &h), 0);
  ASSERT_EQ(h.size(), 5u);  // create, INIT, RTR, RTS, ERR
  EXPECT_EQ(h[1].to, QpState::kInit);
  EXPECT_EQ(h[3].to, QpState::kRts);
  EXPECT_EQ(h[4].from, QpState::kRts);
  EXPECT_EQ(h[4].to, QpState::kErr);
  EXPECT_EQ(h[4].cause, "modify");
}

}  // namespace
}  // namespace qptwin::model::testing
