#include "tests/conformance/fixture.h"

#include "spec/bring_up.h"

namespace qptwin::testing {

void Conformance::SetUp() {
  std::string why;
  backend_ = GetParam().make(&why);
  if (!backend_) GTEST_SKIP() << GetParam().name << " unavailable: " << why;
  ASSERT_EQ(backend_->OpenDevice("", &dev_), 0);
  ASSERT_EQ(dev_->QueryDevice(&dattr_), 0);
  ASSERT_EQ(dev_->QueryPort(1, &pattr_), 0);
  ASSERT_EQ(dev_->AllocPd(&pd_), 0);
  cq_ = Cq(256);
}

void Conformance::TearDown() {
  dev_.reset();  // the Device releases whatever a failed test left behind
  backend_.reset();
}

int Conformance::ModifyToRtsClaimingRts(QpHandle qp) {
  QpAttr back = StateOnly(QpState::kRts);
  back.cur_qp_state = QpState::kRts;
  return dev_->ModifyQp(qp, back, attr::kState | attr::kCurState);
}

Buffer Conformance::Reg(size_t len, AccessFlags access) {
  Buffer b;
  b.len = len;
  EXPECT_EQ(dev_->RegMr(pd_, len, access, &b.mr, &b.buf, &b.lkey, &b.rkey), 0);
  return b;
}

Buffer Conformance::RegInOtherPd(size_t len, AccessFlags access, PdHandle* pd) {
  PdHandle other;
  EXPECT_EQ(dev_->AllocPd(&other), 0);
  if (pd) *pd = other;
  Buffer b;
  b.len = len;
  EXPECT_EQ(dev_->RegMr(other, len, access, &b.mr, &b.buf, &b.lkey, &b.rkey), 0);
  return b;
}

CqHandle Conformance::Cq(int cqe) {
  CqHandle cq;
  int actual = 0;
  EXPECT_EQ(dev_->CreateCq(cqe, ChannelHandle{}, &cq, &actual), 0);
  EXPECT_GE(actual, cqe);
  return cq;
}

QpHandle Conformance::Qp(QpType type, uint32_t max_send_wr, uint32_t max_recv_wr,
                         uint32_t max_sge, bool sq_sig_all, CqHandle cq) {
  QpInitAttr init;
  init.qp_type = type;
  init.pd = pd_;
  init.send_cq = cq ? cq : cq_;
  init.recv_cq = cq ? cq : cq_;
  init.cap.max_send_wr = max_send_wr;
  init.cap.max_recv_wr = max_recv_wr;
  init.cap.max_send_sge = max_sge;
  init.cap.max_recv_sge = max_sge;
  init.sq_sig_all = sq_sig_all;
  QpHandle qp;
  QpCap actual;
  EXPECT_EQ(dev_->CreateQp(init, &qp, &actual), 0) << ToName(type);
  return qp;
}

void Conformance::AddressDatagram(QpHandle dst, SendWr* wr, AhHandle* ah) {
  ASSERT_EQ(dev_->CreateAh(pd_, FullAttr(dst, {}).ah_attr, ah), 0);
  ConnectionInfo info;
  ASSERT_EQ(dev_->LocalConnectionInfo(dst, &info), 0);
  wr->ah = *ah;
  wr->remote_qpn = info.qp_num;
  wr->remote_qkey = kQkey;
}

QpAttr Conformance::FullAttr(QpHandle self, QpHandle peer) {
  ConnectionInfo info;
  EXPECT_EQ(dev_->LocalConnectionInfo(peer ? peer : self, &info), 0);
  BringUpParams p;  // every access, PSN 0x100, min_rnr_timer 12, one READ/atomic each way
  p.qkey = kQkey;
  p.path_mtu = pattr_.active_mtu;
  QpAttr a;
  EXPECT_EQ(BringUpAttr(*dev_, p, info, &a), 0);
  return a;
}

void Conformance::Drive(QpType type, QpHandle qp, QpState target, QpHandle peer) {
  QpAttr a = FullAttr(qp, peer);
  switch (target) {
    case QpState::kReset: return;
    case QpState::kErr:
      ASSERT_EQ(BringUp(*dev_, qp, a, QpState::kInit), 0) << ToName(type);
      ASSERT_EQ(dev_->ModifyQp(qp, StateOnly(QpState::kErr), attr::kState), 0);
      return;
    case QpState::kSqd:
      ASSERT_EQ(BringUp(*dev_, qp, a, QpState::kRts), 0) << ToName(type) << " to RTS";
      ASSERT_EQ(ModifyOnMinimumMask(*dev_, qp, type, QpState::kRts, QpState::kSqd, a), 0)
          << ToName(type) << " RTS->SQD";
      // SQD is entered once the (empty) send queue has drained.
      (void)dev_->WaitForAsyncEvent(EventType::kSqDrained, qp, kSecond / 10);
      return;
    default:
      ASSERT_EQ(BringUp(*dev_, qp, a, target), 0) << ToName(type) << " to " << ToName(target);
  }
}

QpState Conformance::StateOf(QpHandle qp) {
  QpAttr a;
  QpInitAttr init;
  EXPECT_EQ(dev_->QueryQp(qp, &a, &init), 0);
  return a.qp_state;
}

std::pair<QpHandle, QpHandle> Conformance::ConnectedPair(QpType type, CqHandle cq_a,
                                                         CqHandle cq_b, uint32_t max_send_wr,
                                                         bool sig_all_a) {
  QpHandle a = Qp(type, max_send_wr, 16, 2, sig_all_a, cq_a);
  QpHandle b = Qp(type, max_send_wr, 16, 2, false, cq_b);
  Drive(type, a, QpState::kRts, b);
  Drive(type, b, QpState::kRts, a);
  return {a, b};
}

uint32_t Conformance::SendDepth(QpHandle qp) {
  QpAttr attr;
  QpInitAttr init;
  EXPECT_EQ(dev_->QueryQp(qp, &attr, &init), 0);
  return attr.cap.max_send_wr;
}

int ToRtsWith(Device& dev, const BringUpParams& p, QpHandle self, QpHandle peer) {
  ConnectionInfo info;
  QpAttr attr;
  if (int e = dev.LocalConnectionInfo(peer, &info)) return e;
  if (int e = BringUpAttr(dev, p, info, &attr)) return e;
  return BringUp(dev, self, attr, QpState::kRts);
}

QpHandle Conformance::RcTowardsPeerInErr(CqHandle cq, const BringUpParams& p) {
  QpHandle q = Qp(QpType::kRc, 16, 16, 2, false, cq), peer = Qp(QpType::kRc, 16, 16, 2, false, cq);
  EXPECT_EQ(ToRtsWith(*dev_, p, q, peer), 0);
  EXPECT_EQ(ToRtsWith(*dev_, p, peer, q), 0);
  EXPECT_EQ(dev_->ModifyQp(peer, StateOnly(QpState::kErr), attr::kState), 0);
  return q;
}

void Conformance::FifteenDeepRcPair(const BringUpParams& p, RcPair* pair) {
  RcPair& r = *pair;
  r.ca = Cq();
  r.cb = Cq();
  r.qa = Qp(QpType::kRc, 15, 16, 2, false, r.ca);
  r.qb = Qp(QpType::kRc, 15, 16, 2, false, r.cb);
  if (const uint32_t depth = SendDepth(r.qa); depth != 15) {
    GTEST_SKIP() << "the device grants a send queue of " << depth;
  }
  ASSERT_EQ(ToRtsWith(*dev_, p, r.qa, r.qb), 0);
  ASSERT_EQ(ToRtsWith(*dev_, p, r.qb, r.qa), 0);
}

void Conformance::RcPairAfterStaleRetry(const BringUpParams& p, const Buffer& buf,
                                        RcPair* pair) {
  RcPair& r = *pair;
  r.ca = Cq();
  r.cb = Cq();
  r.qa = Qp(QpType::kRc, 16, 16, 2, false, r.ca);
  r.qb = Qp(QpType::kRc, 16, 16, 2, false, r.cb);
  BringUpParams first = p;
  first.timeout = 11;
  first.retry_cnt = 1;
  first.rnr_retry = 0;
  ASSERT_EQ(ToRtsWith(*dev_, first, r.qa, r.qb), 0);  // qb stays in RESET: it drops the SEND
  size_t bad = 99;
  ASSERT_EQ(dev_->PostSend(r.qa, {Send(1, {buf.At(0, 8)})}, &bad), 0);
  const auto wcs = WaitWc(r.ca, 1);
  ASSERT_EQ(wcs.size(), 1u);
  ASSERT_EQ(wcs[0].status, WcStatus::kRetryExcErr) << ToName(wcs[0].status);
  ASSERT_EQ(dev_->ModifyQp(r.qa, StateOnly(QpState::kReset), attr::kState), 0);
  ASSERT_EQ(ToRtsWith(*dev_, p, r.qa, r.qb), 0);
  ASSERT_EQ(ToRtsWith(*dev_, p, r.qb, r.qa), 0);
}

void Conformance::RcPairWithGhost(const BringUpParams& p, const std::vector<SendWr>& in_err,
                                  RcPair* pair) {
  RcPair& r = *pair;
  r.ca = Cq();
  r.cb = Cq();
  r.qa = Qp(QpType::kRc, 16, 16, 2, /*sq_sig_all=*/true, r.ca);
  r.qb = Qp(QpType::kRc, 16, 16, 2, false, r.cb);
  ASSERT_EQ(ToRtsWith(*dev_, p, r.qa, r.qb), 0);
  ASSERT_EQ(ToRtsWith(*dev_, p, r.qb, r.qa), 0);
  ASSERT_EQ(dev_->ModifyQp(r.qa, StateOnly(QpState::kErr), attr::kState), 0);
  size_t bad = 99;
  ASSERT_EQ(dev_->PostSend(r.qa, in_err, &bad), 0);
  ExpectFlushedInOrder(r.ca, static_cast<int>(in_err.size()), in_err.front().wr_id);
  if (ModifyToRtsClaimingRts(r.qa) != 0) GTEST_SKIP() << "the device keeps the QP in ERR";
}

void Conformance::RcPairAfterRnrFailure(const BringUpParams& p, bool sig_all_a,
                                        const Buffer& buf, RcPair* pair) {
  RcPair& r = *pair;
  r.ca = Cq();
  r.cb = Cq();
  r.qa = Qp(QpType::kRc, 16, 16, 2, sig_all_a, r.ca);
  r.qb = Qp(QpType::kRc, 16, 16, 2, false, r.cb);
  ASSERT_EQ(ToRtsWith(*dev_, p, r.qa, r.qb), 0);
  ASSERT_EQ(ToRtsWith(*dev_, p, r.qb, r.qa), 0);
  size_t bad = 99;
  ASSERT_EQ(dev_->PostSend(r.qa, {Send(1, {buf.At(0, 8)})}, &bad), 0);  // no receive at qb
  const auto wcs = WaitWc(r.ca, 1);
  ASSERT_EQ(wcs.size(), 1u);
  ASSERT_EQ(wcs[0].status, WcStatus::kRnrRetryExcErr) << ToName(wcs[0].status);
  ASSERT_EQ(StateOf(r.qa), QpState::kErr);
}

void Conformance::ExpectFlushedInOrder(CqHandle cq, int n, uint64_t first_wr_id,
                                       uint64_t timeout_ns, const std::string& why) {
  const auto wcs = WaitWc(cq, n, timeout_ns);
  ASSERT_EQ(wcs.size(), static_cast<size_t>(n)) << why;
  for (size_t i = 0; i < wcs.size(); ++i) {
    EXPECT_EQ(wcs[i].wr_id, first_wr_id + i) << why;
    EXPECT_EQ(wcs[i].status, WcStatus::kWrFlushErr) << ToName(wcs[i].status) << " " << why;
  }
}

WorkCompletion Conformance::OneWc(CqHandle cq, uint64_t wr_id, WcStatus status,
                                  uint64_t timeout_ns) {
  std::vector<WorkCompletion> wcs = WaitWc(cq, 1, timeout_ns);
  if (wcs.size() != 1) {
    ADD_FAILURE() << "expected one completion (wr_id " << wr_id << "), got " << wcs.size();
    WorkCompletion none;
    none.status = WcStatus::kGeneralErr;
    return none;
  }
  EXPECT_EQ(wcs[0].wr_id, wr_id);
  EXPECT_EQ(wcs[0].status, status) << "wr_id " << wcs[0].wr_id << ": " << ToName(wcs[0].status);
  return wcs[0];
}

std::vector<WorkCompletion> Conformance::WaitWc(CqHandle cq, int n, uint64_t timeout_ns) {
  std::vector<WorkCompletion> out;
  EXPECT_EQ(dev_->WaitForCompletions(cq, n, timeout_ns, &out), 0)
      << "expected " << n << " completions, got " << out.size();
  return out;
}

std::vector<WorkCompletion> Conformance::Drain(CqHandle cq, uint64_t settle_ns) {
  std::vector<WorkCompletion> out;
  (void)dev_->WaitForCompletions(cq, 1 << 20, settle_ns, &out);  // ETIMEDOUT expected
  return out;
}

SendWr Conformance::Send(uint64_t wr_id, std::vector<Sge> sges, bool signaled) {
  SendWr wr;
  wr.wr_id = wr_id;
  wr.sg_list = std::move(sges);
  wr.opcode = WrOpcode::kSend;
  wr.send_flags = signaled ? send_flag::kSignaled : 0;
  return wr;
}

SendWr Conformance::RdmaTo(uint64_t wr_id, WrOpcode op, std::vector<Sge> sges,
                           const Buffer& remote, size_t offset) {
  SendWr wr = Send(wr_id, std::move(sges));
  wr.opcode = op;
  wr.remote_addr = remote.Addr(offset);
  wr.rkey = remote.rkey;
  return wr;
}

RecvWr Conformance::Recv(uint64_t wr_id, std::vector<Sge> sges) {
  RecvWr wr;
  wr.wr_id = wr_id;
  wr.sg_list = std::move(sges);
  return wr;
}

}  // namespace qptwin::testing
