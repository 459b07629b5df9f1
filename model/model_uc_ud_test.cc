// UC and UD on the model: no ACKs, silent drops, datagrams with Q_Key and GRH; and the
// ibta profile's SQE for unreliable send errors (R8).
#include <cstring>

#include "tests/support/support.h"

namespace qptwin::model::testing {
namespace {

using namespace ::qptwin::testing;  // tests/support/support.h

SideOptions Type(QpType t) {
  SideOptions o;
  o.type = t;
  return o;
}

TEST(Uc, SendAndWriteMoveBytesWithoutAcks) {
  auto [be, a, b] = ConnectedSides(RxeModel(), Type(QpType::kUc));
  std::memcpy(a.buf, "unreliable-connected", 20);
  ASSERT_EQ(b.dev->PostRecv(b.qp, {Rwr(1, {b.At(0, 100)})}, nullptr), 0);
  SendWr w = RemoteWr(2, WrOpcode::kRdmaWrite, a.At(0, 20), b, 500);
  ASSERT_EQ(a.dev->PostSend(a.qp, {Wr(1, WrOpcode::kSend, {a.At(0, 20)}), w}, nullptr), 0);
  auto swc = Wait(a, a.scq, 2);
  EXPECT_EQ(swc[0].status, WcStatus::kSuccess);
  EXPECT_EQ(swc[1].opcode, WcOpcode::kRdmaWrite);
  auto rwc = Wait(b, b.rcq, 1);
  EXPECT_EQ(rwc[0].byte_len, 20u);
  be->Advance(100000);
  EXPECT_EQ(std::memcmp(b.buf, "unreliable-connected", 20), 0);
  EXPECT_EQ(std::memcmp(b.buf + 500, "unreliable-connected", 20), 0);
}

TEST(IbtaProfile, UcReadAndAtomicsAreEinvalAtPost) {
  auto [be, a, b] = ConnectedSides(MakeBackendOrSkip(ModelChoice("ibta")), Type(QpType::kUc));
  ASSERT_NE(be, nullptr);
  size_t bad = 5;
  EXPECT_EQ(a.dev->PostSend(a.qp, {Wr(1, WrOpcode::kRdmaRead, {a.At(0, 8)})}, &bad), EINVAL);
  EXPECT_EQ(a.dev->PostSend(a.qp, {Wr(1, WrOpcode::kAtomicFetchAndAdd, {a.At(0, 8)})}, &bad), EINVAL);
  EXPECT_EQ(bad, 0u);
  EXPECT_EQ(StateOf(a), QpState::kRts);
}

// Behaviour::opcode_checked_by_requester: rxe's provider accepts the post; the requester
// completes it with LOC_QP_OP_ERR and the QP goes to ERR (no SQE on rxe).
TEST(RxeProfile, UcReadIsAcceptedThenFailsWithLocQpOpErr) {
  auto [be, a, b] = ConnectedSides(RxeModel(), Type(QpType::kUc));
  SendWr w = RemoteWr(1, WrOpcode::kRdmaRead, a.At(0, 8), b, 0);
  size_t bad = 5;
  ASSERT_EQ(a.dev->PostSend(a.qp, {w, Wr(2, WrOpcode::kSend, {a.At(0, 8)})}, &bad), 0);
  auto wc = Wait(a, a.scq, 2);
  EXPECT_EQ(wc[0].wr_id, 1u);
  EXPECT_EQ(wc[0].status, WcStatus::kLocQpOpErr);
  EXPECT_EQ(wc[1].wr_id, 2u);
  EXPECT_EQ(wc[1].status, WcStatus::kWrFlushErr);
  EXPECT_EQ(StateOf(a), QpState::kErr);
}

TEST(Uc, NoReceiveOrBadRkeyDropsSilentlyAndSenderSucceeds) {
  auto [be, a, b] = ConnectedSides(RxeModel(), Type(QpType::kUc));
  SendWr w = Wr(2, WrOpcode::kRdmaWrite, {a.At(0, 8)});
  w.remote_addr = b.Addr(0);
  w.rkey = b.rkey + 1;
  ASSERT_EQ(a.dev->PostSend(a.qp, {Wr(1, WrOpcode::kSend, {a.At(0, 8)}), w}, nullptr), 0);
  auto swc = Wait(a, a.scq, 2);
  EXPECT_EQ(swc[0].status, WcStatus::kSuccess);  // R17: UC drops, no RNR
  EXPECT_EQ(swc[1].status, WcStatus::kSuccess);  // R15: UC drops silently
  be->Advance(1000000);
  EXPECT_EQ(StateOf(b), QpState::kRts);
  // The receiver still works for the next message.
  ASSERT_EQ(b.dev->PostRecv(b.qp, {Rwr(9, {b.At(0, 8)})}, nullptr), 0);
  ASSERT_EQ(a.dev->PostSend(a.qp, {Wr(3, WrOpcode::kSend, {a.At(0, 8)})}, nullptr), 0);
  EXPECT_EQ(Wait(b, b.rcq, 1)[0].wr_id, 9u);
}

class UdTest : public ::testing::Test {
 protected:
  void SetUp() override {
    be_ = RxeModel();
    a_ = MakeSide(*be_, "mdev0", Type(QpType::kUd));
    b_ = MakeSide(*be_, "mdev1", Type(QpType::kUd));
    Connect(a_, b_);
    ConnectionInfo info;
    ASSERT_EQ(b_.dev->LocalConnectionInfo(b_.qp, &info), 0);
    ASSERT_EQ(a_.dev->CreateAh(a_.pd, AddressTo(info, 1), &ah_), 0);
  }
  SendWr Datagram(uint64_t id, uint32_t len, uint32_t qkey = 0x11111111) {
    SendWr w = Wr(id, WrOpcode::kSend, {a_.At(0, len)});
    w.ah = ah_;
    w.remote_qpn = b_.qpn;
    w.remote_qkey = qkey;
    return w;
  }
  std::unique_ptr<Backend> be_;
  Side a_, b_;
  AhHandle ah_;
};

TEST_F(UdTest, DatagramArrivesAfterA40ByteGrh) {
  std::memcpy(a_.buf, "datagram", 8);
  ASSERT_EQ(b_.dev->PostRecv(b_.qp, {Rwr(1, {b_.At(0, 1100)})}, nullptr), 0);
  ASSERT_EQ(a_.dev->PostSend(a_.qp, {Datagram(1, 8)}, nullptr), 0);
  auto rwc = Wait(b_, b_.rcq, 1);
  EXPECT_EQ(rwc[0].byte_len, 48u);
  EXPECT_EQ(rwc[0].src_qp, a_.qpn);
  EXPECT_EQ(rwc[0].wc_flags & wc_flag::kGrh, wc_flag::kGrh);
  EXPECT_EQ(std::memcmp(b_.buf + 40, "datagram", 8), 0);
  EXPECT_EQ(Wait(a_, a_.scq, 1)[0].status, WcStatus::kSuccess);
}

TEST_F(UdTest, WrongQkeyIsDropped) {
  ASSERT_EQ(b_.dev->PostRecv(b_.qp, {Rwr(1, {b_.At(0, 100)})}, nullptr), 0);
  ASSERT_EQ(a_.dev->PostSend(a_.qp, {Datagram(1, 8, 0x22)}, nullptr), 0);
  EXPECT_EQ(Wait(a_, a_.scq, 1)[0].status, WcStatus::kSuccess);
  be_->Advance(1000000);
  WorkCompletion wc;
  EXPECT_EQ(b_.dev->PollCq(b_.rcq, 1, &wc), 0);
}

TEST_F(UdTest, NoReceivePostedDropsTheDatagram) {
  ASSERT_EQ(a_.dev->PostSend(a_.qp, {Datagram(1, 8)}, nullptr), 0);
  EXPECT_EQ(Wait(a_, a_.scq, 1)[0].status, WcStatus::kSuccess);  // R17: UD drops, no RNR
  be_->Advance(1000000);
  ASSERT_EQ(b_.dev->PostRecv(b_.qp, {Rwr(1, {b_.At(0, 100)})}, nullptr), 0);
  be_->Advance(1000000);
  WorkCompletion wc;
  EXPECT_EQ(b_.dev->PollCq(b_.rcq, 1, &wc), 0);  // the datagram is gone, not queued
  EXPECT_EQ(StateOf(b_), QpState::kRts);
}

TEST_F(UdTest, WriteFailsWithLocQpOpErrOnRxeAndMissingAhIsEinval) {
  SendWr n = Datagram(1, 8);
  n.ah = AhHandle{};
  EXPECT_EQ(a_.dev->PostSend(a_.qp, {n}, nullptr), EINVAL);
  SendWr w = Datagram(2, 8);
  w.opcode = WrOpcode::kRdmaWrite;
  ASSERT_EQ(a_.dev->PostSend(a_.qp, {w}, nullptr), 0);  // Behaviour::opcode_checked_by_requester
  auto wc = Wait(a_, a_.scq, 1);
  EXPECT_EQ(wc[0].status, WcStatus::kLocQpOpErr);
  EXPECT_EQ(StateOf(a_), QpState::kErr);
}

TEST(IbtaProfile, UdLocalErrorMovesToSqeAndReceivesContinue) {
  auto [be, a, b] = ConnectedSides(MakeBackendOrSkip(ModelChoice("ibta")), Type(QpType::kUd));
  ASSERT_NE(be, nullptr);
  ConnectionInfo info;
  ASSERT_EQ(b.dev->LocalConnectionInfo(b.qp, &info), 0);
  EXPECT_EQ(info.link_layer, LinkLayer::kInfiniBand);
  AhHandle ah;
  ASSERT_EQ(a.dev->CreateAh(a.pd, AddressTo(info, 0), &ah), 0);
  SendWr bad = Wr(1, WrOpcode::kSend, {Sge{a.Addr(0), 8, a.lkey + 1}});
  bad.ah = ah;
  bad.remote_qpn = b.qpn;
  bad.remote_qkey = 0x11111111;
  SendWr next = bad;
  next.wr_id = 2;
  next.sg_list = {a.At(0, 8)};
  ASSERT_EQ(a.dev->PostSend(a.qp, {bad, next}, nullptr), 0);
  auto wc = Wait(a, a.scq, 2);
  EXPECT_EQ(wc[0].status, WcStatus::kLocProtErr);
  EXPECT_EQ(wc[1].status, WcStatus::kWrFlushErr);
  EXPECT_EQ(StateOf(a), QpState::kSqe);  // R8: IBTA C10-38
  // Receives continue in SQE.
  ConnectionInfo ainfo;
  ASSERT_EQ(a.dev->LocalConnectionInfo(a.qp, &ainfo), 0);
  AhHandle back;
  ASSERT_EQ(b.dev->CreateAh(b.pd, AddressTo(ainfo, 0), &back), 0);
  ASSERT_EQ(a.dev->PostRecv(a.qp, {Rwr(7, {a.At(100, 100)})}, nullptr), 0);
  SendWr reply = Wr(1, WrOpcode::kSend, {b.At(0, 8)});
  reply.ah = back;
  reply.remote_qpn = a.qpn;
  reply.remote_qkey = 0x11111111;
  ASSERT_EQ(b.dev->PostSend(b.qp, {reply}, nullptr), 0);
  EXPECT_EQ(Wait(a, a.rcq, 1)[0].wr_id, 7u);
  // SQE -> RTS recovers the send queue.
  QpAttr rts;
  rts.qp_state = QpState::kRts;
  ASSERT_EQ(a.dev->ModifyQp(a.qp, rts, attr::kState), 0);
  ASSERT_EQ(a.dev->PostSend(a.qp, {next}, nullptr), 0);
  EXPECT_EQ(Wait(a, a.scq, 1)[0].status, WcStatus::kSuccess);
}

// R8 for UC: a local send error moves a UC QP to SQE in the ibta profile (IBTA C10-38);
// receives continue, and SQE -> RTS resumes sending on the same connection.
TEST(IbtaProfile, UcLocalErrorMovesToSqeAndReceivesContinue) {
  auto [be, a, b] = ConnectedSides(MakeBackendOrSkip(ModelChoice("ibta")), Type(QpType::kUc));
  ASSERT_NE(be, nullptr);
  SendWr bad = Wr(1, WrOpcode::kSend, {Sge{a.Addr(0), 8, a.lkey + 1}});
  SendWr next = Wr(2, WrOpcode::kSend, {a.At(0, 8)});
  ASSERT_EQ(a.dev->PostSend(a.qp, {bad, next}, nullptr), 0);
  auto wc = Wait(a, a.scq, 2);
  EXPECT_EQ(wc[0].status, WcStatus::kLocProtErr);
  EXPECT_EQ(wc[1].status, WcStatus::kWrFlushErr);
  EXPECT_EQ(StateOf(a), QpState::kSqe);
  ASSERT_EQ(a.dev->PostRecv(a.qp, {Rwr(7, {a.At(100, 100)})}, nullptr), 0);
  ASSERT_EQ(b.dev->PostSend(b.qp, {Wr(9, WrOpcode::kSend, {b.At(0, 8)})}, nullptr), 0);
  EXPECT_EQ(Wait(a, a.rcq, 1)[0].wr_id, 7u);
  QpAttr rts;
  rts.qp_state = QpState::kRts;
  ASSERT_EQ(a.dev->ModifyQp(a.qp, rts, attr::kState), 0);
  ASSERT_EQ(b.dev->PostRecv(b.qp, {Rwr(8, {b.At(100, 100)})}, nullptr), 0);
  ASSERT_EQ(a.dev->PostSend(a.qp, {next}, nullptr), 0);
  EXPECT_EQ(Wait(a, a.scq, 1)[0].status, WcStatus::kSuccess);
  EXPECT_EQ(Wait(b, b.rcq, 1)[0].wr_id, 8u);
}

// rxe never enters SQE: the same UC error moves the QP to ERR.
TEST(RxeProfile, UcLocalErrorMovesToErrNotSqe) {
  auto [be, a, b] = ConnectedSides(RxeModel(), Type(QpType::kUc));
  SendWr bad = Wr(1, WrOpcode::kSend, {Sge{a.Addr(0), 8, a.lkey + 1}});
  ASSERT_EQ(a.dev->PostSend(a.qp, {bad}, nullptr), 0);
  // An lkey naming no MR: LOC_QP_OP_ERR on rxe (Behaviour::unresolved_lkey_is_qp_op_err).
  EXPECT_EQ(Wait(a, a.scq, 1)[0].status, WcStatus::kLocQpOpErr);
  EXPECT_EQ(StateOf(a), QpState::kErr);
}

TEST(IbtaProfile, SqDrainedOnlyWithEnSqdAsyncNotify) {
  auto be = MakeBackendOrSkip(ModelChoice("ibta"));
  for (bool notify : {false, true}) {
    Side a = MakeSide(*be, "mdev0");
    Side b = MakeSide(*be, "mdev1");
    Connect(a, b);
    QpAttr at;
    at.qp_state = QpState::kSqd;
    at.en_sqd_async_notify = notify;
    ASSERT_EQ(a.dev->ModifyQp(a.qp, at, attr::kState | attr::kEnSqdAsyncNotify), 0);
    EXPECT_EQ(a.dev->WaitForAsyncEvent(EventType::kSqDrained, a.qp, 1000000), notify ? 0 : ETIMEDOUT);
    QpAttr q;
    ASSERT_EQ(a.dev->QueryQp(a.qp, &q, nullptr), 0);
    EXPECT_FALSE(q.sq_draining);
  }
}

TEST(RxeProfile, SqDrainedEvenWithoutEnSqdAsyncNotify) {
  auto be = RxeModel();  // rxe_req.c raises IB_EVENT_SQ_DRAINED unconditionally
  Side a = MakeSide(*be, "mdev0");
  Side b = MakeSide(*be, "mdev1");
  Connect(a, b);
  QpAttr at;
  at.qp_state = QpState::kSqd;
  ASSERT_EQ(a.dev->ModifyQp(a.qp, at, attr::kState), 0);
  EXPECT_EQ(a.dev->WaitForAsyncEvent(EventType::kSqDrained, a.qp, 1000000), 0);
}

TEST(RxeProfile, UdLocalErrorMovesToErrNotSqe) {
  auto [be, a, b] = ConnectedSides(RxeModel(), Type(QpType::kUd));
  ConnectionInfo info;
  ASSERT_EQ(b.dev->LocalConnectionInfo(b.qp, &info), 0);
  AhHandle ah;
  ASSERT_EQ(a.dev->CreateAh(a.pd, AddressTo(info, 1), &ah), 0);
  SendWr bad = Wr(1, WrOpcode::kSend, {Sge{a.Addr(0), 8, a.lkey + 1}}, 0);
  bad.ah = ah;
  bad.remote_qpn = b.qpn;
  ASSERT_EQ(a.dev->PostSend(a.qp, {bad}, nullptr), 0);
  EXPECT_EQ(Wait(a, a.scq, 1)[0].status, WcStatus::kLocQpOpErr);  // lkey naming no MR
  EXPECT_EQ(StateOf(a), QpState::kErr);  // R8: rxe never enters SQE
}

}  // namespace
}  // namespace qptwin::model::testing
