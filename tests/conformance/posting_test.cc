// Posting rules (rdma-facts R2, R4, R5) and what a rejected post leaves behind.
#include <cstring>

#include "tests/conformance/fixture.h"

namespace qptwin::testing {
namespace {

QpCap CapOf(Device& dev, QpHandle qp) {
  QpAttr a;
  QpInitAttr init;
  EXPECT_EQ(dev.QueryQp(qp, &a, &init), 0);
  return init.cap;
}

// R2. With post_send_below_rts_queues (rxe) the refused WRs were queued all the same: bad_wr is
// the count; the move to RESET discards them without completions (R9).
TEST_P(Conformance, PostSendBelowRtsIsEinval) {
  Buffer b = Reg(4096, access::kLocalWrite);
  const size_t queued = GetParam().behaviour.post_send_below_rts_queues ? 2 : 0;
  for (QpType type : {QpType::kRc, QpType::kUc, QpType::kUd}) {
    QpHandle qp = Qp(type);
    AhHandle ah;
    if (type == QpType::kUd) {
      ASSERT_EQ(dev_->CreateAh(pd_, FullAttr(qp, {}).ah_attr, &ah), 0);
    }
    for (QpState s : {QpState::kReset, QpState::kInit, QpState::kRtr}) {
      Drive(type, qp, s);
      std::vector<SendWr> wrs = {Send(1, {b.At(0, 8)}), Send(2, {b.At(8, 8)})};
      for (SendWr& w : wrs) {
        w.ah = ah;
        w.remote_qkey = kQkey;
      }
      size_t bad = 99;
      EXPECT_EQ(dev_->PostSend(qp, wrs, &bad), EINVAL) << ToName(type) << " in " << ToName(s);
      EXPECT_EQ(bad, queued) << ToName(type) << " in " << ToName(s);
      QpAttr a;
      a.qp_state = QpState::kReset;
      ASSERT_EQ(dev_->ModifyQp(qp, a, attr::kState), 0);
    }
    ASSERT_EQ(dev_->DestroyQp(qp), 0);
    if (ah) {
      ASSERT_EQ(dev_->DestroyAh(ah), 0);
    }
  }
  EXPECT_TRUE(Drain(cq_).empty()) << "a refused or discarded post must not complete";
}

// spec/backend.h: bad_wr may be null; the post is the same, only the index is not reported.
TEST_P(Conformance, NullBadWrPostsTheSame) {
  Buffer b = Reg(4096, access::kLocalWrite);
  auto [qa, qb] = ConnectedPair(QpType::kRc);
  SrqHandle srq;
  ASSERT_EQ(dev_->CreateSrq(pd_, 4, 1, &srq), 0);
  EXPECT_EQ(dev_->PostRecv(qb, {Recv(1, {b.At(0, 64)})}, nullptr), 0);
  EXPECT_EQ(dev_->PostSrqRecv(srq, {Recv(2, {b.At(64, 64)})}, nullptr), 0);
  EXPECT_EQ(dev_->PostSend(qa, {Send(3, {b.At(128, 8)})}, nullptr), 0);
  std::vector<WorkCompletion> wcs = WaitWc(cq_, 2);
  ASSERT_EQ(wcs.size(), 2u);
  for (const WorkCompletion& wc : wcs) EXPECT_EQ(wc.status, WcStatus::kSuccess) << wc.wr_id;
  // A refused post says the same errno with or without bad_wr.
  QpHandle fresh = Qp(QpType::kRc);
  EXPECT_EQ(dev_->PostRecv(fresh, {Recv(4, {b.At(0, 64)})}, nullptr), EINVAL);  // R4: RESET
  EXPECT_EQ(dev_->PostSend(QpHandle{}, {Send(5, {b.At(0, 8)})}, nullptr), EINVAL);
  ASSERT_EQ(dev_->DestroyQp(fresh), 0);
  ASSERT_EQ(dev_->DestroySrq(srq), 0);
}

TEST_P(Conformance, PostRecvInResetIsEinvalAndAcceptedFromInit) {
  Buffer b = Reg(4096, access::kLocalWrite);
  QpHandle qp = Qp(QpType::kRc);
  size_t bad = 99;
  EXPECT_EQ(dev_->PostRecv(qp, {Recv(1, {b.At(0, 64)})}, &bad), EINVAL);
  EXPECT_EQ(bad, 0u);
  Drive(QpType::kRc, qp, QpState::kInit);
  EXPECT_EQ(dev_->PostRecv(qp, {Recv(2, {b.At(0, 64)})}, &bad), 0);
}

TEST_P(Conformance, FullReceiveQueueIsEnomemAtTheFirstWrThatDoesNotFit) {
  Buffer b = Reg(4096, access::kLocalWrite);
  QpHandle qp = Qp(QpType::kRc, 4, 4);
  Drive(QpType::kRc, qp, QpState::kInit);
  uint32_t depth = CapOf(*dev_, qp).max_recv_wr;
  ASSERT_GE(depth, 4u);
  std::vector<RecvWr> wrs;
  for (uint32_t i = 0; i < depth + 2; ++i) wrs.push_back(Recv(i, {b.At(0, 16)}));
  size_t bad = 0;
  EXPECT_EQ(dev_->PostRecv(qp, wrs, &bad), ENOMEM);
  EXPECT_EQ(bad, depth) << "WRs before bad_wr were posted";
  // Conservation: exactly `depth` receives are in the queue; moving to ERR flushes them all.
  QpAttr a;
  a.qp_state = QpState::kErr;
  ASSERT_EQ(dev_->ModifyQp(qp, a, attr::kState), 0);
  auto wcs = WaitWc(cq_, static_cast<int>(depth));
  ASSERT_EQ(wcs.size(), depth);
  for (uint32_t i = 0; i < depth; ++i) {
    EXPECT_EQ(wcs[i].wr_id, i);
    EXPECT_EQ(wcs[i].status, WcStatus::kWrFlushErr);
  }
  EXPECT_TRUE(Drain(cq_).empty());
}

TEST_P(Conformance, FullSendQueueIsEnomem) {
  Buffer b = Reg(4096, access::kLocalWrite);
  auto [qa, qb] = ConnectedPair(QpType::kRc);
  (void)qb;
  uint32_t depth = CapOf(*dev_, qa).max_send_wr;
  // Move to SQD? No: fill faster than the device drains is racy on hw. Use an RNR-stalled
  // peer instead: qb has no receives and rnr_retry 7 retries forever, so SENDs stay queued.
  std::vector<SendWr> wrs;
  for (uint32_t i = 0; i < depth + 1; ++i) wrs.push_back(Send(i, {b.At(0, 8)}));
  size_t bad = 0;
  EXPECT_EQ(dev_->PostSend(qa, wrs, &bad), ENOMEM);
  EXPECT_EQ(bad, depth);
  QpAttr a;
  a.qp_state = QpState::kErr;
  ASSERT_EQ(dev_->ModifyQp(qa, a, attr::kState), 0);
  auto wcs = WaitWc(cq_, static_cast<int>(depth));
  ASSERT_EQ(wcs.size(), depth);
  for (uint32_t i = 0; i < depth; ++i) EXPECT_EQ(wcs[i].wr_id, i) << "flush in posting order";
}

TEST_P(Conformance, TooManySgesIsEinval) {
  Buffer b = Reg(4096, access::kLocalWrite);
  QpHandle qp = Qp(QpType::kRc, 16, 16, 1);
  Drive(QpType::kRc, qp, QpState::kInit);
  QpCap cap = CapOf(*dev_, qp);
  std::vector<Sge> sges;
  for (uint32_t i = 0; i <= cap.max_recv_sge; ++i) sges.push_back(b.At(16 * i, 16));
  size_t bad = 99;
  EXPECT_EQ(dev_->PostRecv(qp, {Recv(1, {b.At(0, 16)}), Recv(2, sges)}, &bad), EINVAL);
  EXPECT_EQ(bad, 1u);
}

TEST_P(Conformance, IllegalCapsAreRejectedAtCreate) {
  QpInitAttr init;
  init.qp_type = QpType::kRc;
  init.pd = pd_;
  init.send_cq = cq_;
  init.recv_cq = cq_;
  init.cap.max_send_wr = static_cast<uint32_t>(dattr_.max_qp_wr) + 1;
  init.cap.max_recv_wr = 1;
  init.cap.max_send_sge = 1;
  init.cap.max_recv_sge = 1;
  QpHandle qp;
  QpCap actual;
  EXPECT_EQ(dev_->CreateQp(init, &qp, &actual), EINVAL);
  init.cap.max_send_wr = 1;
  init.cap.max_recv_sge = static_cast<uint32_t>(dattr_.max_sge) + 1;
  EXPECT_EQ(dev_->CreateQp(init, &qp, &actual), EINVAL);
}

TEST_P(Conformance, EachQpTypeQueriesResetAfterCreate) {
  for (QpType type : {QpType::kRc, QpType::kUc, QpType::kUd}) {
    QpHandle qp = Qp(type, 8, 8, 1);
    QpAttr a;
    QpInitAttr init;
    ASSERT_EQ(dev_->QueryQp(qp, &a, &init), 0);
    EXPECT_EQ(a.qp_state, QpState::kReset);
    EXPECT_EQ(init.qp_type, type);
    EXPECT_GE(init.cap.max_send_wr, 8u);
    EXPECT_GE(init.cap.max_recv_wr, 8u);
  }
}

// IBTA 9.8: an XRC_SEND QP reaches the XRC SRQ its WR names through an XRC_RECV QP of the
// SRQ's domain; the receive completes on the SRQ's CQ. Without XRC, OpenXrcd is EOPNOTSUPP.
TEST_P(Conformance, XrcSendReachesTheSrqItNamesOrXrcIsEopnotsupp) {
  XrcdHandle xrcd;
  int ret = dev_->OpenXrcd(&xrcd);
  if (!GetParam().behaviour.supports_xrc) {
    EXPECT_EQ(ret, EOPNOTSUPP);
    return;
  }
  ASSERT_EQ(ret, 0);
  CqHandle srq_cq = Cq();
  SrqInitAttr sa;
  sa.srq_type = SrqType::kXrc;
  sa.pd = pd_;
  sa.max_wr = 4;
  sa.max_sge = 1;
  sa.xrcd = xrcd;
  sa.cq = srq_cq;
  SrqHandle srq;
  uint32_t srqn = 0;
  ASSERT_EQ(dev_->CreateSrqEx(sa, &srq), 0);
  ASSERT_EQ(dev_->SrqNum(srq, &srqn), 0);
  QpInitAttr ti;
  ti.qp_type = QpType::kXrcRecv;
  ti.xrcd = xrcd;
  QpHandle tgt;
  ASSERT_EQ(dev_->CreateQp(ti, &tgt, nullptr), 0);
  QpInitAttr ii;
  ii.qp_type = QpType::kXrcSend;
  ii.pd = pd_;
  ii.send_cq = cq_;
  ii.cap = QpCap{4, 0, 1, 0, 0};
  QpHandle ini;
  ASSERT_EQ(dev_->CreateQp(ii, &ini, nullptr), 0);
  Drive(QpType::kXrcRecv, tgt, QpState::kRts, ini);
  Drive(QpType::kXrcSend, ini, QpState::kRts, tgt);
  Buffer b = Reg(256, access::kLocalWrite);
  std::memcpy(b.buf, "to the xrc srq", 14);
  size_t bad = 0;
  ASSERT_EQ(dev_->PostSrqRecv(srq, {Recv(9, {b.At(128, 64)})}, &bad), 0);
  SendWr w = Send(1, {b.At(0, 14)});
  w.remote_srqn = srqn;
  ASSERT_EQ(dev_->PostSend(ini, {w}, &bad), 0);
  auto sent = WaitWc(cq_, 1);
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_EQ(sent[0].status, WcStatus::kSuccess);
  auto got = WaitWc(srq_cq, 1);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].wr_id, 9u);
  EXPECT_EQ(got[0].byte_len, 14u);
  EXPECT_EQ(std::memcmp(b.buf + 128, "to the xrc srq", 14), 0);
  EXPECT_EQ(dev_->CloseXrcd(xrcd), EBUSY);
  ASSERT_EQ(dev_->DestroyQp(ini), 0);
  ASSERT_EQ(dev_->DestroyQp(tgt), 0);
  ASSERT_EQ(dev_->DestroySrq(srq), 0);
  EXPECT_EQ(dev_->CloseXrcd(xrcd), 0);
}

TEST_P(Conformance, BadHandlesAreEinval) {
  QpHandle qp = Qp(QpType::kRc);
  ASSERT_EQ(dev_->DestroyQp(qp), 0);
  QpAttr a;
  QpInitAttr init;
  EXPECT_EQ(dev_->QueryQp(qp, &a, &init), EINVAL);
  EXPECT_EQ(dev_->ModifyQp(qp, a, attr::kState), EINVAL);
  EXPECT_EQ(dev_->DestroyQp(qp), EINVAL);
  EXPECT_EQ(dev_->DestroyQp(QpHandle{}), EINVAL);
  EXPECT_EQ(dev_->DeallocPd(PdHandle{12345}), EINVAL);
  WorkCompletion wc;
  EXPECT_EQ(dev_->PollCq(CqHandle{999}, 1, &wc), -EINVAL);
}

TEST_P(Conformance, DestroyingResourcesInUseIsEbusy) {
  QpHandle qp = Qp(QpType::kRc);
  EXPECT_EQ(dev_->DestroyCq(cq_), EBUSY);
  EXPECT_EQ(dev_->DeallocPd(pd_), EBUSY);
  ASSERT_EQ(dev_->DestroyQp(qp), 0);
  EXPECT_EQ(dev_->DestroyCq(cq_), 0);
  cq_ = {};
}


// A receive that finds its queue full: ENOMEM before its SGE count is looked at where the
// device checks the room first (Behaviour::recv_full_checked_first: providers/rxe
// rxe_post_one_recv), else EINVAL for the SGEs; the same for an SRQ. examples/fidelity/20.
TEST_P(Conformance, AFullReceiveQueueAnswersBeforeTheSgeCountWhereTheDeviceDoes) {
  Buffer b = Reg(4096, access::kLocalWrite);
  QpHandle qp = Qp(QpType::kRc, 4, 4, 1);
  Drive(QpType::kRc, qp, QpState::kInit);
  const QpCap cap = CapOf(*dev_, qp);
  std::vector<RecvWr> fill;
  for (uint32_t i = 0; i < cap.max_recv_wr; ++i) fill.push_back(Recv(i, {b.At(0, 16)}));
  size_t bad = 99;
  ASSERT_EQ(dev_->PostRecv(qp, fill, &bad), 0);
  std::vector<Sge> sges;
  for (uint32_t i = 0; i <= cap.max_recv_sge; ++i) sges.push_back(b.At(16 * i, 16));
  const int want = GetParam().behaviour.recv_full_checked_first ? ENOMEM : EINVAL;
  EXPECT_EQ(dev_->PostRecv(qp, {Recv(100, sges)}, &bad), want);
  EXPECT_EQ(bad, 0u);

  SrqHandle srq;
  ASSERT_EQ(dev_->CreateSrq(pd_, 4, 1, &srq), 0);
  SrqAttr sa;
  ASSERT_EQ(dev_->QuerySrq(srq, &sa), 0);
  fill.clear();
  for (uint32_t i = 0; i < sa.max_wr; ++i) fill.push_back(Recv(200 + i, {b.At(0, 16)}));
  ASSERT_EQ(dev_->PostSrqRecv(srq, fill, &bad), 0);
  EXPECT_EQ(dev_->PostSrqRecv(srq, {Recv(300, {b.At(0, 8), b.At(8, 8)})}, &bad), want);
  EXPECT_EQ(dev_->PostSrqRecv(srq, {Recv(301, {b.At(0, 8)})}, &bad), ENOMEM);
  QpAttr a;
  a.qp_state = QpState::kErr;
  ASSERT_EQ(dev_->ModifyQp(qp, a, attr::kState), 0);
  EXPECT_EQ(WaitWc(cq_, static_cast<int>(cap.max_recv_wr)).size(), cap.max_recv_wr);
  EXPECT_EQ(dev_->DestroyQp(qp), 0);
  EXPECT_EQ(dev_->DestroySrq(srq), 0);
}

// A UD WR carries no remote address (ibv_send_wr's union holds the AH), so a UD atomic is
// never refused for a misaligned one. Where the requester checks the opcode
// (Behaviour::opcode_checked_by_requester, rxe) it is posted and fails with LOC_QP_OP_ERR;
// elsewhere the post refuses the opcode (EINVAL). A short buffer is EINVAL everywhere.
TEST_P(Conformance, AUdAtomicIsJudgedByItsOpcodeNotByARemoteAddress) {
  Buffer b = Reg(4096, access::kLocalWrite);
  auto [qa, qb] = ConnectedPair(QpType::kUd);
  AhHandle ah;
  ASSERT_EQ(dev_->CreateAh(pd_, FullAttr(qb, {}).ah_attr, &ah), 0);
  ConnectionInfo info;
  ASSERT_EQ(dev_->LocalConnectionInfo(qb, &info), 0);
  SendWr wr;
  wr.wr_id = 7;
  wr.opcode = WrOpcode::kAtomicCmpAndSwp;
  wr.sg_list = {b.At(64, 8)};
  wr.send_flags = send_flag::kSignaled;
  wr.remote_addr = 0x1004;  // misaligned, and no part of a UD WR
  wr.ah = ah;
  wr.remote_qpn = info.qp_num;
  wr.remote_qkey = kQkey;
  size_t bad = 99;
  SendWr short_one = wr;
  short_one.sg_list = {b.At(64, 4)};
  EXPECT_EQ(dev_->PostSend(qa, {short_one}, &bad), EINVAL);
  if (!GetParam().behaviour.opcode_checked_by_requester) {
    EXPECT_EQ(dev_->PostSend(qa, {wr}, &bad), EINVAL) << "UD has no atomics";
  } else {
    ASSERT_EQ(dev_->PostSend(qa, {wr}, &bad), 0);
    OneWc(cq_, 7, WcStatus::kLocQpOpErr);
  }
  EXPECT_EQ(dev_->DestroyQp(qa), 0);
  EXPECT_EQ(dev_->DestroyQp(qb), 0);
  EXPECT_EQ(dev_->DestroyAh(ah), 0);
}

}  // namespace
}  // namespace qptwin::testing
