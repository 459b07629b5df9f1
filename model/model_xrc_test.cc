// XRC on the ibta profile (IBTA 9.8; ibv_open_xrcd(3), ibv_create_srq_ex(3),
// ibv_create_qp_ex(3)): one XRC_SEND QP on mdev0 connected to one XRC_RECV QP on mdev1,
// whose XRC domain holds two XRC SRQs with a CQ each. rxe has no XRC (R1).
#include <cstring>

#include "tests/support/support.h"

namespace qptwin::model::testing {
namespace {

using namespace ::qptwin::testing;  // tests/support/support.h

// The XRC_RECV side: a tests/support Side (device, PD, MR, the QP) plus the XRC domain and
// its two SRQs with a CQ each (Side's own CQs stay unused).
struct XrcTarget : Side {
  XrcdHandle xrcd;
  CqHandle cq[2];
  SrqHandle srq[2];
  uint32_t srqn[2] = {0, 0};
};

// The XRC_SEND side: a Side whose QP sends only (completions on scq).
using XrcInitiator = Side;

std::unique_ptr<Backend> Ibta() { return MakeBackendOrSkip(ModelChoice("ibta")); }

std::shared_ptr<Device> Open(Backend& be, const std::string& name) {
  std::unique_ptr<Device> d;
  EXPECT_EQ(be.OpenDevice(name, &d), 0);
  return std::shared_ptr<Device>(std::move(d));
}

SrqInitAttr XrcSrqAttr(PdHandle pd, XrcdHandle xrcd, CqHandle cq) {
  SrqInitAttr a;
  a.srq_type = SrqType::kXrc;
  a.pd = pd;
  a.max_wr = 16;
  a.max_sge = 2;
  a.xrcd = xrcd;
  a.cq = cq;
  return a;
}

XrcTarget MakeTarget(Backend& be) {
  XrcTarget t;
  t.dev = Open(be, "mdev1");
  EXPECT_EQ(t.dev->AllocPd(&t.pd), 0);
  EXPECT_EQ(t.dev->OpenXrcd(&t.xrcd), 0);
  EXPECT_EQ(t.dev->RegMr(t.pd, 8192, access::kAll, &t.mr, &t.buf, &t.lkey, &t.rkey), 0);
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(t.dev->CreateCq(32, ChannelHandle{}, &t.cq[i], nullptr), 0);
    EXPECT_EQ(t.dev->CreateSrqEx(XrcSrqAttr(t.pd, t.xrcd, t.cq[i]), &t.srq[i]), 0);
    EXPECT_EQ(t.dev->SrqNum(t.srq[i], &t.srqn[i]), 0);
  }
  QpInitAttr init;
  init.qp_type = QpType::kXrcRecv;
  init.xrcd = t.xrcd;
  QpCap cap{1, 1, 1, 1, 1};
  EXPECT_EQ(t.dev->CreateQp(init, &t.qp, &cap), 0);
  EXPECT_EQ(cap.max_send_wr + cap.max_recv_wr, 0u);  // no queues of its own
  EXPECT_EQ(t.dev->QpNum(t.qp, &t.qpn), 0);
  return t;
}

XrcInitiator MakeInitiator(Backend& be) {
  SideOptions o;
  o.type = QpType::kXrcSend;
  o.cap = QpCap{16, 0, 2, 0, 64};
  o.cq_depth = 32;
  o.one_cq = true;
  return MakeSide(be, "mdev0", o);
}

// Both QPs to RTS on the table's minimum masks (spec/bring_up.h), probing on the way the two
// XRC rows that differ from RC (qp_state_table for IB_QPT_XRC_INI / IB_QPT_XRC_TGT).
void ConnectXrc(XrcInitiator& s, XrcTarget& t, uint8_t rnr_retry = 7) {
  BringUpParams p = SideParams();
  p.rnr_retry = rnr_retry;
  ConnectionInfo s_info, t_info;
  ASSERT_EQ(s.dev->LocalConnectionInfo(s.qp, &s_info), 0);
  ASSERT_EQ(t.dev->LocalConnectionInfo(t.qp, &t_info), 0);
  QpAttr sa, ta;
  ASSERT_EQ(BringUpAttr(*s.dev, p, t_info, &sa), 0);
  ASSERT_EQ(BringUpAttr(*t.dev, p, s_info, &ta), 0);
  ASSERT_EQ(BringUp(*s.dev, s.qp, sa, QpState::kRtr), 0);
  ASSERT_EQ(BringUp(*t.dev, t.qp, ta, QpState::kInit), 0);
  // XRC_TGT: INIT->RTR also requires MAX_DEST_RD_ATOMIC and MIN_RNR_TIMER.
  ta.qp_state = QpState::kRtr;
  EXPECT_EQ(t.dev->ModifyQp(t.qp, ta,
                            attr::kState | attr::kAv | attr::kPathMtu | attr::kDestQpn |
                                attr::kRqPsn),
            EINVAL);
  ASSERT_EQ(BringUp(*t.dev, t.qp, ta), 0);  // XRC_TGT RTR->RTS: TIMEOUT and SQ_PSN only
  // XRC_INI: RTR->RTS requires TIMEOUT, RETRY_CNT, RNR_RETRY, SQ_PSN, MAX_QP_RD_ATOMIC.
  sa.qp_state = QpState::kRts;
  EXPECT_EQ(s.dev->ModifyQp(s.qp, sa, attr::kState | attr::kTimeout | attr::kSqPsn), EINVAL);
  ASSERT_EQ(BringUp(*s.dev, s.qp, sa), 0);
}

QpState State(Device& d, QpHandle qp) {
  QpAttr a;
  EXPECT_EQ(d.QueryQp(qp, &a, nullptr), 0);
  return a.qp_state;
}

SendWr XrcWr(uint64_t id, WrOpcode op, std::vector<Sge> sges, uint32_t srqn) {
  SendWr w = Wr(id, op, std::move(sges));
  w.remote_srqn = srqn;
  return w;
}

TEST(Xrc, RxeProfileHasNoXrc) {
  auto be = RxeModel();
  auto d = Open(*be, "mdev0");
  XrcdHandle xrcd;
  EXPECT_EQ(d->OpenXrcd(&xrcd), EOPNOTSUPP);  // R1: rxe has no open_xrcd
  PdHandle pd;
  CqHandle cq;
  ASSERT_EQ(d->AllocPd(&pd), 0);
  ASSERT_EQ(d->CreateCq(8, ChannelHandle{}, &cq, nullptr), 0);
  SrqHandle srq;
  EXPECT_EQ(d->CreateSrqEx(XrcSrqAttr(pd, XrcdHandle{}, cq), &srq), EINVAL);  // no XRCD
  ASSERT_EQ(d->CreateSrq(pd, 4, 1, &srq), 0);
  uint32_t srqn = 0;
  EXPECT_EQ(d->SrqNum(srq, &srqn), EOPNOTSUPP);
  QpInitAttr init;
  init.pd = pd;
  init.send_cq = init.recv_cq = cq;
  init.cap = QpCap{1, 1, 1, 1, 0};
  QpHandle qp;
  for (QpType t : {QpType::kXrcSend, QpType::kXrcRecv}) {
    init.qp_type = t;
    EXPECT_EQ(d->CreateQp(init, &qp, nullptr), EOPNOTSUPP) << ToName(t);
  }
}

TEST(Xrc, CreateAndModifyWithTheKernelsMinimalMasks) {
  auto be = Ibta();
  XrcInitiator s = MakeInitiator(*be);
  XrcTarget t = MakeTarget(*be);
  EXPECT_NE(t.srqn[0], t.srqn[1]);
  ConnectXrc(s, t);
  EXPECT_EQ(State(*s.dev, s.qp), QpState::kRts);
  EXPECT_EQ(State(*t.dev, t.qp), QpState::kRts);
  QpInitAttr init;
  ASSERT_EQ(t.dev->QueryQp(t.qp, nullptr, &init), 0);
  EXPECT_EQ(init.qp_type, QpType::kXrcRecv);
  EXPECT_EQ(init.xrcd, t.xrcd);
}

TEST(Xrc, XrcSendIgnoresTheReceiveSide) {
  // libibverbs create_qp_ex_common passes no recv_cq/srq for XRC_SEND; ib_uverbs sets
  // max_recv_wr = max_recv_sge = 0: ignored, not refused.
  auto be = Ibta();
  auto d = Open(*be, "mdev0");
  PdHandle pd;
  CqHandle cq;
  ASSERT_EQ(d->AllocPd(&pd), 0);
  ASSERT_EQ(d->CreateCq(8, ChannelHandle{}, &cq, nullptr), 0);
  QpInitAttr init;
  init.qp_type = QpType::kXrcSend;
  init.pd = pd;
  init.send_cq = cq;
  init.recv_cq = CqHandle{9999};
  init.srq = SrqHandle{9999};
  init.cap = QpCap{4, 16, 1, 4, 0};
  QpHandle qp;
  QpCap cap;
  ASSERT_EQ(d->CreateQp(init, &qp, &cap), 0);
  EXPECT_EQ(cap.max_recv_wr, 0u);
  EXPECT_EQ(cap.max_recv_sge, 0u);
  EXPECT_GE(cap.max_send_wr, 4u);
  size_t bad = 99;
  EXPECT_EQ(d->PostRecv(qp, {Rwr(1, {})}, &bad), EINVAL);  // no receive queue
  EXPECT_EQ(bad, 0u);
  init.pd = PdHandle{};
  EXPECT_EQ(d->CreateQp(init, &qp, &cap), EINVAL);  // XRC_SEND needs its PD
  EXPECT_EQ(d->DestroyCq(cq), EBUSY);
}

TEST(Xrc, OneInitiatorSendsToTwoSrqsThroughOneTarget) {
  auto be = Ibta();
  XrcInitiator s = MakeInitiator(*be);
  XrcTarget t = MakeTarget(*be);
  ConnectXrc(s, t);
  for (int i = 0; i < 2; ++i) {
    size_t bad = 0;
    ASSERT_EQ(t.dev->PostSrqRecv(t.srq[i], {Rwr(100 + i, {t.At(1024 * i, 1024)})}, &bad), 0);
  }
  for (int i = 0; i < 3000; ++i) s.buf[i] = static_cast<uint8_t>(i * 7 + 1);
  SendWr to1 = XrcWr(1, WrOpcode::kSendWithImm, {s.At(0, 700)}, t.srqn[1]);
  to1.imm_data = 0xabcd1234;
  SendWr to0 = XrcWr(2, WrOpcode::kSend, {s.At(1000, 900)}, t.srqn[0]);
  size_t bad = 0;
  ASSERT_EQ(s.dev->PostSend(s.qp, {to1, to0}, &bad), 0);

  std::vector<WorkCompletion> scqe;
  ASSERT_EQ(s.dev->WaitForCompletions(s.scq, 2, 1000000000, &scqe), 0);
  EXPECT_EQ(scqe[0].wr_id, 1u);
  EXPECT_EQ(scqe[1].wr_id, 2u);
  for (const auto& wc : scqe) EXPECT_EQ(wc.status, WcStatus::kSuccess);

  std::vector<WorkCompletion> c1, c0;
  ASSERT_EQ(t.dev->WaitForCompletions(t.cq[1], 1, 1000000000, &c1), 0);
  ASSERT_EQ(t.dev->WaitForCompletions(t.cq[0], 1, 1000000000, &c0), 0);
  EXPECT_EQ(c1[0].wr_id, 101u);
  EXPECT_EQ(c1[0].status, WcStatus::kSuccess);
  EXPECT_EQ(c1[0].opcode, WcOpcode::kRecv);
  EXPECT_EQ(c1[0].byte_len, 700u);
  EXPECT_TRUE(c1[0].wc_flags & wc_flag::kWithImm);
  EXPECT_EQ(c1[0].imm_data, 0xabcd1234u);
  EXPECT_EQ(c1[0].qp_num, t.qpn);
  EXPECT_EQ(c1[0].src_qp, s.qpn);
  EXPECT_EQ(c0[0].wr_id, 100u);
  EXPECT_EQ(c0[0].byte_len, 900u);
  EXPECT_FALSE(c0[0].wc_flags & wc_flag::kWithImm);
  EXPECT_EQ(std::memcmp(t.buf + 1024, s.buf, 700), 0);
  EXPECT_EQ(std::memcmp(t.buf, s.buf + 1000, 900), 0);
  WorkCompletion extra[4];
  be->Advance(1000000);
  EXPECT_EQ(t.dev->PollCq(t.cq[0], 4, extra), 0);
  EXPECT_EQ(t.dev->PollCq(t.cq[1], 4, extra), 0);
  EXPECT_EQ(s.dev->PollCq(s.scq, 4, extra), 0);
}

TEST(Xrc, WriteReadAndAtomicsUseTheXrcSrqsPd) {
  auto be = Ibta();
  XrcInitiator s = MakeInitiator(*be);
  XrcTarget t = MakeTarget(*be);
  // A second PD on the target with its own MR and an XRC SRQ of its own.
  PdHandle pd2;
  ASSERT_EQ(t.dev->AllocPd(&pd2), 0);
  MrHandle mr2;
  uint8_t* buf2 = nullptr;
  uint32_t lkey2 = 0, rkey2 = 0;
  ASSERT_EQ(t.dev->RegMr(pd2, 4096, access::kAll, &mr2, &buf2, &lkey2, &rkey2), 0);
  SrqHandle srq2;
  uint32_t srqn2 = 0;
  ASSERT_EQ(t.dev->CreateSrqEx(XrcSrqAttr(pd2, t.xrcd, t.cq[0]), &srq2), 0);
  ASSERT_EQ(t.dev->SrqNum(srq2, &srqn2), 0);
  ConnectXrc(s, t);

  std::memcpy(s.buf, "xrc-write", 9);
  std::memcpy(t.buf + 100, "xrc-read!", 9);
  const uint64_t v = 40;
  std::memcpy(t.buf + 256, &v, 8);
  SendWr w = XrcWr(1, WrOpcode::kRdmaWrite, {s.At(0, 9)}, t.srqn[0]);
  w.remote_addr = t.Addr(0);
  w.rkey = t.rkey;
  SendWr r = XrcWr(2, WrOpcode::kRdmaRead, {s.At(512, 9)}, t.srqn[1]);
  r.remote_addr = t.Addr(100);
  r.rkey = t.rkey;
  SendWr a = XrcWr(3, WrOpcode::kAtomicFetchAndAdd, {s.At(1024, 8)}, t.srqn[0]);
  a.remote_addr = t.Addr(256);
  a.rkey = t.rkey;
  a.compare_add = 2;
  // pd2's MR through the SRQ of pd2: allowed.
  SendWr w2 = XrcWr(4, WrOpcode::kRdmaWrite, {s.At(0, 9)}, srqn2);
  w2.remote_addr = reinterpret_cast<uint64_t>(buf2);
  w2.rkey = rkey2;
  size_t bad = 0;
  ASSERT_EQ(s.dev->PostSend(s.qp, {w, r, a, w2}, &bad), 0);
  std::vector<WorkCompletion> wcs;
  ASSERT_EQ(s.dev->WaitForCompletions(s.scq, 4, 1000000000, &wcs), 0);
  for (const auto& wc : wcs) EXPECT_EQ(wc.status, WcStatus::kSuccess) << wc.wr_id;
  EXPECT_EQ(wcs[1].opcode, WcOpcode::kRdmaRead);
  EXPECT_EQ(wcs[2].opcode, WcOpcode::kFetchAdd);
  EXPECT_EQ(std::memcmp(t.buf, "xrc-write", 9), 0);
  EXPECT_EQ(std::memcmp(buf2, "xrc-write", 9), 0);
  EXPECT_EQ(std::memcmp(s.buf + 512, "xrc-read!", 9), 0);
  uint64_t orig = 0, now = 0;
  std::memcpy(&orig, s.buf + 1024, 8);
  std::memcpy(&now, t.buf + 256, 8);
  EXPECT_EQ(orig, 40u);
  EXPECT_EQ(now, 42u);

  // pd2's MR through an SRQ of the first PD: the rkey is not in that PD.
  SendWr w3 = XrcWr(5, WrOpcode::kRdmaWrite, {s.At(0, 9)}, t.srqn[0]);
  w3.remote_addr = reinterpret_cast<uint64_t>(buf2);
  w3.rkey = rkey2;
  ASSERT_EQ(s.dev->PostSend(s.qp, {w3}, &bad), 0);
  wcs.clear();
  ASSERT_EQ(s.dev->WaitForCompletions(s.scq, 1, 1000000000, &wcs), 0);
  EXPECT_EQ(wcs[0].status, WcStatus::kRemAccessErr);
  EXPECT_EQ(State(*s.dev, s.qp), QpState::kErr);
  EXPECT_EQ(State(*t.dev, t.qp), QpState::kErr);
}

TEST(Xrc, AnSrqOutsideTheTargetsDomainIsARemoteInvalidRequest) {
  for (bool other_domain : {false, true}) {
    auto be = Ibta();
    XrcInitiator s = MakeInitiator(*be);
    XrcTarget t = MakeTarget(*be);
    uint32_t srqn = 0xbeef;  // no such SRQ
    if (other_domain) {
      XrcdHandle x2;
      SrqHandle srq;
      ASSERT_EQ(t.dev->OpenXrcd(&x2), 0);
      ASSERT_EQ(t.dev->CreateSrqEx(XrcSrqAttr(t.pd, x2, t.cq[0]), &srq), 0);
      ASSERT_EQ(t.dev->SrqNum(srq, &srqn), 0);
      size_t bad = 0;
      ASSERT_EQ(t.dev->PostSrqRecv(srq, {Rwr(7, {t.At(0, 64)})}, &bad), 0);
    }
    ConnectXrc(s, t);
    size_t bad = 0;
    ASSERT_EQ(s.dev->PostSend(s.qp, {XrcWr(1, WrOpcode::kSend, {s.At(0, 8)}, srqn),
                                     XrcWr(2, WrOpcode::kSend, {s.At(0, 8)}, t.srqn[0])},
                              &bad),
              0);
    std::vector<WorkCompletion> wcs;
    ASSERT_EQ(s.dev->WaitForCompletions(s.scq, 2, 1000000000, &wcs), 0);
    EXPECT_EQ(wcs[0].status, WcStatus::kRemInvReqErr) << other_domain;
    EXPECT_EQ(wcs[1].status, WcStatus::kWrFlushErr);
    EXPECT_EQ(State(*s.dev, s.qp), QpState::kErr);
    EXPECT_EQ(State(*t.dev, t.qp), QpState::kErr);
    WorkCompletion extra[2];
    be->Advance(1000000);
    EXPECT_EQ(t.dev->PollCq(t.cq[0], 2, extra), 0);  // nothing was delivered
    EXPECT_EQ(s.dev->PollCq(s.scq, 2, extra), 0);
  }
}

TEST(Xrc, ErrFlushesTheSendQueueOnceAndLeavesTheSrqsAlone) {
  auto be = Ibta();
  XrcInitiator s = MakeInitiator(*be);
  XrcTarget t = MakeTarget(*be);
  ConnectXrc(s, t, /*rnr_retry=*/7);
  size_t bad = 0;
  ASSERT_EQ(t.dev->PostSrqRecv(t.srq[1], {Rwr(50, {t.At(0, 64)})}, &bad), 0);
  // SRQ 0 has no receives: the first SEND waits on RNR NAKs forever (rnr_retry 7).
  ASSERT_EQ(s.dev->PostSend(s.qp, {XrcWr(1, WrOpcode::kSend, {s.At(0, 8)}, t.srqn[0]),
                                   XrcWr(2, WrOpcode::kSend, {s.At(0, 8)}, t.srqn[0]),
                                   XrcWr(3, WrOpcode::kSend, {s.At(0, 8)}, t.srqn[1])},
                            &bad),
            0);
  be->Advance(200000);
  QpAttr err;
  err.qp_state = QpState::kErr;
  ASSERT_EQ(s.dev->ModifyQp(s.qp, err, attr::kState), 0);
  ASSERT_EQ(s.dev->PostSend(s.qp, {XrcWr(4, WrOpcode::kSend, {s.At(0, 8)}, t.srqn[1])}, &bad), 0);
  std::vector<WorkCompletion> wcs;
  ASSERT_EQ(s.dev->WaitForCompletions(s.scq, 4, 1000000000, &wcs), 0);
  for (size_t i = 0; i < wcs.size(); ++i) {
    EXPECT_EQ(wcs[i].wr_id, i + 1);
    EXPECT_EQ(wcs[i].status, WcStatus::kWrFlushErr);
  }
  ASSERT_EQ(t.dev->ModifyQp(t.qp, err, attr::kState), 0);
  WorkCompletion extra[4];
  be->Advance(1000000);
  EXPECT_EQ(s.dev->PollCq(s.scq, 4, extra), 0);     // each WR exactly once
  EXPECT_EQ(t.dev->PollCq(t.cq[1], 4, extra), 0);  // an SRQ's receives are not the QP's
  EXPECT_EQ(t.dev->PollCq(t.cq[0], 4, extra), 0);

  // RESET discards (R9); the pair reconnects and the SRQ's receive is still there.
  QpAttr reset;
  reset.qp_state = QpState::kReset;
  ASSERT_EQ(s.dev->ModifyQp(s.qp, reset, attr::kState), 0);
  ASSERT_EQ(t.dev->ModifyQp(t.qp, reset, attr::kState), 0);
  ConnectXrc(s, t);
  ASSERT_EQ(s.dev->PostSend(s.qp, {XrcWr(5, WrOpcode::kSend, {s.At(0, 8)}, t.srqn[1])}, &bad), 0);
  wcs.clear();
  ASSERT_EQ(t.dev->WaitForCompletions(t.cq[1], 1, 1000000000, &wcs), 0);
  EXPECT_EQ(wcs[0].wr_id, 50u);
  EXPECT_EQ(wcs[0].status, WcStatus::kSuccess);
}

TEST(Xrc, ResetDiscardsPostedWorkRequests) {
  auto be = Ibta();
  XrcInitiator s = MakeInitiator(*be);
  XrcTarget t = MakeTarget(*be);
  ConnectXrc(s, t);
  size_t bad = 0;
  ASSERT_EQ(s.dev->PostSend(s.qp, {XrcWr(1, WrOpcode::kSend, {s.At(0, 8)}, t.srqn[0])}, &bad), 0);
  be->Advance(100000);  // RNR-waiting: SRQ 0 is empty
  QpAttr reset;
  reset.qp_state = QpState::kReset;
  ASSERT_EQ(s.dev->ModifyQp(s.qp, reset, attr::kState), 0);
  be->Advance(1000000);
  WorkCompletion extra[2];
  EXPECT_EQ(s.dev->PollCq(s.scq, 2, extra), 0);
}

TEST(Xrc, DomainSrqAndCqAreBusyWhileUsed) {
  auto be = Ibta();
  XrcTarget t = MakeTarget(*be);
  EXPECT_EQ(t.dev->CloseXrcd(t.xrcd), EBUSY);
  EXPECT_EQ(t.dev->DestroyCq(t.cq[0]), EBUSY);  // the XRC SRQ's CQ
  EXPECT_EQ(t.dev->DeallocPd(t.pd), EBUSY);
  size_t bad = 99;
  EXPECT_EQ(t.dev->PostSend(t.qp, {Wr(1, WrOpcode::kSend, {})}, &bad), EINVAL);
  EXPECT_EQ(bad, 0u);
  EXPECT_EQ(t.dev->PostRecv(t.qp, {Rwr(1, {})}, &bad), EINVAL);
  QpInitAttr init;
  init.qp_type = QpType::kXrcRecv;
  QpHandle qp;
  EXPECT_EQ(t.dev->CreateQp(init, &qp, nullptr), EINVAL);  // XRC_RECV needs its XRCD
  SrqHandle srq;
  EXPECT_EQ(t.dev->CreateSrqEx(XrcSrqAttr(t.pd, t.xrcd, CqHandle{}), &srq), EINVAL);
  EXPECT_EQ(t.dev->CreateSrqEx(XrcSrqAttr(t.pd, XrcdHandle{}, t.cq[0]), &srq), EINVAL);

  ASSERT_EQ(t.dev->DestroyQp(t.qp), 0);
  EXPECT_EQ(t.dev->CloseXrcd(t.xrcd), EBUSY);  // the SRQs still use it
  ASSERT_EQ(t.dev->DestroySrq(t.srq[0]), 0);
  ASSERT_EQ(t.dev->DestroySrq(t.srq[1]), 0);
  EXPECT_EQ(t.dev->CloseXrcd(t.xrcd), 0);
  EXPECT_EQ(t.dev->CloseXrcd(t.xrcd), EINVAL);
  EXPECT_EQ(t.dev->DestroyCq(t.cq[0]), 0);
}

}  // namespace
}  // namespace qptwin::model::testing
