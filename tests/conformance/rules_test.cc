// Rules of ../shared/reference/rdma-facts.md that docs/rdma-facts-coverage.md listed as tested
// only on the model, or not at all: each is asserted here once, so it runs on every backend
// (the model's profiles in `bazel test`, real rxe in the VM).
#include <cstring>

#include "tests/conformance/fixture.h"

namespace qptwin::testing {
namespace {

using access::kAll;

// R6: a flush completion is valid only in wr_id, status and qp_num (ibv_poll_cq(3): "only
// wr_id, status, qp_num and vendor_err are valid"); rxe and the model leave the rest zero,
// for send and receive queues alike.
TEST_P(Conformance, FlushCompletionsCarryOnlyWrIdStatusAndQpNum) {
  Buffer buf = Reg(4096, kAll);
  QpHandle qa = Qp(QpType::kRc), qb = Qp(QpType::kRc);
  Drive(QpType::kRc, qa, QpState::kRts, qb);  // qb stays in RESET: nothing is ever ACKed
  uint32_t qpn = 0;
  ASSERT_EQ(dev_->QpNum(qa, &qpn), 0);
  size_t bad;
  SendWr w = Send(5, {buf.At(0, 64)});
  w.opcode = WrOpcode::kSendWithImm;
  w.imm_data = 0x1234;
  ASSERT_EQ(dev_->PostRecv(qa, {Recv(6, {buf.At(1024, 64)})}, &bad), 0);
  ASSERT_EQ(dev_->PostSend(qa, {w}, &bad), 0);
  ASSERT_EQ(dev_->ModifyQp(qa, StateOnly(QpState::kErr), attr::kState), 0);
  auto wcs = WaitWc(cq_, 2);
  ASSERT_EQ(wcs.size(), 2u);
  for (const WorkCompletion& wc : wcs) {
    EXPECT_TRUE(wc.wr_id == 5 || wc.wr_id == 6) << wc.wr_id;
    EXPECT_EQ(wc.status, WcStatus::kWrFlushErr) << "wr_id " << wc.wr_id;
    EXPECT_EQ(wc.qp_num, qpn) << "wr_id " << wc.wr_id;
    EXPECT_EQ(wc.byte_len, 0u) << "wr_id " << wc.wr_id;
    EXPECT_EQ(wc.wc_flags, 0u) << "wr_id " << wc.wr_id;
    EXPECT_EQ(wc.imm_data, 0u) << "wr_id " << wc.wr_id;
  }
  EXPECT_TRUE(Drain(cq_).empty());
}

// R12: leaving SQD while it drains is refused, except to ERR. ERR is accepted from SQD
// whether or not the drain has finished, and every WR still queued is accounted for once:
// completed before the move, or flushed by it.
TEST_P(Conformance, SqdCanAlwaysMoveToErrAndEveryWrIsAccountedOnce) {
  auto [qa, qb] = ConnectedPair(QpType::kRc);
  Buffer local = Reg(1 << 16, kAll), remote = Reg(1 << 16, kAll);
  std::vector<SendWr> wrs;
  for (int i = 0; i < 8; ++i) {
    SendWr w = RdmaTo(100 + i, WrOpcode::kRdmaWrite, {local.At(8192 * (i % 4), 8192)}, remote, 8192 * (i % 8));
    wrs.push_back(w);
  }
  size_t bad;
  ASSERT_EQ(dev_->PostSend(qa, wrs, &bad), 0);
  ASSERT_EQ(dev_->ModifyQp(qa, StateOnly(QpState::kSqd), attr::kState), 0);
  EXPECT_EQ(dev_->ModifyQp(qa, StateOnly(QpState::kErr), attr::kState), 0);
  EXPECT_EQ(StateOf(qa), QpState::kErr);
  auto wcs = WaitWc(cq_, 8);
  ASSERT_EQ(wcs.size(), 8u);
  bool flushing = false;
  for (int i = 0; i < 8; ++i) {
    EXPECT_EQ(wcs[i].wr_id, 100u + i) << "send completions in posting order";
    if (wcs[i].status == WcStatus::kWrFlushErr) flushing = true;
    if (flushing) {
      EXPECT_EQ(wcs[i].status, WcStatus::kWrFlushErr) << "wr_id " << wcs[i].wr_id;
    } else {
      EXPECT_EQ(wcs[i].status, WcStatus::kSuccess) << "wr_id " << wcs[i].wr_id;
    }
  }
  EXPECT_TRUE(Drain(cq_).empty()) << "each WR completes exactly once";
  (void)qb;
}

// R20: a fenced WR starts only after the earlier RDMA READ has completed, so a SEND fenced
// behind a READ into the same buffer carries the bytes the READ brought.
TEST_P(Conformance, FencedSendCarriesTheDataOfTheEarlierRead) {
  auto [qa, qb] = ConnectedPair(QpType::kRc);
  Buffer local = Reg(8192, kAll), remote = Reg(8192, kAll);
  std::memset(local.buf, 0x11, 4096);
  std::memset(remote.buf, 0xab, 4096);
  size_t bad;
  ASSERT_EQ(dev_->PostRecv(qb, {Recv(50, {remote.At(4096, 4096)})}, &bad), 0);
  SendWr r = RdmaTo(1, WrOpcode::kRdmaRead, {local.At(0, 4096)}, remote, 0);
  SendWr s = Send(2, {local.At(0, 4096)});
  s.send_flags |= send_flag::kFence;
  ASSERT_EQ(dev_->PostSend(qa, {r, s}, &bad), 0);
  auto wcs = WaitWc(cq_, 3);
  ASSERT_EQ(wcs.size(), 3u);
  for (const WorkCompletion& wc : wcs) EXPECT_EQ(wc.status, WcStatus::kSuccess) << wc.wr_id;
  for (int i = 0; i < 4096; ++i) {
    ASSERT_EQ(remote.buf[4096 + i], 0xab) << "byte " << i << ": the SEND went before the READ";
  }
}

// R22 (IBTA C10-93.1.1, rxe_req.c): a UD message longer than the MTU emits no packet and
// completes successfully; nothing arrives.
TEST_P(Conformance, UdMessageLongerThanTheMtuIsNotSentButSucceeds) {
  auto [qa, qb] = ConnectedPair(QpType::kUd);
  const uint32_t mtu = MtuBytes(pattr_.active_mtu);
  Buffer buf = Reg(4 * mtu + 4096, kAll);
  uint32_t qpn_b = 0;
  ASSERT_EQ(dev_->QpNum(qb, &qpn_b), 0);
  AhHandle ah;
  ASSERT_EQ(dev_->CreateAh(pd_, FullAttr(qb, {}).ah_attr, &ah), 0);
  size_t bad;
  ASSERT_EQ(dev_->PostRecv(qb, {Recv(60, {buf.At(2 * mtu, 2 * mtu + 40)})}, &bad), 0);
  SendWr w = Send(3, {buf.At(0, mtu + 1)});
  w.ah = ah;
  w.remote_qpn = qpn_b;
  w.remote_qkey = kQkey;
  ASSERT_EQ(dev_->PostSend(qa, {w}, &bad), 0);
  OneWc(cq_, 3, WcStatus::kSuccess);
  EXPECT_TRUE(Drain(cq_).empty()) << "nothing may arrive";
  // One MTU still goes through.
  SendWr ok = w;
  ok.wr_id = 4;
  ok.sg_list = {buf.At(0, mtu)};
  ASSERT_EQ(dev_->PostSend(qa, {ok}, &bad), 0);
  auto wcs = WaitWc(cq_, 2);
  ASSERT_EQ(wcs.size(), 2u);
  for (const WorkCompletion& wc : wcs) {
    EXPECT_EQ(wc.status, WcStatus::kSuccess) << wc.wr_id;
    // The first 40 bytes of a UD receive buffer hold the GRH; byte_len counts them only
    // when one came (always on RoCE; on InfiniBand only for a global route).
    if (wc.wr_id == 60) {
      EXPECT_EQ(wc.byte_len, mtu + ((wc.wc_flags & wc_flag::kGrh) ? 40 : 0));
    }
  }
  EXPECT_EQ(dev_->DestroyAh(ah), 0);
}

}  // namespace
}  // namespace qptwin::testing
