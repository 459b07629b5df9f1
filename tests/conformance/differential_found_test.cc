// Rules found by the whole-surface differential against rxe (docs/differences.md rows 47-50,
// 75-79): the ACK of a duplicate request (a SEND's, an atomic's), a requester that stops
// after a local error, a UD WR whose address handle went away while it waited, a UC
// WRITE_WITH_IMM with a bad R_Key into an SRQ, a responder that stays in error after
// ERR -> RTS, a receive that fails mid-message, the order of a loopback UC/UD send's two
// completions.
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "spec/bring_up.h"
#include "tests/conformance/fixture.h"

namespace qptwin::testing {
namespace {

using access::kAll;

// Transport attributes: timeout, retry_cnt, rnr_retry, min_rnr_timer on a path of `mtu`.
BringUpParams Transport(Mtu mtu, uint8_t timeout, uint8_t retry_cnt, uint8_t rnr_retry,
                        uint8_t min_rnr_timer) {
  BringUpParams p;
  p.path_mtu = mtu;
  p.timeout = timeout;
  p.retry_cnt = retry_cnt;
  p.rnr_retry = rnr_retry;
  p.min_rnr_timer = min_rnr_timer;
  return p;
}

// A signaled type 1 bind (wr_id) of 64 bytes at the start of `b`, REMOTE_READ.
MwBind SignaledBind(uint64_t wr_id, const Buffer& b) {
  MwBind bind;
  bind.wr_id = wr_id;
  bind.send_flags = send_flag::kSignaled;
  bind.bind_info.mr = b.mr;
  bind.bind_info.addr = b.Addr(0);
  bind.bind_info.length = 64;
  bind.bind_info.mw_access_flags = access::kRemoteRead;
  return bind;
}

// Brings `self` from RESET to RTS connected to `peer`: timeout 11 (8.4 ms), retry_cnt 1, PSNs
// as BringUpParams gives them (the same on every call).
int ToRtsShortTimeout(Device& dev, Mtu mtu, QpHandle self, QpHandle peer) {
  return ToRtsWith(dev, Transport(mtu, 11, 1, 0, 17), self, peer);
}

// A requester that went through RESET sends again at the PSN of a READ its peer executed.
// - A SEND: IBTA C9-105: the duplicate is acknowledged and completes. rxe (Behaviour::
//   duplicate_ack_psn_is_last_executed) ACKs it with the PSN of the last SEND/WRITE/atomic it
//   executed (none here: PSN 0 - 1), older than the SEND, so the requester ignores the ACK and
//   retries until RETRY_EXC_ERR. The peer executes nothing either way.
// - A FETCH_ADD (differential seed 20261203 sequence 1696): rxe (Behaviour::
//   dup_read_needs_its_resource) finds the READ's responder resource by PSN and replays it as an
//   atomic: the FETCH_ADD completes, its "original value" is the READ's remote address
//   (resp_res is a union), and nothing is added. Elsewhere no saved atomic result holds the
//   PSN: the duplicate is dropped and the requester runs out of retries.
TEST_P(Conformance, DuplicateRequestAtAReadsPsnIsAnsweredWhereTheDeviceDoes) {
  const Behaviour& b = GetParam().behaviour;
  for (WrOpcode op : {WrOpcode::kSend, WrOpcode::kAtomicFetchAndAdd}) {
    SCOPED_TRACE(std::string(ToName(op)));
    CqHandle ca = Cq(), cb = Cq();
    QpHandle qa = Qp(QpType::kRc, 16, 16, 2, false, ca);
    QpHandle qb = Qp(QpType::kRc, 16, 16, 2, false, cb);
    ASSERT_EQ(ToRtsShortTimeout(*dev_, pattr_.active_mtu, qa, qb), 0);
    ASSERT_EQ(ToRtsShortTimeout(*dev_, pattr_.active_mtu, qb, qa), 0);
    Buffer buf = Reg(8192, kAll);
    std::memset(buf.buf, 0, 8192);
    SendWr read = RdmaTo(1, WrOpcode::kRdmaRead, {buf.At(0, 64)}, buf, 4096);
    size_t bad = 99;
    ASSERT_EQ(dev_->PostSend(qa, {read}, &bad), 0);
    auto first = WaitWc(ca, 1);
    ASSERT_EQ(first.size(), 1u);
    ASSERT_EQ(first[0].status, WcStatus::kSuccess);
    // qa starts again at the READ's PSN: its next request is a duplicate for qb.
    ASSERT_EQ(dev_->ModifyQp(qa, StateOnly(QpState::kReset), attr::kState), 0);
    ASSERT_EQ(ToRtsShortTimeout(*dev_, pattr_.active_mtu, qa, qb), 0);
    SendWr dup = Send(2, {buf.At(128, 8)});
    if (op == WrOpcode::kAtomicFetchAndAdd) {
      dup.opcode = op;
      dup.remote_addr = buf.Addr(2048);
      dup.rkey = buf.rkey;
      dup.compare_add = 5;
    }
    ASSERT_EQ(dev_->PostSend(qa, {dup}, &bad), 0);
    auto wcs = WaitWc(ca, 1, kSecond / 2);
    ASSERT_EQ(wcs.size(), 1u);
    EXPECT_EQ(wcs[0].wr_id, 2u);
    if (op == WrOpcode::kSend) {
      const bool stale_ack = b.duplicate_ack_psn_is_last_executed;
      EXPECT_EQ(wcs[0].status, stale_ack ? WcStatus::kRetryExcErr : WcStatus::kSuccess);
      EXPECT_EQ(StateOf(qa), stale_ack ? QpState::kErr : QpState::kRts);
      EXPECT_TRUE(Drain(cb, kSecond / 20).empty()) << "the duplicate was executed";
      continue;
    }
    uint64_t orig = 0, target = 0;
    std::memcpy(&orig, buf.buf + 128, 8);
    std::memcpy(&target, buf.buf + 2048, 8);
    EXPECT_EQ(target, 0u) << "the duplicate was executed";
    if (b.dup_read_needs_its_resource) {
      EXPECT_EQ(wcs[0].status, WcStatus::kSuccess);
      EXPECT_EQ(orig, buf.Addr(4096)) << "the READ's resource answers";
    } else {
      EXPECT_EQ(wcs[0].status, WcStatus::kRetryExcErr);
    }
  }
}

// Differential sequence 1355: SEND wr 1 draws an RNR NAK (rnr_retry 7), WRITE wr 2 behind it
// has an SGE past its region's end. rxe (Behaviour::local_error_stops_retries) marks wr 2
// failed and its requester then resends nothing: wr 1 waits, even once a receive is there,
// until the QP goes to ERR, which flushes both. Where the error completes in order otherwise,
// wr 1 is retried into the receive and wr 2 reports LOC_PROT_ERR; IBTA's model flushes wr 1 at
// once.
TEST_P(Conformance, LocalErrorBehindAnRnrWaitStopsTheRetryWhereTheDeviceDoes) {
  const Behaviour& b = GetParam().behaviour;
  CqHandle ca = Cq(), cb = Cq();
  QpHandle qa = Qp(QpType::kRc, 16, 16, 2, true, ca), qb = Qp(QpType::kRc, 16, 16, 2, false, cb);
  const BringUpParams p = Transport(pattr_.active_mtu, 11, 1, 7, 17);
  ASSERT_EQ(ToRtsWith(*dev_, p, qa, qb), 0);
  ASSERT_EQ(ToRtsWith(*dev_, p, qb, qa), 0);
  Buffer buf = Reg(4096, kAll), dst = Reg(4096, kAll);
  size_t bad = 99;
  ASSERT_EQ(dev_->PostSend(qa, {Send(1, {buf.At(0, 8)})}, &bad), 0);
  SendWr write = Send(2, {buf.At(4090, 64)});  // 58 bytes past the region
  write.opcode = WrOpcode::kRdmaWrite;
  write.remote_addr = dst.Addr(0);
  write.rkey = dst.rkey;
  ASSERT_EQ(dev_->PostSend(qa, {write}, &bad), 0);
  ASSERT_EQ(dev_->PostRecv(qb, {Recv(10, {buf.At(1024, 64)})}, &bad), 0);
  if (b.local_error_stops_retries) {
    EXPECT_TRUE(Drain(ca, kSecond / 5).empty()) << "the requester retried";
    EXPECT_EQ(StateOf(qa), QpState::kRts);
    ASSERT_EQ(dev_->ModifyQp(qa, StateOnly(QpState::kErr), attr::kState), 0);
    auto wcs = WaitWc(ca, 2);
    ASSERT_EQ(wcs.size(), 2u);
    EXPECT_EQ(wcs[0].wr_id, 1u);
    EXPECT_EQ(wcs[0].status, WcStatus::kWrFlushErr);
    EXPECT_EQ(wcs[1].wr_id, 2u);
    EXPECT_EQ(wcs[1].status, WcStatus::kWrFlushErr);
    EXPECT_TRUE(Drain(cb).empty()) << "the receive was taken";
    return;
  }
  auto wcs = WaitWc(ca, 2);
  ASSERT_EQ(wcs.size(), 2u);
  EXPECT_EQ(wcs[0].wr_id, 1u);
  EXPECT_EQ(wcs[0].status, b.local_error_completes_in_order ? WcStatus::kSuccess
                                                            : WcStatus::kWrFlushErr);
  EXPECT_EQ(wcs[1].wr_id, 2u);
  EXPECT_EQ(wcs[1].status, WcStatus::kLocProtErr);
  EXPECT_EQ(StateOf(qa), QpState::kErr);
}

// Differential sequence 1035: a UD SEND waits (here in SQD), its AH is destroyed, and it runs
// after SQD -> RTS. rxe (Behaviour::ud_ah_resolved_at_send) looks the AH up only then: the WR
// fails with LOC_QP_OP_ERR, the QP goes to ERR and the next WR is flushed. A device that
// copied the AV at the post sends both.
TEST_P(Conformance, UdWrWhoseAhWasDestroyedWhileItWaitedFailsWhereTheDeviceLooksItUpLate) {
  const bool at_send = GetParam().behaviour.ud_ah_resolved_at_send;
  CqHandle ca = Cq(), cb = Cq();
  QpHandle qa = Qp(QpType::kUd, 16, 16, 2, true, ca), qb = Qp(QpType::kUd, 16, 16, 2, false, cb);
  Drive(QpType::kUd, qb, QpState::kRts);
  Drive(QpType::kUd, qa, QpState::kSqd);
  Buffer buf = Reg(4096, kAll);
  size_t bad = 99;
  ASSERT_EQ(dev_->PostRecv(qb, {Recv(10, {buf.At(0, 256)}), Recv(11, {buf.At(256, 256)})}, &bad),
            0);
  ConnectionInfo info;
  ASSERT_EQ(dev_->LocalConnectionInfo(qb, &info), 0);
  AhHandle first, second;
  ASSERT_EQ(dev_->CreateAh(pd_, FullAttr(qb, {}).ah_attr, &first), 0);
  SendWr w = Send(1, {buf.At(1024, 8)});
  w.ah = first;
  w.remote_qpn = info.qp_num;
  w.remote_qkey = kQkey;
  ASSERT_EQ(dev_->PostSend(qa, {w}, &bad), 0);  // waits: SQD starts nothing new
  EXPECT_TRUE(Drain(ca, kSecond / 20).empty());
  ASSERT_EQ(dev_->DestroyAh(first), 0);
  ASSERT_EQ(dev_->ModifyQp(qa, StateOnly(QpState::kRts), attr::kState), 0);
  ASSERT_EQ(dev_->CreateAh(pd_, FullAttr(qb, {}).ah_attr, &second), 0);
  w.wr_id = 2;
  w.ah = second;
  ASSERT_EQ(dev_->PostSend(qa, {w}, &bad), 0);  // also the doorbell for wr 1 (rxe)
  auto wcs = WaitWc(ca, 2);
  ASSERT_EQ(wcs.size(), 2u);
  EXPECT_EQ(wcs[0].wr_id, 1u);
  EXPECT_EQ(wcs[0].status, at_send ? WcStatus::kLocQpOpErr : WcStatus::kSuccess);
  EXPECT_EQ(wcs[1].wr_id, 2u);
  EXPECT_EQ(wcs[1].status, at_send ? WcStatus::kWrFlushErr : WcStatus::kSuccess);
  EXPECT_EQ(Drain(cb).size(), at_send ? 0u : 2u);
  EXPECT_EQ(dev_->DestroyAh(second), 0);
}

// Differential sequence 723: a one-packet UC WRITE_WITH_IMM past the end of the remote region,
// to a QP on an SRQ. rxe takes the receive before the R_Key check (Behaviour::
// write_imm_receive_at_last_packet) and, for UC on an SRQ, completes it with REM_ACCESS_ERR
// (rxe_resp.c RESPST_ERR_RKEY_VIOLATION, "UC/SRQ Class D"); the QP carries on. IBTA / R15:
// UC drops the message silently and the receive waits.
TEST_P(Conformance, UcWriteImmWithABadRkeyCompletesAnSrqReceiveWhereTheDeviceTakesItFirst) {
  const Behaviour& b = GetParam().behaviour;
  if (!b.supports_uc) GTEST_SKIP() << "no UC";
  CqHandle ca = Cq(), cb = Cq();
  SrqHandle srq;
  ASSERT_EQ(dev_->CreateSrq(pd_, 15, 1, &srq), 0);
  QpInitAttr init;
  init.qp_type = QpType::kUc;
  init.pd = pd_;
  init.send_cq = init.recv_cq = cb;
  init.srq = srq;
  init.cap = {16, 0, 1, 1, 0};
  QpHandle qb;
  QpCap granted;
  ASSERT_EQ(dev_->CreateQp(init, &qb, &granted), 0);
  QpHandle qa = Qp(QpType::kUc, 16, 16, 2, false, ca);
  Drive(QpType::kUc, qa, QpState::kRts, qb);
  Drive(QpType::kUc, qb, QpState::kRts, qa);
  Buffer buf = Reg(4096, kAll), dst = Reg(4096, kAll);
  size_t bad = 99;
  ASSERT_EQ(dev_->PostSrqRecv(srq, {Recv(10, {buf.At(0, 64)})}, &bad), 0);
  SendWr w = Send(1, {buf.At(1024, 8)});
  w.opcode = WrOpcode::kRdmaWriteWithImm;
  w.imm_data = 7;
  w.remote_addr = dst.Addr(8192);  // past the region's end
  w.rkey = dst.rkey;
  ASSERT_EQ(dev_->PostSend(qa, {w}, &bad), 0);
  auto swc = WaitWc(ca, 1);
  ASSERT_EQ(swc.size(), 1u);
  EXPECT_EQ(swc[0].status, WcStatus::kSuccess);  // UC: complete once sent
  auto rwc = Drain(cb);
  if (b.write_imm_receive_at_last_packet) {
    ASSERT_EQ(rwc.size(), 1u);
    EXPECT_EQ(rwc[0].wr_id, 10u);
    EXPECT_EQ(rwc[0].status, WcStatus::kRemAccessErr);
  } else {
    EXPECT_TRUE(rwc.empty()) << "the receive was completed";
  }
  EXPECT_EQ(StateOf(qb), QpState::kRts);
}

// Differential seed 20261203 sequence 143: a QP that went to ERR is moved back to RTS (legal
// with IBV_QP_CUR_STATE = RTS) and its peer sends to it. rxe (Behaviour::
// responder_ready_only_from_rtr) revives only the requester: the request is dropped and the sender
// ends with RETRY_EXC_ERR; the receive stays posted. IBTA: the QP in RTS takes the SEND.
TEST_P(Conformance, ResponderOfAQpMovedFromErrToRtsAnswersWhereTheDeviceRevivesIt) {
  const bool stays = GetParam().behaviour.responder_ready_only_from_rtr;
  CqHandle ca = Cq(), cb = Cq();
  QpHandle qa = Qp(QpType::kRc, 16, 16, 2, true, ca), qb = Qp(QpType::kRc, 16, 16, 2, false, cb);
  ASSERT_EQ(ToRtsShortTimeout(*dev_, pattr_.active_mtu, qa, qb), 0);
  ASSERT_EQ(ToRtsShortTimeout(*dev_, pattr_.active_mtu, qb, qa), 0);
  ASSERT_EQ(dev_->ModifyQp(qb, StateOnly(QpState::kErr), attr::kState), 0);
  ASSERT_EQ(ModifyToRtsClaimingRts(qb), 0);
  EXPECT_EQ(StateOf(qb), QpState::kRts);
  Buffer buf = Reg(4096, kAll);
  size_t bad = 99;
  ASSERT_EQ(dev_->PostRecv(qb, {Recv(10, {buf.At(0, 64)})}, &bad), 0);
  ASSERT_EQ(dev_->PostSend(qa, {Send(1, {buf.At(1024, 8)})}, &bad), 0);
  auto wcs = WaitWc(ca, 1, kSecond / 2);
  ASSERT_EQ(wcs.size(), 1u);
  EXPECT_EQ(wcs[0].status, stays ? WcStatus::kRetryExcErr : WcStatus::kSuccess);
  auto rwc = Drain(cb, kSecond / 20);
  if (stays) {
    EXPECT_TRUE(rwc.empty()) << "the SEND reached the receive";
  } else {
    ASSERT_EQ(rwc.size(), 1u);
    EXPECT_EQ(rwc[0].status, WcStatus::kSuccess);
  }
}

// Differential seed 20261203 sequence 1095: a 3-packet UC SEND into a receive of two packets'
// room. rxe (Behaviour::recv_error_is_malformed_wqe) places the message packet by packet: the
// first two packets land and move rq_psn, the third fails the receive with LOC_QP_OP_ERR and
// the QP goes to ERR. The IBTA profile reports LOC_LEN_ERR (and nothing of the message is
// placed).
TEST_P(Conformance, ReceiveTooSmallMidMessageKeepsThePacketsBeforeWhereTheDeviceCopiesPerPacket) {
  const Behaviour& b = GetParam().behaviour;
  if (!b.supports_uc) GTEST_SKIP() << "no UC";
  CqHandle ca = Cq(), cb = Cq();
  auto [qa, qb] = ConnectedPair(QpType::kUc, ca, cb);
  const uint32_t mtu = MtuBytes(pattr_.active_mtu);
  Buffer src = Reg(3 * mtu, kAll), dst = Reg(3 * mtu, kAll);
  std::memset(src.buf, 0x5a, 3 * mtu);
  std::memset(dst.buf, 0, 3 * mtu);
  size_t bad = 99;
  ASSERT_EQ(dev_->PostRecv(qb, {Recv(10, {dst.At(0, 2 * mtu)})}, &bad), 0);
  ASSERT_EQ(dev_->PostSend(qa, {Send(1, {src.At(0, 3 * mtu)})}, &bad), 0);
  auto swc = WaitWc(ca, 1);
  ASSERT_EQ(swc.size(), 1u);
  EXPECT_EQ(swc[0].status, WcStatus::kSuccess);  // UC: complete once sent
  auto rwc = WaitWc(cb, 1);
  ASSERT_EQ(rwc.size(), 1u);
  QpAttr a;
  QpInitAttr init;
  ASSERT_EQ(dev_->QueryQp(qb, &a, &init), 0);
  if (b.recv_error_is_malformed_wqe) {
    EXPECT_EQ(rwc[0].status, WcStatus::kLocQpOpErr);
    EXPECT_EQ(a.qp_state, QpState::kErr);
    EXPECT_EQ(a.rq_psn, BringUpParams{}.rq_psn + 2) << "the first two packets were executed";
    EXPECT_EQ(dst.buf[0], 0x5a);
    EXPECT_EQ(dst.buf[2 * mtu - 1], 0x5a);
  } else {
    EXPECT_EQ(rwc[0].status, WcStatus::kLocLenErr);
    EXPECT_EQ(dst.buf[0], 0);
  }
}

// Differential seed 20261203 sequences 154 and 1065: a UC or UD SEND between two QPs of the
// same device sharing one CQ. rxe (Behaviour::loopback_send_completes_after_receive) runs the
// receiver inline inside the send (rxe_loopback -> rxe_rcv -> the responder task), then
// completes the WQE: the receive CQE comes first. Elsewhere the send completes once it has
// left, before the receiver has it.
TEST_P(Conformance, LoopbackUnreliableSendCompletesAfterItsReceiveWhereTheDeviceRunsItInline) {
  const Behaviour& b = GetParam().behaviour;
  for (QpType type : {QpType::kUc, QpType::kUd}) {
    if (type == QpType::kUc && !b.supports_uc) continue;
    SCOPED_TRACE(ToName(type));
    CqHandle cq = Cq(16);
    auto [qa, qb] = ConnectedPair(type, cq, cq);
    Buffer buf = Reg(4096, kAll);
    size_t bad = 99;
    ASSERT_EQ(dev_->PostRecv(qb, {Recv(10, {buf.At(0, 256)})}, &bad), 0);
    SendWr wr = Send(1, {buf.At(1024, 32)});
    AhHandle ah;
    if (type == QpType::kUd) {
      ASSERT_NO_FATAL_FAILURE(AddressDatagram(qb, &wr, &ah));
    }
    ASSERT_EQ(dev_->PostSend(qa, {wr}, &bad), 0);
    auto wcs = WaitWc(cq, 2);
    ASSERT_EQ(wcs.size(), 2u);
    EXPECT_EQ(wcs[0].status, WcStatus::kSuccess);
    EXPECT_EQ(wcs[1].status, WcStatus::kSuccess);
    const uint64_t first = b.loopback_send_completes_after_receive ? 10 : 1;
    EXPECT_EQ(wcs[0].wr_id, first);
    if (type == QpType::kUd) {
      EXPECT_EQ(dev_->DestroyAh(ah), 0);
    }
  }
}

// Differential seed 20261204 sequences 475, 1415: an RC SEND between two QPs of one device that
// share a CQ, into a receive too small. rxe (Behaviour::loopback_response_before_responder_flush)
// handles the responder's NAK inline: the requester completes its SEND with the error and its
// own flush runs before the responder's QP flushes. Elsewhere the responder flushes at once.
TEST_P(Conformance, LoopbackNakIsHandledBeforeTheFailingResponderFlushesWhereTheDeviceRunsItInline) {
  const Behaviour& b = GetParam().behaviour;
  CqHandle cq = Cq(16);
  auto [qa, qb] = ConnectedPair(QpType::kRc, cq, cq);
  Buffer buf = Reg(4096, kAll);
  size_t bad = 99;
  ASSERT_EQ(dev_->PostRecv(qb, {Recv(20, {buf.At(0, 4)}), Recv(21, {buf.At(64, 64)})}, &bad), 0);
  ASSERT_EQ(dev_->PostRecv(qa, {Recv(30, {buf.At(256, 64)})}, &bad), 0);
  ASSERT_EQ(dev_->PostSend(qa, {Send(1, {buf.At(1024, 32)})}, &bad), 0);
  auto wcs = WaitWc(cq, 4);
  ASSERT_EQ(wcs.size(), 4u);
  std::vector<uint64_t> order;
  for (const WorkCompletion& wc : wcs) order.push_back(wc.wr_id);
  EXPECT_EQ(order[0], 20u) << "the failing receive completes before its NAK leaves";
  EXPECT_NE(wcs[0].status, WcStatus::kSuccess);
  if (b.loopback_response_before_responder_flush) {
    EXPECT_EQ(order, (std::vector<uint64_t>{20, 1, 30, 21}));
  } else {
    EXPECT_EQ(order, (std::vector<uint64_t>{20, 21, 1, 30}));
  }
  for (size_t i = 1; i < wcs.size(); ++i) {
    const bool flushed = wcs[i].wr_id != 1;
    EXPECT_EQ(wcs[i].status == WcStatus::kWrFlushErr, flushed) << "wr_id " << wcs[i].wr_id;
  }
}

// Differential seed 20261204 sequences 176, 353, 983: a requester reset and reconnected at PSN 0
// sends a 3-packet SEND to a responder that expects PSN 1. The first packet is a duplicate
// (ACKed again, C9-105); the second, at the expected PSN, is a SEND_MIDDLE with no message
// begun: an invalid request (rxe_resp.c check_op_seq, RESPST_ERR_MISSING_OPCODE_FIRST). The
// SEND completes with REM_INV_REQ_ERR, the responder goes to ERR and flushes its receive.
// Seed 20261217 sequence 897: the same for a 2-packet WRITE_WITH_IMM, its WRITE_LAST at the
// expected PSN after a SEND there. Only a WRITE_WITH_IMM whose earlier packets were executed
// while its last one waited for a receive (Behaviour::write_imm_receive_at_last_packet)
// resumes there.
TEST_P(Conformance, MessageStraddlingTheExpectedPsnIsAnInvalidRequest) {
  const uint32_t mtu = MtuBytes(pattr_.active_mtu);
  Buffer buf = Reg(8 * mtu, kAll);
  SendWr send = Send(2, {buf.At(mtu, 3 * mtu)});
  SendWr write_imm = Send(2, {buf.At(mtu, 2 * mtu)});
  write_imm.opcode = WrOpcode::kRdmaWriteWithImm;
  write_imm.imm_data = 7;
  write_imm.remote_addr = buf.Addr(4 * mtu);
  write_imm.rkey = buf.rkey;
  for (const SendWr& straddling : {send, write_imm}) {
    SCOPED_TRACE(ToName(straddling.opcode));
    CqHandle ca = Cq(), cb = Cq();
    QpHandle qa = Qp(QpType::kRc, 16, 16, 2, false, ca);
    QpHandle qb = Qp(QpType::kRc, 16, 16, 2, false, cb);
    ASSERT_EQ(ToRtsShortTimeout(*dev_, pattr_.active_mtu, qa, qb), 0);
    ASSERT_EQ(ToRtsShortTimeout(*dev_, pattr_.active_mtu, qb, qa), 0);
    size_t bad = 99;
    ASSERT_EQ(dev_->PostRecv(qb, {Recv(10, {buf.At(0, 64)}), Recv(11, {buf.At(4 * mtu, 4 * mtu)})},
                             &bad), 0);
    ASSERT_EQ(dev_->PostSend(qa, {Send(1, {buf.At(128, 8)})}, &bad), 0);
    auto first = WaitWc(ca, 1);
    ASSERT_EQ(first.size(), 1u);
    ASSERT_EQ(first[0].status, WcStatus::kSuccess);
    ASSERT_EQ(WaitWc(cb, 1).size(), 1u);
    // qa starts again at PSN 0: the next message's first packet is a duplicate for qb.
    ASSERT_EQ(dev_->ModifyQp(qa, StateOnly(QpState::kReset), attr::kState), 0);
    ASSERT_EQ(ToRtsShortTimeout(*dev_, pattr_.active_mtu, qa, qb), 0);
    ASSERT_EQ(dev_->PostSend(qa, {straddling}, &bad), 0);
    OneWc(ca, 2, WcStatus::kRemInvReqErr, kSecond / 2);
    EXPECT_EQ(StateOf(qb), QpState::kErr);
    OneWc(cb, 11, WcStatus::kWrFlushErr);  // nothing of the message was received
  }
}


// Differential seed 20261221 sequence 1009: a WRITE_WITH_IMM into a QP with no receive left
// its first packet executed and its last one waiting for a receive (Behaviour::
// write_imm_receive_at_last_packet). Its requester, reset and reconnected, starts again at
// PSN 0: a SEND (a duplicate) and a READ at the PSN the waiting message's last packet has.
// rxe_resp.c check_op_seq expects that message's MIDDLE/LAST there: the READ is an invalid
// request (RESPST_ERR_MISSING_OPCODE_LAST_C), NAKed, and the responder goes to ERR.
TEST_P(Conformance, NewMessageWhereAWriteWithImmWaitsIsAnInvalidRequest) {
  if (!GetParam().behaviour.write_imm_receive_at_last_packet) {
    GTEST_SKIP() << "a WRITE_WITH_IMM waits for a receive as a whole message on this device "
                    "(Behaviour::write_imm_receive_at_last_packet off): no half-executed one";
  }
  const uint32_t mtu = MtuBytes(pattr_.active_mtu);
  Buffer buf = Reg(8 * mtu, kAll);
  CqHandle ca = Cq(), cb = Cq();
  QpHandle qa = Qp(QpType::kRc, 16, 16, 2, false, ca);
  QpHandle qb = Qp(QpType::kRc, 16, 16, 2, false, cb);
  ASSERT_EQ(ToRtsShortTimeout(*dev_, pattr_.active_mtu, qa, qb), 0);
  ASSERT_EQ(ToRtsShortTimeout(*dev_, pattr_.active_mtu, qb, qa), 0);
  SendWr write_imm = Send(1, {buf.At(0, 2 * mtu)});
  write_imm.opcode = WrOpcode::kRdmaWriteWithImm;
  write_imm.imm_data = 7;
  write_imm.remote_addr = buf.Addr(4 * mtu);
  write_imm.rkey = buf.rkey;
  size_t bad = 99;
  ASSERT_EQ(dev_->PostSend(qa, {write_imm}, &bad), 0);
  auto first = WaitWc(ca, 1);  // rnr_retry 0: the RNR NAK ends it
  ASSERT_EQ(first.size(), 1u);
  ASSERT_EQ(first[0].status, WcStatus::kRnrRetryExcErr) << ToName(first[0].status);
  ASSERT_EQ(dev_->ModifyQp(qa, StateOnly(QpState::kReset), attr::kState), 0);
  ASSERT_EQ(ToRtsShortTimeout(*dev_, pattr_.active_mtu, qa, qb), 0);
  SendWr read = RdmaTo(3, WrOpcode::kRdmaRead, {buf.At(6 * mtu, 64)}, buf, 0);
  ASSERT_EQ(dev_->PostSend(qa, {Send(2, {buf.At(128, 8)}), read}, &bad), 0);
  auto wcs = Drain(ca, kSecond / 2);
  const WorkCompletion* read_wc = nullptr;
  for (const WorkCompletion& wc : wcs) {
    if (wc.wr_id == 3) read_wc = &wc;
  }
  ASSERT_NE(read_wc, nullptr);
  EXPECT_EQ(read_wc->status, WcStatus::kRemInvReqErr) << ToName(read_wc->status);
  EXPECT_EQ(StateOf(qb), QpState::kErr);
}

// Differential seed 20261206 sequence 664: a QP moved to RTS from RESET or INIT with
// IBV_QP_CUR_STATE = RTS (the kernel's table allows RTS -> RTS) never went through RTR. rxe
// (Behaviour::responder_ready_only_from_rtr) makes the responder ready only at a modify to
// RTR, so the QP drops every request: a UD message to it finds no taker. Elsewhere it
// receives.
TEST_P(Conformance, QpThatSkippedRtrReceivesWhereTheDeviceReadiesItsResponder) {
  const Behaviour& b = GetParam().behaviour;
  CqHandle cq = Cq(16);
  QpHandle qa = Qp(QpType::kUd, 16, 16, 2, false, cq);
  QpHandle qb = Qp(QpType::kUd, 16, 16, 2, false, cq);
  BringUpParams p;
  ConnectionInfo none;
  QpAttr attr;
  ASSERT_EQ(BringUpAttr(*dev_, p, none, &attr), 0);
  ASSERT_EQ(BringUp(*dev_, qa, attr, QpState::kRts), 0);
  ASSERT_EQ(BringUp(*dev_, qb, attr, QpState::kInit), 0);
  QpAttr skip = StateOnly(QpState::kRts);
  skip.cur_qp_state = QpState::kRts;
  ASSERT_EQ(dev_->ModifyQp(qb, skip, attr::kState | attr::kCurState), 0);
  EXPECT_EQ(StateOf(qb), QpState::kRts);
  Buffer buf = Reg(4096, kAll);
  size_t bad = 99;
  ASSERT_EQ(dev_->PostRecv(qb, {Recv(10, {buf.At(0, 256)})}, &bad), 0);
  SendWr wr = Send(1, {buf.At(1024, 8)});
  AhHandle ah;
  ASSERT_NO_FATAL_FAILURE(AddressDatagram(qb, &wr, &ah));
  ASSERT_EQ(dev_->PostSend(qa, {wr}, &bad), 0);
  auto wcs = Drain(cq, kSecond / 5);
  ASSERT_GE(wcs.size(), 1u);
  size_t received = 0;
  for (const WorkCompletion& wc : wcs) received += wc.wr_id == 10;
  EXPECT_EQ(received, b.responder_ready_only_from_rtr ? 0u : 1u);
  EXPECT_EQ(dev_->DestroyAh(ah), 0);
}

// Differential seed 20261206 sequence 1918 (and 20261202 sequence 2386 for the post): which of
// its queues a requester failed by a loopback NAK flushes first. rxe_qp_error schedules the
// receive flush (responder task) before the send flush (completer task); from a post, in
// process context, they run in that order. A request a timer resent runs in a tasklet, whose
// own loop flushes the send queue before the scheduled receive flush runs. Here the SEND waits
// in an RNR loop until the peer's receive, too small, is posted: the retry fails it.
TEST_P(Conformance, RequesterFailedOnARetryFlushesItsSendQueueFirstWhereTheDeviceDoes) {
  const Behaviour& b = GetParam().behaviour;
  CqHandle cq = Cq(32);
  auto [qa, qb] = ConnectedPair(QpType::kRc, cq, cq);
  Buffer buf = Reg(8192, kAll);
  size_t bad = 99;
  ASSERT_EQ(dev_->PostRecv(qa, {Recv(30, {buf.At(0, 64)})}, &bad), 0);
  SendWr fenced = Send(2, {buf.At(2048, 8)});
  fenced.send_flags |= send_flag::kFence;
  ASSERT_EQ(dev_->PostSend(qa, {Send(1, {buf.At(1024, 32)}), fenced}, &bad), 0);
  EXPECT_TRUE(Drain(cq, kSecond / 50).empty()) << "the SEND waits in its RNR loop";
  ASSERT_EQ(dev_->PostRecv(qb, {Recv(20, {buf.At(4096, 4)}), Recv(21, {buf.At(4160, 64)})}, &bad),
            0);
  auto wcs = WaitWc(cq, 5);
  ASSERT_EQ(wcs.size(), 5u);
  std::vector<uint64_t> order;
  for (const WorkCompletion& wc : wcs) order.push_back(wc.wr_id);
  EXPECT_EQ(order[0], 20u);
  EXPECT_NE(wcs[0].status, WcStatus::kSuccess);
  for (const WorkCompletion& wc : wcs) {
    if (wc.wr_id == 1) {
      EXPECT_NE(wc.status, WcStatus::kSuccess);
    }
  }
  if (b.loopback_response_before_responder_flush && b.rc_flushes_rq_first) {
    EXPECT_EQ(order, (std::vector<uint64_t>{20, 1, 2, 30, 21}));
  } else {
    std::vector<uint64_t> sorted = order;
    std::sort(sorted.begin(), sorted.end());
    EXPECT_EQ(sorted, (std::vector<uint64_t>{1, 2, 20, 21, 30}));
  }
}

// Differential seed 20261208 sequence 1767 (and 20261209 sequence 912). rxe's requester takes one
// send WQE per run while the QP is in ERR (rxe_req.c: the WQE at req.wqe_index is marked
// WR_FLUSH_ERR, then -EAGAIN ends the run), but the completer flushes them all; a modify out of
// ERR other than to RESET leaves req.wqe_index behind (Behaviour::
// requester_walks_one_wqe_in_error). Three SENDs posted in ERR in one call are flushed, the
// post's run took one: after ERR -> RTS (IBV_QP_CUR_STATE = RTS) the next post sends the other
// two again, without completions, before its own. Elsewhere the queue starts afresh.
TEST_P(Conformance, SendsPostedInErrGoOutAgainAfterLeavingErrWhereTheDeviceLeavesThemInTheRing) {
  const Behaviour& b = GetParam().behaviour;
  CqHandle ca = Cq(32), cb = Cq(32);
  auto [qa, qb] = ConnectedPair(QpType::kUd, ca, cb, 16, /*sig_all_a=*/true);
  Buffer buf = Reg(8192, kAll);
  AhHandle ah;
  SendWr probe = Send(0, {});
  ASSERT_NO_FATAL_FAILURE(AddressDatagram(qb, &probe, &ah));
  auto addressed = [&probe](uint64_t wr_id, Sge sge) {
    SendWr wr = probe;
    wr.wr_id = wr_id;
    wr.sg_list = {sge};
    return wr;
  };
  size_t bad = 99;
  // A SGE past the end of its region fails the first SEND locally.
  ASSERT_EQ(dev_->PostSend(qa, {addressed(1, {buf.Addr(8192 - 8), 64, buf.lkey})}, &bad), 0);
  auto wcs = WaitWc(ca, 1);
  ASSERT_EQ(wcs.size(), 1u);
  EXPECT_NE(wcs[0].status, WcStatus::kSuccess);
  // ERR, or SQE where a UD send error stops only the send queue (IBTA C10-38): moved to ERR.
  ASSERT_EQ(dev_->ModifyQp(qa, StateOnly(QpState::kErr), attr::kState), 0);
  ASSERT_EQ(dev_->PostSend(qa, {addressed(2, buf.At(0, 10)), addressed(3, buf.At(0, 11)),
                                addressed(4, buf.At(0, 12))},
                           &bad),
            0);
  wcs = WaitWc(ca, 3);
  ASSERT_EQ(wcs.size(), 3u);
  for (const WorkCompletion& wc : wcs) EXPECT_EQ(wc.status, WcStatus::kWrFlushErr);
  ASSERT_EQ(ModifyToRtsClaimingRts(qa), 0);
  for (uint64_t i = 0; i < 4; ++i) {
    ASSERT_EQ(dev_->PostRecv(qb, {Recv(100 + i, {buf.At(4096 + 1024 * i, 1024)})}, &bad), 0);
  }
  ASSERT_EQ(dev_->PostSend(qa, {addressed(5, buf.At(0, 50))}, &bad), 0);
  OneWc(ca, 5, WcStatus::kSuccess);
  auto received = Drain(cb, kSecond / 5);
  std::vector<uint32_t> lengths;
  for (const WorkCompletion& wc : received) {
    EXPECT_EQ(wc.status, WcStatus::kSuccess);
    lengths.push_back(wc.byte_len - ((wc.wc_flags & wc_flag::kGrh) ? 40 : 0));  // GRH area
  }
  if (b.requester_walks_one_wqe_in_error) {
    EXPECT_EQ(lengths, (std::vector<uint32_t>{11, 12, 50})) << "WRs 3 and 4 went out again";
  } else {
    EXPECT_EQ(lengths, (std::vector<uint32_t>{50}));
  }
  EXPECT_TRUE(Drain(ca).empty()) << "no completion for what went out again";
  EXPECT_EQ(dev_->DestroyAh(ah), 0);
}

// Behaviour::retrans_timer_runs_out (examples/fidelity/22): rxe never stops an RC QP's
// retransmit timer once armed (only destroying the QP deletes it).
// - A SEND posted while the timer of an earlier, acknowledged SEND is pending does not re-arm
//   it: to a peer gone silent it fails when that timer runs out, ~35 ms after its post here
//   (timeout 14: 67 ms), where a device that armed a timer for it waits 67 ms.
// - The timer running out in ERR leaves rxe's comp.timeout set through RESET -> RTS; the
//   completer run a BIND_MW schedules takes it as a timeout: a SEND to the silent peer fails
//   at once.
TEST_P(Conformance, TransportTimerRunsOutWhereTheDeviceNeverStopsIt) {
  const Behaviour& b = GetParam().behaviour;
  CqHandle ca = Cq(), cb = Cq();
  QpHandle qa = Qp(QpType::kRc, 16, 16, 2, true, ca), qb = Qp(QpType::kRc, 16, 16, 2, false, cb);
  const BringUpParams p = Transport(pattr_.active_mtu, 14, 0, 0, 12);
  ASSERT_EQ(ToRtsWith(*dev_, p, qa, qb), 0);
  ASSERT_EQ(ToRtsWith(*dev_, p, qb, qa), 0);
  // Where the timer runs out (rxe), `n` completions come within `window_ns`; elsewhere only
  // after the SEND's own timeout.
  auto completions = [&](int n, uint64_t window_ns, const char* why) {
    std::vector<WorkCompletion> got = Drain(ca, window_ns);
    if (b.retrans_timer_runs_out) {
      EXPECT_EQ(got.size(), static_cast<size_t>(n)) << why;
      return got;
    }
    EXPECT_TRUE(got.empty()) << "the SEND timed out before its own timeout";
    return WaitWc(ca, n);
  };
  Buffer buf = Reg(8192, kAll);
  size_t bad = 99;
  ASSERT_EQ(dev_->PostRecv(qb, {Recv(10, {buf.At(4096, 64)})}, &bad), 0);
  ASSERT_EQ(dev_->PostSend(qa, {Send(1, {buf.At(0, 8)})}, &bad), 0);
  auto wcs = WaitWc(ca, 1);
  ASSERT_EQ(wcs.size(), 1u);
  ASSERT_EQ(wcs[0].status, WcStatus::kSuccess);
  EXPECT_TRUE(Drain(ca, 30 * kSecond / 1000).empty());
  ASSERT_EQ(dev_->ModifyQp(qb, StateOnly(QpState::kErr), attr::kState), 0);
  ASSERT_EQ(dev_->PostSend(qa, {Send(2, {buf.At(0, 8)})}, &bad), 0);
  wcs = completions(1, 45 * kSecond / 1000, "the first SEND's timer ran out");
  ASSERT_EQ(wcs.size(), 1u);
  EXPECT_EQ(wcs[0].wr_id, 2u);
  EXPECT_EQ(wcs[0].status, WcStatus::kRetryExcErr);
  EXPECT_EQ(StateOf(qa), QpState::kErr);

  // The same requester, its peer still silent: a SEND, then ERR while its timer runs.
  ASSERT_EQ(dev_->ModifyQp(qa, StateOnly(QpState::kReset), attr::kState), 0);
  ASSERT_EQ(ToRtsWith(*dev_, p, qa, qb), 0);
  ASSERT_EQ(dev_->PostSend(qa, {Send(3, {buf.At(0, 8)})}, &bad), 0);
  ASSERT_EQ(dev_->ModifyQp(qa, StateOnly(QpState::kErr), attr::kState), 0);
  wcs = Drain(ca, 100 * kSecond / 1000);  // the timer runs out meanwhile
  ASSERT_EQ(wcs.size(), 1u);
  EXPECT_EQ(wcs[0].status, WcStatus::kWrFlushErr);
  ASSERT_EQ(dev_->ModifyQp(qa, StateOnly(QpState::kReset), attr::kState), 0);
  ASSERT_EQ(ToRtsWith(*dev_, p, qa, qb), 0);
  Buffer target = Reg(4096, kAll | access::kMwBind);
  MwHandle mw;
  uint32_t rkey = 0;
  ASSERT_EQ(dev_->AllocMw(pd_, MwType::kType1, &mw, &rkey), 0);
  ASSERT_EQ(dev_->PostSend(qa, {Send(4, {buf.At(0, 8)})}, &bad), 0);
  ASSERT_EQ(dev_->BindMw(qa, mw, SignaledBind(5, target), &rkey), 0);
  wcs = completions(2, 20 * kSecond / 1000, "the bind's completer run took the stale timeout");
  ASSERT_EQ(wcs.size(), 2u);
  EXPECT_EQ(wcs[0].wr_id, 4u);
  EXPECT_EQ(wcs[0].status, WcStatus::kRetryExcErr);
  EXPECT_EQ(wcs[1].wr_id, 5u);
  EXPECT_EQ(wcs[1].status, WcStatus::kWrFlushErr);
  EXPECT_EQ(dev_->DeallocMw(mw), 0);
}

// A SEND_WITH_INV whose rkey cannot be invalidated (a region's) into a receive CQ with no room
// (differential seed 20261216 sequence 1543; examples/fidelity/28): rxe_resp.c acknowledges
// the SEND only after do_complete has posted the receive's REM_INV_REQ_ERR; rxe_cq_post
// fails (RESPST_ERR_CQ_OVERFLOW), the responder goes to ERR and sends nothing, and the
// sender runs out of retries.
TEST_P(Conformance, FailedInvalidateIntoAFullReceiveCqIsNotAcknowledged) {
  CqHandle ca = Cq(16), cb = Cq(1);
  QpHandle qa = Qp(QpType::kRc, 16, 16, 2, false, ca), qb = Qp(QpType::kRc, 16, 16, 2, false, cb);
  const BringUpParams p = Transport(pattr_.active_mtu, 11, 0, 7, 12);
  ASSERT_EQ(ToRtsWith(*dev_, p, qa, qb), 0);
  ASSERT_EQ(ToRtsWith(*dev_, p, qb, qa), 0);
  Buffer buf = Reg(8192, kAll);
  size_t bad = 99;
  ASSERT_EQ(dev_->PostRecv(qb, {Recv(10, {buf.At(4096, 64)}), Recv(11, {buf.At(6144, 64)})}, &bad),
            0);
  ASSERT_EQ(dev_->PostSend(qa, {Send(1, {buf.At(0, 8)})}, &bad), 0);
  auto wcs = WaitWc(ca, 1);
  ASSERT_EQ(wcs.size(), 1u);
  ASSERT_EQ(wcs[0].status, WcStatus::kSuccess);  // its receive CQE fills cb
  SendWr inv = Send(2, {buf.At(0, 8)});
  inv.opcode = WrOpcode::kSendWithInv;
  inv.imm_data = buf.rkey;  // a region's rkey: the responder refuses to invalidate it
  ASSERT_EQ(dev_->PostSend(qa, {inv}, &bad), 0);
  OneWc(ca, 2, WcStatus::kRetryExcErr);
  EXPECT_EQ(StateOf(qb), QpState::kErr);
  wcs = Drain(cb);
  ASSERT_EQ(wcs.size(), 1u);  // only the first receive's: the next one did not fit
  EXPECT_EQ(wcs[0].wr_id, 10u);
}

// Differential seed 20261223 sequence 811: the same for a receive that fails. A SEND longer
// than its receive: the responder completes the receive with an error and NAKs (class A/C,
// RESPST_COMPLETE then RESPST_ACKNOWLEDGE), but only after do_complete posted the CQE. Into
// a full receive CQ it returns RESPST_ERR_CQ_OVERFLOW (class G): the responder goes to ERR
// and sends no NAK; the sender times out.
TEST_P(Conformance, ReceiveErrorIntoAFullReceiveCqIsNotNaked) {
  CqHandle ca = Cq(16), cb = Cq(1);
  QpHandle qa = Qp(QpType::kRc, 16, 16, 2, false, ca), qb = Qp(QpType::kRc, 16, 16, 2, false, cb);
  const BringUpParams p = Transport(pattr_.active_mtu, 11, 0, 7, 12);
  ASSERT_EQ(ToRtsWith(*dev_, p, qa, qb), 0);
  ASSERT_EQ(ToRtsWith(*dev_, p, qb, qa), 0);
  Buffer buf = Reg(8192, kAll);
  size_t bad = 99;
  ASSERT_EQ(dev_->PostRecv(qb, {Recv(10, {buf.At(4096, 64)}), Recv(11, {buf.At(6144, 16)})}, &bad),
            0);
  ASSERT_EQ(dev_->PostSend(qa, {Send(1, {buf.At(0, 8)})}, &bad), 0);
  auto wcs = WaitWc(ca, 1);
  ASSERT_EQ(wcs.size(), 1u);
  ASSERT_EQ(wcs[0].status, WcStatus::kSuccess);  // its receive CQE fills cb
  SendWr big = Send(2, {buf.At(0, 64)});         // 64 bytes into the 16-byte receive
  big.send_flags = send_flag::kSignaled;
  ASSERT_EQ(dev_->PostSend(qa, {big}, &bad), 0);
  OneWc(ca, 2, WcStatus::kRetryExcErr);
  EXPECT_EQ(StateOf(qb), QpState::kErr);
  wcs = Drain(cb);
  ASSERT_EQ(wcs.size(), 1u);  // only the first receive's: the failed one's did not fit
  EXPECT_EQ(wcs[0].wr_id, 10u);
}

// RTS -> SQD after a local error behind an unacknowledged SEND (differential seed 20261216
// sequence 1763; examples/fidelity/29). rxe (Behaviour::sqd_retry_unsends) sets the stopped
// requester running again (rxe_qp_drain: req.state DRAIN over QP_STATE_ERROR): when the SEND's
// timer runs out, req_retry sets every WQE from the head back to posted, the failed bind too,
// and the SQ is drained with the SEND unacknowledged. SQD -> RTS is allowed; the next doorbell
// resends the SEND and the bind fails again. Elsewhere the QP reaches ERR by the local error or
// the retries running out, and the SQ never drains.
TEST_P(Conformance, SqdLetsARequesterStoppedByALocalErrorRetryWhereTheDeviceRevivesIt) {
  const Behaviour& b = GetParam().behaviour;
  CqHandle ca = Cq(), cb = Cq();
  QpHandle qa = Qp(QpType::kRc, 16, 16, 2, false, ca), qb = Qp(QpType::kRc, 16, 16, 2, false, cb);
  const BringUpParams p = Transport(pattr_.active_mtu, 11, 1, 0, 12);
  ASSERT_EQ(ToRtsWith(*dev_, p, qa, qb), 0);
  ASSERT_EQ(ToRtsWith(*dev_, p, qb, qa), 0);
  ASSERT_EQ(dev_->ModifyQp(qb, StateOnly(QpState::kErr), attr::kState), 0);  // a silent peer
  Buffer buf = Reg(8192, kAll);
  Buffer plain = Reg(4096, kAll);  // no MW_BIND: a bind into it fails at the requester
  MwHandle mw;
  uint32_t rkey = 0;
  ASSERT_EQ(dev_->AllocMw(pd_, MwType::kType1, &mw, &rkey), 0);
  size_t bad = 99;
  ASSERT_EQ(dev_->PostSend(qa, {Send(1, {buf.At(0, 8)})}, &bad), 0);
  ASSERT_EQ(dev_->BindMw(qa, mw, SignaledBind(2, plain), &rkey), 0);
  ASSERT_EQ(dev_->ModifyQp(qa, StateOnly(QpState::kSqd), attr::kState), 0);
  const int drained = dev_->WaitForAsyncEvent(EventType::kSqDrained, qa, kSecond / 5);
  if (!(b.sqd_retry_unsends && b.local_error_stops_retries)) {
    EXPECT_NE(drained, 0) << "the SQ drained with an unacknowledged SEND";
    ASSERT_EQ(dev_->ModifyQp(qa, StateOnly(QpState::kErr), attr::kState), 0);
    EXPECT_EQ(Drain(ca).size(), 2u);
    EXPECT_EQ(dev_->DeallocMw(mw), 0);
    return;
  }
  ASSERT_EQ(drained, 0) << "the retry in SQD drained the SQ";
  EXPECT_TRUE(Drain(ca, 0).empty());
  EXPECT_EQ(StateOf(qa), QpState::kSqd);
  ASSERT_EQ(dev_->ModifyQp(qa, StateOnly(QpState::kRts), attr::kState), 0);
  ASSERT_EQ(dev_->PostSend(qa, {Send(3, {buf.At(0, 8)})}, &bad), 0);
  auto wcs = WaitWc(ca, 3);
  ASSERT_EQ(wcs.size(), 3u);
  EXPECT_EQ(wcs[0].wr_id, 1u);
  EXPECT_EQ(wcs[0].status, WcStatus::kRetryExcErr) << ToName(wcs[0].status);
  EXPECT_EQ(wcs[1].wr_id, 2u);
  EXPECT_EQ(wcs[1].status, WcStatus::kWrFlushErr) << ToName(wcs[1].status);
  EXPECT_EQ(wcs[2].wr_id, 3u);
  EXPECT_EQ(wcs[2].status, WcStatus::kWrFlushErr) << ToName(wcs[2].status);
  EXPECT_EQ(dev_->DeallocMw(mw), 0);
}

// Row 137 (differential seed 301565882534 sequence 1353, rxe 3 of 3): qa's SEND fails
// RNR_RETRY_EXC_ERR at its PSN p (comp.psn stays there), qa goes ERR -> RTS claiming RTS, and
// its READ (PSN p + 1) reaches a responder still expecting p, which NAKs it (sequence error,
// PSN p). rxe (Behaviour::nak_behind_head_hits_head, rxe_comp.c check_psn: before the head's
// last PSN, not before comp.psn) takes it as the READ's NAK: with retry_cnt 0 the READ ends
// RETRY_EXC_ERR at once, and a READ posted 2 ms later is flushed. Elsewhere the NAK answers
// no request: the READ ends at its timeout (8 ms).
TEST_P(Conformance, ANakBetweenCompPsnAndTheOldestWrIsItsNakWhereTheDeviceComparesThem) {
  const Behaviour& b = GetParam().behaviour;
  Buffer buf = Reg(8192, kAll);
  RcPair pair;
  const BringUpParams p = Transport(pattr_.active_mtu, 11, 0, 0, 12);
  RcPairAfterRnrFailure(p, false, buf, &pair);
  if (HasFatalFailure()) return;
  const auto [ca, cb, qa, qb] = pair;
  size_t bad = 99;
  std::vector<WorkCompletion> wcs;
  if (ModifyToRtsClaimingRts(qa) != 0) GTEST_SKIP() << "the device keeps the QP in ERR";
  ASSERT_EQ(dev_->PostSend(qa, {RdmaTo(2, WrOpcode::kRdmaRead, {buf.At(4096, 64)}, buf, 0)}, &bad),
            0);
  const bool hits = b.nak_behind_head_hits_head;
  wcs = Drain(ca, kSecond / 500);
  if (hits) {
    ASSERT_EQ(wcs.size(), 1u) << "the NAK at comp.psn ends the READ at once";
    EXPECT_EQ(wcs[0].wr_id, 2u);
    EXPECT_EQ(wcs[0].status, WcStatus::kRetryExcErr) << ToName(wcs[0].status);
  } else {
    EXPECT_TRUE(wcs.empty()) << "the READ waits for its timeout";
  }
  ASSERT_EQ(dev_->PostSend(qa, {RdmaTo(3, WrOpcode::kRdmaRead, {buf.At(5000, 64)}, buf, 64)}, &bad),
            0);
  const std::vector<WorkCompletion> rest = WaitWc(ca, hits ? 1 : 2);
  std::vector<WorkCompletion> all = wcs;
  all.insert(all.end(), rest.begin(), rest.end());
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0].wr_id, 2u);
  EXPECT_EQ(all[0].status, WcStatus::kRetryExcErr) << ToName(all[0].status);
  EXPECT_EQ(all[1].wr_id, 3u);
  EXPECT_EQ(all[1].status, WcStatus::kWrFlushErr) << ToName(all[1].status);
  QpAttr attr;
  QpInitAttr init;
  ASSERT_EQ(dev_->QueryQp(qa, &attr, &init), 0);
  // The second READ never goes out: posted in ERR (the NAK's), or held behind the first by
  // max_rd_atomic 1 until the timeout's ERR.
  EXPECT_EQ(attr.sq_psn, p.sq_psn + 2);
}

// Row 138 (differential seed 301565882534 sequence 1830, rxe 3 of 3): a type 1 bind posted
// behind an RNR-NAKed SEND runs during the RNR wait (Behaviour::rnr_wait_sends_new_wqes); the
// RNR retry resends the SEND, whose ACK retires both, and the requester then runs the bind's
// consumed slot again: the bind fails there (its MW's rkey has moved on), rxe_req.c marks it
// and sets req.state ERROR, and no CQE comes (the completer's head is past it): qa stays in
// RTS with its requester stopped. RTS -> SQD sets req.state DRAIN over ERROR (rxe_qp_drain):
// a SEND posted in SQD waits, and after SQD -> RTS the next doorbell sends both. Without the
// revival the SEND posted in SQD is flushed and qa goes to ERR.
TEST_P(Conformance, SqdRevivesARequesterAConsumedSlotStoppedWhereTheDeviceSetsDrainOverError) {
  CqHandle ca = Cq(), cb = Cq();
  QpHandle qa = Qp(QpType::kRc, 16, 16, 2, false, ca), qb = Qp(QpType::kRc, 16, 16, 2, false, cb);
  const BringUpParams p = Transport(pattr_.active_mtu, 14, 1, 7, 17);
  ASSERT_EQ(ToRtsWith(*dev_, p, qa, qb), 0);
  ASSERT_EQ(ToRtsWith(*dev_, p, qb, qa), 0);
  Buffer buf = Reg(16384, kAll | access::kMwBind);
  MwHandle mw;
  uint32_t rkey = 0;
  ASSERT_EQ(dev_->AllocMw(pd_, MwType::kType1, &mw, &rkey), 0);
  size_t bad = 99;
  ASSERT_EQ(dev_->PostSend(qa, {Send(1, {buf.At(0, 8)})}, &bad), 0);  // no receive yet: RNR
  EXPECT_TRUE(Drain(ca, kSecond / 300).empty());
  MwBind bind = SignaledBind(2, buf);
  bind.send_flags = 0;  // unsignaled, as the differential's was
  ASSERT_EQ(dev_->BindMw(qa, mw, bind, &rkey), 0);
  ASSERT_EQ(dev_->PostRecv(qb, {Recv(100, {buf.At(8192, 64)})}, &bad), 0);
  OneWc(ca, 1, WcStatus::kSuccess);
  EXPECT_TRUE(Drain(ca, kSecond / 50).empty());
  EXPECT_EQ(StateOf(qa), QpState::kRts);
  ASSERT_EQ(dev_->ModifyQp(qa, StateOnly(QpState::kSqd), attr::kState), 0);
  ASSERT_EQ(dev_->PostRecv(qb, {Recv(101, {buf.At(8192, 64)}), Recv(102, {buf.At(8192, 64)})},
                           &bad),
            0);
  ASSERT_EQ(dev_->PostSend(qa, {Send(3, {buf.At(0, 8)})}, &bad), 0);
  auto wcs = Drain(ca, kSecond / 50);
  // Every device holds it in SQD; a requester stopped for good would flush it.
  EXPECT_TRUE(wcs.empty()) << "the SEND waits in SQD";
  EXPECT_EQ(StateOf(qa), QpState::kSqd);
  ASSERT_EQ(dev_->ModifyQp(qa, StateOnly(QpState::kRts), attr::kState), 0);
  ASSERT_EQ(dev_->PostSend(qa, {Send(4, {buf.At(0, 8)})}, &bad), 0);
  wcs = WaitWc(ca, 2);
  ASSERT_EQ(wcs.size(), 2u);
  EXPECT_EQ(wcs[0].wr_id, 3u);
  EXPECT_EQ(wcs[0].status, WcStatus::kSuccess) << ToName(wcs[0].status);
  EXPECT_EQ(wcs[1].wr_id, 4u);
  EXPECT_EQ(wcs[1].status, WcStatus::kSuccess) << ToName(wcs[1].status);
  EXPECT_EQ(dev_->DeallocMw(mw), 0);
}

// Row 139 (differential seed 970377600547 sequence 1120, rxe 3 of 3): qa's SEND fails
// RNR_RETRY_EXC_ERR at PSN p, three SENDs posted in ERR are flushed, and after ERR -> RTS
// (claiming RTS) rxe's requester sends the two it never took again, as ghosts, before the
// program's next SEND (Behaviour::requester_walks_one_wqe_in_error, row 91). qb still expects
// p, so the first ghost (p + 1) draws a sequence NAK at p. rxe_comp.c get_wqe compares a
// response only with the WQE at the consumer index, past the ghosts: the program's SEND, not
// started yet (the NAK comes back over loopback inside the requester's send), so the NAK is
// dropped. qb drops the rest as out of sequence, and the SEND ends RETRY_EXC_ERR at its
// timeout (retry_cnt 0), its QP in RTS until then. Taken as a ghost's NAK, it moved qa to ERR
// at once and the SEND was flushed. Elsewhere the SEND is the first after ERR -> RTS: it goes
// at p + 1, draws the NAK itself and fails RETRY_EXC_ERR too.
TEST_P(Conformance, AGhostsNakIsDroppedWhileTheWrPostedBehindItWaits) {
  Buffer buf = Reg(8192, kAll);
  RcPair pair;
  RcPairAfterRnrFailure(Transport(pattr_.active_mtu, 11, 0, 0, 12), true, buf, &pair);
  if (HasFatalFailure()) return;
  const auto [ca, cb, qa, qb] = pair;
  size_t bad = 99;
  ASSERT_EQ(dev_->PostSend(qa,
                           {Send(2, {buf.At(0, 10)}), Send(3, {buf.At(0, 11)}),
                            Send(4, {buf.At(0, 12)})},
                           &bad),
            0);
  auto wcs = WaitWc(ca, 3);
  ASSERT_EQ(wcs.size(), 3u);
  for (const WorkCompletion& wc : wcs) EXPECT_EQ(wc.status, WcStatus::kWrFlushErr);
  if (ModifyToRtsClaimingRts(qa) != 0) GTEST_SKIP() << "the device keeps the QP in ERR";
  ASSERT_EQ(dev_->PostRecv(qb, {Recv(100, {buf.At(4096, 64)})}, &bad), 0);
  ASSERT_EQ(dev_->PostSend(qa, {Send(5, {buf.At(0, 50)})}, &bad), 0);
  // The transport timeout is 8.4 ms (4.096 us * 2^11); rxe's timer runs out on a 4 ms tick.
  EXPECT_TRUE(Drain(ca, kSecond / 500).empty()) << "the NAK ended nothing";
  EXPECT_EQ(StateOf(qa), QpState::kRts);
  OneWc(ca, 5, WcStatus::kRetryExcErr);
  EXPECT_TRUE(Drain(cb).empty()) << "qb took nothing out of sequence";
}

// Row 135 (differential seed 20261245 sequence 13319; probe rnr-sqd-fine): a 3-packet
// WRITE_WITH_IMM RNR-NAKed at its last packet (Behaviour::write_imm_receive_at_last_packet),
// the QP moved to SQD during the RNR loop. rxe's RNR timer then retries in DRAIN (Behaviour::
// sqd_retry_unsends): req_retry puts the WQE back to posted with req.psn at comp.psn, past the
// two packets acknowledged, and retry_first_write_send steps its opcode past them, so the SQ
// drains with sq_psn at the last packet. After a receive and SQD -> RTS the message goes on
// with that packet (WRITE_LAST_WITH_IMM), which the waiting responder takes: the WRITE and the
// receive complete with all 3001 bytes. Resent as a new message from that PSN instead, its
// first packet is an invalid request there (REM_INV_REQ_ERR). Every device completes both.
TEST_P(Conformance, AMessageRnrNakedAtItsLastPacketGoesOnFromItAfterSqd) {
  const Behaviour& b = GetParam().behaviour;
  // Timeout 14 (67 ms): the RNR timer (min_rnr_timer 17: 3.84 ms) retries long before it.
  const BringUpParams p = Transport(Mtu::k1024, 14, 7, 7, 17);
  const bool unsends = b.sqd_retry_unsends && b.write_imm_receive_at_last_packet;
  // late: SQD 20 ms into the RNR loop (a retry round's duplicate ACK acknowledged the first
  // two packets). early: SQD right after the post, a one-packet WRITE behind the message (its
  // NAK PSN sequence error acknowledged them: probe rnr-sqd-early, rxe 3 of 3 at sq_psn 2).
  auto run = [&](bool early) {
    SCOPED_TRACE(early ? "SQD before the first RNR retry" : "SQD during the RNR loop");
    CqHandle ca = Cq(), cb = Cq();
    QpHandle qa = Qp(QpType::kRc, 16, 16, 2, false, ca);
    QpHandle qb = Qp(QpType::kRc, 16, 16, 2, false, cb);
    ASSERT_EQ(ToRtsWith(*dev_, p, qa, qb), 0);
    ASSERT_EQ(ToRtsWith(*dev_, p, qb, qa), 0);
    Buffer buf = Reg(16384, kAll);
    for (size_t i = 0; i < 4096; ++i) buf.buf[i] = static_cast<uint8_t>(i * 7 + 1);
    constexpr uint32_t kLen = 3001;  // 1024 + 1024 + 953: three packets
    std::vector<SendWr> wrs = {RdmaTo(1, WrOpcode::kRdmaWriteWithImm, {buf.At(0, kLen)}, buf, 8192)};
    wrs[0].imm_data = 0x1234;
    if (early) wrs.push_back(RdmaTo(3, WrOpcode::kRdmaWrite, {buf.At(4000, 8)}, buf, 13000));
    size_t bad = 99;
    ASSERT_EQ(dev_->PostSend(qa, wrs, &bad), 0);
    if (!early) {
      EXPECT_TRUE(Drain(ca, kSecond / 50).empty()) << "no receive: RNR NAKs for ever";
    }
    QpAttr sqd = StateOnly(QpState::kSqd);
    sqd.en_sqd_async_notify = true;
    ASSERT_EQ(dev_->ModifyQp(qa, sqd, attr::kState | attr::kEnSqdAsyncNotify), 0);
    if (unsends) {
      // The next RNR retry (within 8 ms on rxe) drains the SQ with the WRITE unanswered.
      ASSERT_EQ(dev_->WaitForAsyncEvent(EventType::kSqDrained, qa, kSecond / 5), 0);
      QpAttr attr;
      QpInitAttr init;
      ASSERT_EQ(dev_->QueryQp(qa, &attr, &init), 0);
      EXPECT_EQ(attr.sq_psn, p.sq_psn + 2) << "req.psn at the NAKed last packet";
      EXPECT_FALSE(attr.sq_draining);
    }
    EXPECT_TRUE(Drain(ca, 0).empty());
    ASSERT_EQ(dev_->PostRecv(qb, {Recv(100, {buf.At(12288, 64)})}, &bad), 0);
    if (!unsends) {  // IBTA: the drain completes the messages in flight, RNR retries included
      ASSERT_EQ(dev_->WaitForAsyncEvent(EventType::kSqDrained, qa, kSecond / 5), 0);
    }
    ASSERT_EQ(dev_->ModifyQp(qa, StateOnly(QpState::kRts), attr::kState), 0);
    // rxe: the WQEs the drain put back wait for a doorbell (RTS schedules no requester).
    ASSERT_EQ(
        dev_->PostSend(qa, {RdmaTo(2, WrOpcode::kRdmaWrite, {buf.At(4096, 8)}, buf, 12800)}, &bad),
        0);
    const std::vector<uint64_t> want = early ? std::vector<uint64_t>{1, 3, 2}
                                             : std::vector<uint64_t>{1, 2};
    auto wcs = WaitWc(ca, static_cast<int>(want.size()));
    ASSERT_EQ(wcs.size(), want.size());
    for (size_t k = 0; k < want.size(); ++k) {
      EXPECT_EQ(wcs[k].wr_id, want[k]) << "completion " << k;
      EXPECT_EQ(wcs[k].status, WcStatus::kSuccess) << ToName(wcs[k].status);
    }
    const WorkCompletion rwc = OneWc(cb, 100, WcStatus::kSuccess);
    EXPECT_EQ(rwc.byte_len, kLen);
    EXPECT_EQ(rwc.imm_data, 0x1234u);
    EXPECT_EQ(std::memcmp(buf.buf, buf.buf + 8192, kLen), 0) << "the WRITE's data";
  };
  run(false);
  run(true);
}

// Differential seed 20261217 sequence 52: an RC requester brought from ERR back to RTS with
// IBV_QP_CUR_STATE sends the WRs posted in ERR again (Behaviour::
// requester_walks_one_wqe_in_error: "ghosts", already flushed), then a new SEND, all to a silent
// peer. The completer's head is the consumer index, past the ghosts: when the timer runs out it
// retries and fails the new SEND (RETRY_EXC_ERR), and req_retry starts again from the consumer
// index, never from a ghost. A bind posted before it completes at once. Without ghosts the same
// happens.
TEST_P(Conformance, RetryAfterLeavingErrSkipsTheWrsFlushedInErr) {
  CqHandle ca = Cq(32), cb = Cq(32);
  QpHandle qa = Qp(QpType::kRc, 16, 16, 2, true, ca), qb = Qp(QpType::kRc, 16, 16, 2, false, cb);
  ASSERT_EQ(ToRtsShortTimeout(*dev_, pattr_.active_mtu, qa, qb), 0);
  ASSERT_EQ(ToRtsShortTimeout(*dev_, pattr_.active_mtu, qb, qa), 0);
  ASSERT_EQ(dev_->ModifyQp(qb, StateOnly(QpState::kErr), attr::kState), 0);  // a silent peer
  Buffer buf = Reg(8192, kAll);
  size_t bad = 99;
  // A SGE past the end of its region fails the first SEND locally: qa to ERR.
  ASSERT_EQ(dev_->PostSend(qa, {Send(1, {{buf.Addr(8192 - 8), 64, buf.lkey}})}, &bad), 0);
  auto wcs = WaitWc(ca, 1);
  ASSERT_EQ(wcs.size(), 1u);
  EXPECT_NE(wcs[0].status, WcStatus::kSuccess);
  EXPECT_EQ(StateOf(qa), QpState::kErr);
  ASSERT_EQ(dev_->PostSend(qa, {Send(2, {buf.At(0, 10)}), Send(3, {buf.At(0, 11)}),
                                Send(4, {buf.At(0, 12)})},
                           &bad),
            0);
  wcs = WaitWc(ca, 3);
  ASSERT_EQ(wcs.size(), 3u);
  for (const WorkCompletion& wc : wcs) EXPECT_EQ(wc.status, WcStatus::kWrFlushErr);
  ASSERT_EQ(ModifyToRtsClaimingRts(qa), 0);
  // A type 1 bind first (seed 20261214 sequence 81): the requester runs it behind the ghosts,
  // and as they hold no completion back it completes at once, before the SEND fails.
  Buffer target = Reg(4096, kAll | access::kMwBind);
  MwHandle mw;
  uint32_t rkey = 0;
  ASSERT_EQ(dev_->AllocMw(pd_, MwType::kType1, &mw, &rkey), 0);
  ASSERT_EQ(dev_->BindMw(qa, mw, SignaledBind(5, target), &rkey), 0);
  ASSERT_EQ(dev_->PostSend(qa, {Send(6, {buf.At(0, 50)})}, &bad), 0);
  wcs = WaitWc(ca, 2);
  ASSERT_EQ(wcs.size(), 2u);
  EXPECT_EQ(wcs[0].wr_id, 5u);
  EXPECT_EQ(wcs[0].status, WcStatus::kSuccess) << ToName(wcs[0].status);
  EXPECT_EQ(wcs[1].wr_id, 6u);
  EXPECT_EQ(wcs[1].status, WcStatus::kRetryExcErr) << ToName(wcs[1].status);
  EXPECT_EQ(StateOf(qa), QpState::kErr);
  EXPECT_TRUE(Drain(ca).empty()) << "no completion for what went out again";
  EXPECT_EQ(dev_->DeallocMw(mw), 0);
}

// Differential seed 20261214 sequence 1712: a SEND into an RNR loop whose transport timer runs
// out (Behaviour::retry_timer_runs_during_rnr) fails RETRY_EXC_ERR while the requester waits out
// its RNR timer. That timer still fires in ERR and leaves rxe's req.need_retry set; brought back
// to RTS with IBV_QP_CUR_STATE (Behaviour::requester_walks_one_wqe_in_error: the requester's
// state survives ERR), the requester's first run is that retry: req.psn = comp.psn, the failed
// SEND's PSN. A WRITE posted then goes out at the PSN its peer expects and lands.
TEST_P(Conformance, RetryDueAtAnRnrTimerRunsWhenTheQpLeavesErr) {
  const Behaviour& b = GetParam().behaviour;
  if (!b.retry_timer_runs_during_rnr || !b.requester_walks_one_wqe_in_error) {
    GTEST_SKIP() << "the transport timer does not end an RNR loop on this device "
                    "(Behaviour::retry_timer_runs_during_rnr)";
  }
  CqHandle ca = Cq(), cb = Cq();
  QpHandle qa = Qp(QpType::kRc, 16, 16, 2, false, ca), qb = Qp(QpType::kRc, 16, 16, 2, false, cb);
  const BringUpParams p = Transport(pattr_.active_mtu, 11, 0, 7, 17);
  ASSERT_EQ(ToRtsWith(*dev_, p, qa, qb), 0);
  ASSERT_EQ(ToRtsWith(*dev_, p, qb, qa), 0);
  Buffer buf = Reg(8192, kAll);
  size_t bad = 99;
  ASSERT_EQ(dev_->PostSend(qa, {Send(1, {buf.At(0, 8)})}, &bad), 0);  // qb has no receive
  auto wcs = WaitWc(ca, 1);
  ASSERT_EQ(wcs.size(), 1u);
  EXPECT_EQ(wcs[0].status, WcStatus::kRetryExcErr) << ToName(wcs[0].status);
  ASSERT_EQ(StateOf(qa), QpState::kErr);
  // The RNR timer (one jiffy on rxe) fires meanwhile. Brought back before it fires, the
  // requester would send the WRITE at its PSN past the SEND, out of sequence for qb.
  EXPECT_TRUE(Drain(ca, 50 * kSecond / 1000).empty());
  ASSERT_EQ(ModifyToRtsClaimingRts(qa), 0);
  std::memset(buf.buf, 0x3c, 16);
  SendWr write = RdmaTo(2, WrOpcode::kRdmaWrite, {buf.At(0, 16)}, buf, 4096);
  ASSERT_EQ(dev_->PostSend(qa, {write}, &bad), 0);
  OneWc(ca, 2, WcStatus::kSuccess);
  EXPECT_EQ(std::memcmp(buf.buf + 4096, buf.buf, 16), 0) << "the WRITE landed";
}

// Differential seed 20261221 sequence 624: a SEND RNR-NAKed (the peer has no receive) and a
// second one behind it, which reaches the responder out of sequence and draws a PSN sequence
// NAK. That NAK asks for a retry (rxe_comp.c: req.need_retry), but rxe_req.c runs req_retry
// only once the RNR timer has fired (wait_for_rnr_timer): until then req.psn, which
// ibv_query_qp reports as sq_psn, stays past both SENDs. When the timer fires the retry
// resends both, and with the receives posted meanwhile they complete.
TEST_P(Conformance, SequenceNakDuringAnRnrWaitRetriesWhenTheRnrTimerFires) {
  if (!GetParam().behaviour.rnr_wait_sends_new_wqes) {
    GTEST_SKIP() << "the requester sends nothing while it waits out an RNR timer on this "
                    "device (Behaviour::rnr_wait_sends_new_wqes off): no sequence NAK comes";
  }
  CqHandle ca = Cq(), cb = Cq();
  QpHandle qa = Qp(QpType::kRc, 16, 16, 2, false, ca), qb = Qp(QpType::kRc, 16, 16, 2, false, cb);
  // timeout 18 (1.07 s): no transport timeout during the RNR wait; min_rnr_timer 26 (82 ms).
  const BringUpParams p = Transport(pattr_.active_mtu, 18, 3, 7, 26);
  ASSERT_EQ(ToRtsWith(*dev_, p, qa, qb), 0);
  ASSERT_EQ(ToRtsWith(*dev_, p, qb, qa), 0);
  QpAttr before;
  QpInitAttr init;
  ASSERT_EQ(dev_->QueryQp(qa, &before, &init), 0);
  Buffer buf = Reg(8192, kAll);
  size_t bad = 99;
  ASSERT_EQ(dev_->PostSend(qa, {Send(1, {buf.At(0, 8)}), Send(2, {buf.At(64, 8)})}, &bad), 0);
  EXPECT_TRUE(Drain(ca, 20 * kSecond / 1000).empty()) << "both wait for the RNR timer";
  QpAttr during;
  ASSERT_EQ(dev_->QueryQp(qa, &during, &init), 0);
  EXPECT_EQ(during.sq_psn, (before.sq_psn + 2) & 0xffffff)
      << "the sequence NAK's retry waits for the RNR timer";
  ASSERT_EQ(dev_->PostRecv(qb, {Recv(10, {buf.At(4096, 64)}), Recv(11, {buf.At(4160, 64)})},
                           &bad), 0);
  auto wcs = WaitWc(ca, 2);
  ASSERT_EQ(wcs.size(), 2u);
  for (const WorkCompletion& wc : wcs) {
    EXPECT_EQ(wc.status, WcStatus::kSuccess) << wc.wr_id << ": " << ToName(wc.status);
  }
  EXPECT_EQ(WaitWc(cb, 2).size(), 2u);
}

// Differential seed 20261220 sequence 1092: rxe's requester walks its send ring by index
// (req.wqe_index), modulo the ring's slots (rxe_queue.c: max_send_wr + 1, a power of two).
// Eight WRs whose second fails with RNR_RETRY_EXC_ERR (the peer has one receive): the
// requester stopped past the failed one, took one more in ERR, and left five untaken while
// the completer flushed all eight. WRs posted in ERR are flushed by the requester run of the
// post, which takes the next untaken slot and has the completer drain the ring; but when
// the posts put the producer a whole ring ahead of req.wqe_index, req_next_wqe finds the
// ring empty: nothing is flushed until the next post.
TEST_P(Conformance, PostInErrWhereTheRingWentRoundWaitsForTheNextPost) {
  if (!GetParam().behaviour.requester_walks_one_wqe_in_error ||
      !GetParam().behaviour.post_send_runs_to_completion) {
    GTEST_SKIP() << "the requester does not walk the send ring one WQE per run in ERR on this "
                    "device (Behaviour::requester_walks_one_wqe_in_error off): every WR "
                    "posted in ERR is flushed";
  }
  CqHandle ca = Cq(64), cb = Cq(64);
  QpHandle qa = Qp(QpType::kRc, 15, 16, 2, false, ca), qb = Qp(QpType::kRc, 15, 16, 2, false, cb);
  QpAttr attr;
  QpInitAttr init;
  ASSERT_EQ(dev_->QueryQp(qa, &attr, &init), 0);
  const uint32_t slots = attr.cap.max_send_wr + 1;
  ASSERT_EQ(slots & (slots - 1), 0u) << "granted max_send_wr " << attr.cap.max_send_wr;
  ASSERT_GE(slots, 16u);
  const BringUpParams p = Transport(pattr_.active_mtu, 14, 1, 0, 17);  // rnr_retry 0
  ASSERT_EQ(ToRtsWith(*dev_, p, qa, qb), 0);
  ASSERT_EQ(ToRtsWith(*dev_, p, qb, qa), 0);
  Buffer buf = Reg(16384, kAll);
  size_t bad = 99;
  ASSERT_EQ(dev_->PostRecv(qb, {Recv(100, {buf.At(8192, 64)})}, &bad), 0);
  std::vector<SendWr> eight;
  for (uint64_t i = 1; i <= 8; ++i) {
    SendWr w = Send(i, {buf.At(0, 64)});
    w.opcode = WrOpcode::kRdmaWriteWithImm;
    w.imm_data = 7;
    w.remote_addr = buf.Addr(4096);
    w.rkey = buf.rkey;
    w.send_flags = send_flag::kSignaled;
    eight.push_back(w);
  }
  ASSERT_EQ(dev_->PostSend(qa, eight, &bad), 0);
  auto wcs = WaitWc(ca, 8);
  ASSERT_EQ(wcs.size(), 8u);
  EXPECT_EQ(wcs[0].status, WcStatus::kSuccess) << ToName(wcs[0].status);
  EXPECT_EQ(wcs[1].status, WcStatus::kRnrRetryExcErr) << ToName(wcs[1].status);
  ASSERT_EQ(StateOf(qa), QpState::kErr);
  // Five untaken: a whole ring is 16 slots with these.
  std::vector<SendWr> lap;
  for (uint64_t i = 0; i < slots - 5; ++i) lap.push_back(Send(20 + i, {buf.At(128, 8)}));
  ASSERT_EQ(dev_->PostSend(qa, lap, &bad), 0);
  EXPECT_TRUE(Drain(ca, 50 * kSecond / 1000).empty()) << "the requester found the ring empty";
  ASSERT_EQ(dev_->PostSend(qa, {Send(99, {buf.At(128, 8)})}, &bad), 0);
  wcs = WaitWc(ca, static_cast<int>(lap.size()) + 1);
  ASSERT_EQ(wcs.size(), lap.size() + 1);
  for (size_t i = 0; i < wcs.size(); ++i) {
    EXPECT_EQ(wcs[i].wr_id, i < lap.size() ? 20 + i : 99u);
    EXPECT_EQ(wcs[i].status, WcStatus::kWrFlushErr) << ToName(wcs[i].status);
  }
  EXPECT_TRUE(WaitWc(cb, 1).size() == 1u) << "the first WRITE_WITH_IMM's receive";
}

// Differential seed 20261220 sequence 1292: rxe's retry starts at comp.psn (req_retry:
// req.psn = comp.psn), the PSN after the last packet a response answered. A SEND that
// failed RNR_RETRY_EXC_ERR took PSN 0 unanswered; after ERR -> RTS (IBV_QP_CUR_STATE) a
// WRITE goes at PSN 1, out of sequence for the peer, whose sequence NAK starts a retry from
// PSN 0. For the first WQE of a retry rxe_req.c retry_first_write_send skips
// (comp.psn - first_psn) & 0xffffff packets' worth of data: all of it. The WRITE goes again
// at PSN 0 as one packet with no payload (RETH length 0), is executed and ACKed: it
// completes successfully, and none of its data lands.
TEST_P(Conformance, RetryFromBehindTheFirstPsnResendsTheWriteWithoutItsData) {
  const Behaviour& b = GetParam().behaviour;
  if (!b.retry_rewinds_sq_psn || !b.psn_nak_uses_retry) {
    GTEST_SKIP() << "a retry resends from the retried WQE's own PSN on this device "
                    "(Behaviour::retry_rewinds_sq_psn off)";
  }
  CqHandle ca = Cq(), cb = Cq();
  QpHandle qa = Qp(QpType::kRc, 16, 16, 2, false, ca), qb = Qp(QpType::kRc, 16, 16, 2, false, cb);
  const BringUpParams p = Transport(pattr_.active_mtu, 14, 3, 0, 17);  // rnr_retry 0
  ASSERT_EQ(ToRtsWith(*dev_, p, qa, qb), 0);
  ASSERT_EQ(ToRtsWith(*dev_, p, qb, qa), 0);
  Buffer buf = Reg(8192, kAll);
  std::memset(buf.buf, 0x3c, 64);
  std::memset(buf.buf + 4096, 0x00, 64);
  size_t bad = 99;
  SendWr send = Send(1, {buf.At(1024, 8)});
  send.send_flags = send_flag::kSignaled;
  ASSERT_EQ(dev_->PostSend(qa, {send}, &bad), 0);  // qb has no receive
  auto wcs = WaitWc(ca, 1);
  ASSERT_EQ(wcs.size(), 1u);
  ASSERT_EQ(wcs[0].status, WcStatus::kRnrRetryExcErr) << ToName(wcs[0].status);
  ASSERT_EQ(StateOf(qa), QpState::kErr);
  ASSERT_EQ(ModifyToRtsClaimingRts(qa), 0);
  QpAttr a;
  QpInitAttr init;
  ASSERT_EQ(dev_->QueryQp(qa, &a, &init), 0);
  SendWr write = RdmaTo(2, WrOpcode::kRdmaWrite, {buf.At(0, 64)}, buf, 4096);
  write.send_flags = send_flag::kSignaled;
  ASSERT_EQ(dev_->PostSend(qa, {write}, &bad), 0);
  OneWc(ca, 2, WcStatus::kSuccess);
  for (int i = 0; i < 64; ++i) {
    ASSERT_EQ(buf.buf[4096 + i], 0) << "byte " << i << " of the WRITE landed";
  }
  QpAttr after;
  ASSERT_EQ(dev_->QueryQp(qa, &after, &init), 0);
  EXPECT_EQ(after.sq_psn, a.sq_psn) << "resent at the SEND's PSN, as one packet";
  EXPECT_TRUE(Drain(cb, 20 * kSecond / 1000).empty());
}

// A FETCH_ADD to a peer that drops it (RESET) ends RETRY_EXC_ERR; ERR -> RTS by
// IBV_QP_CUR_STATE sets no max_rd_atomic. rxe (Behaviour::failed_rd_atomic_keeps_credit; seed
// 20261227 sequence 1603): the failed FETCH_ADD kept its credit (only rxe_comp.c complete_ack
// gives one back), so the next one never leaves, nor the WRITE behind it, until the QP is moved
// to ERR. Elsewhere it is answered. Either way a bring-up that sets max_rd_atomic again gives
// the credit back: after RESET the FETCH_ADD adds.
TEST_P(Conformance, AnAtomicThatFailedKeepsItsCreditUntilMaxRdAtomicIsSetAgain) {
  const bool keeps = GetParam().behaviour.failed_rd_atomic_keeps_credit;
  CqHandle ca = Cq(), cb = Cq();
  QpHandle qa = Qp(QpType::kRc, 16, 16, 2, false, ca), qb = Qp(QpType::kRc, 16, 16, 2, false, cb);
  const BringUpParams p = Transport(Mtu::k1024, 11, 0, 0, 17);  // retry_cnt 0, max_rd_atomic 1
  ASSERT_EQ(ToRtsWith(*dev_, p, qa, qb), 0);  // qb stays in RESET: it drops every request
  Buffer buf = Reg(8192, kAll);
  std::memset(buf.buf, 0, 8192);
  auto fetch_add = [&](uint64_t wr_id) {
    SendWr fa = RdmaTo(wr_id, WrOpcode::kAtomicFetchAndAdd, {buf.At(0, 8)}, buf, 4096);
    fa.compare_add = 1;
    fa.send_flags = send_flag::kSignaled;
    return fa;
  };
  size_t bad = 99;
  ASSERT_EQ(dev_->PostSend(qa, {fetch_add(1)}, &bad), 0);
  auto wcs = WaitWc(ca, 1);
  ASSERT_EQ(wcs.size(), 1u);
  ASSERT_EQ(wcs[0].status, WcStatus::kRetryExcErr) << ToName(wcs[0].status);
  ASSERT_EQ(StateOf(qa), QpState::kErr);
  ASSERT_EQ(ModifyToRtsClaimingRts(qa), 0);
  // qb now answers, from the PSN qa goes on with (the failed FETCH_ADD took the first).
  BringUpParams pb = p;
  pb.rq_psn = p.sq_psn + 1;
  ASSERT_EQ(ToRtsWith(*dev_, pb, qb, qa), 0);
  SendWr write = RdmaTo(3, WrOpcode::kRdmaWrite, {buf.At(64, 8)}, buf, 4160);
  write.send_flags = send_flag::kSignaled;
  ASSERT_EQ(dev_->PostSend(qa, {fetch_add(2), write}, &bad), 0);
  if (keeps) {
    EXPECT_TRUE(Drain(ca, kSecond / 10).empty()) << "the FETCH_ADD found a credit";
    ASSERT_EQ(dev_->ModifyQp(qa, StateOnly(QpState::kErr), attr::kState), 0);
    wcs = WaitWc(ca, 2);
    ASSERT_EQ(wcs.size(), 2u);
    EXPECT_EQ(wcs[0].wr_id, 2u);
    EXPECT_EQ(wcs[0].status, WcStatus::kWrFlushErr) << ToName(wcs[0].status);
    EXPECT_EQ(wcs[1].wr_id, 3u);
    EXPECT_EQ(wcs[1].status, WcStatus::kWrFlushErr) << ToName(wcs[1].status);
  } else {
    wcs = WaitWc(ca, 2);
    ASSERT_EQ(wcs.size(), 2u);
    EXPECT_EQ(wcs[0].status, WcStatus::kSuccess) << ToName(wcs[0].status);
    EXPECT_EQ(wcs[1].status, WcStatus::kSuccess) << ToName(wcs[1].status);
  }
  // RESET and a bring-up that sets max_rd_atomic: the credit is back.
  for (QpHandle q : {qa, qb}) {
    ASSERT_EQ(dev_->ModifyQp(q, StateOnly(QpState::kReset), attr::kState), 0);
  }
  std::memset(buf.buf + 4096, 0, 8);
  ASSERT_EQ(ToRtsWith(*dev_, p, qa, qb), 0);
  ASSERT_EQ(ToRtsWith(*dev_, p, qb, qa), 0);
  ASSERT_EQ(dev_->PostSend(qa, {fetch_add(4)}, &bad), 0);
  OneWc(ca, 4, WcStatus::kSuccess);
  EXPECT_EQ(buf.buf[4096], 1) << "the FETCH_ADD added";
}

// A SEND to a peer in RESET times out once (retry_cnt 1: a retry starts) and then ends
// RETRY_EXC_ERR. After RESET -> RTS with retry_cnt 0, a 2-packet SEND to the peer, which has
// no receive, draws an RNR NAK for its first packet and a sequence NAK for its second. rxe
// (Behaviour::psn_nak_uses_retry; seed 20261227 sequence 1184): rxe_qp_reset leaves
// comp.started_retry set, so the sequence NAK starts no retry and counts nothing, and the SEND
// waits out its RNR loop until a receive comes (a fresh QP ends RETRY_EXC_ERR at once,
// examples/fidelity/18). Elsewhere a sequence NAK counts nothing either.
TEST_P(Conformance, ARetryUnderWayOutlivesAResetOfTheQp) {
  Buffer buf = Reg(8192, kAll);
  std::memset(buf.buf, 0x6b, 4096);
  std::memset(buf.buf + 4096, 0, 4096);
  RcPair r;
  RcPairAfterStaleRetry(Transport(Mtu::k1024, 11, 0, 7, 17), buf, &r);  // retry_cnt 0
  if (HasFatalFailure()) return;
  const CqHandle ca = r.ca, cb = r.cb;
  const QpHandle qa = r.qa, qb = r.qb;
  size_t bad = 99;
  std::vector<WorkCompletion> wcs;
  SendWr send = Send(2, {buf.At(0, 2048)});
  send.send_flags = send_flag::kSignaled;
  ASSERT_EQ(dev_->PostSend(qa, {send}, &bad), 0);
  wcs = Drain(ca, kSecond / 10);
  EXPECT_TRUE(wcs.empty()) << "the SEND ended " << (wcs.empty() ? "" : ToName(wcs[0].status));
  ASSERT_EQ(dev_->PostRecv(qb, {Recv(10, {buf.At(4096, 2048)})}, &bad), 0);
  OneWc(ca, 2, WcStatus::kSuccess);
  wcs = WaitWc(cb, 1);
  ASSERT_EQ(wcs.size(), 1u);
  EXPECT_EQ(wcs[0].status, WcStatus::kSuccess) << ToName(wcs[0].status);
  EXPECT_EQ(wcs[0].byte_len, 2048u);
  EXPECT_EQ(buf.buf[4096 + 2047], 0x6b);
}

// One post of a READ, a CMP_SWP whose local SGE lies in another PD, and a 2,048-byte SEND
// to a peer of the same device whose receive holds 240 bytes; max_rd_atomic 1. rxe
// (Behaviour::post_answers_each_message; seed 20261220 sequence 1202): the READ's responder is
// a scheduled tasklet, the CMP_SWP waits for the READ's credit, and the READ's answer comes
// while the post's requester task still runs: the completer re-runs the requester in that task,
// the CMP_SWP goes and is answered inline, its result cannot be written (LOC_PROT_ERR), and the
// QP is in ERR before the SEND is taken: the SEND is flushed and the peer's receive stays.
// Elsewhere the requester sends the CMP_SWP and the SEND back to back once the credit is back.
TEST_P(Conformance, AnAtomicResumedByAReadsCreditInThePostIsAnsweredBeforeTheNextWqe) {
  const Behaviour& b = GetParam().behaviour;
  CqHandle ca = Cq(), cb = Cq();
  QpHandle qa = Qp(QpType::kRc, 16, 16, 2, false, ca), qb = Qp(QpType::kRc, 16, 16, 2, false, cb);
  const BringUpParams p = Transport(Mtu::k1024, 14, 3, 7, 12);  // max_rd_atomic 1
  ASSERT_EQ(ToRtsWith(*dev_, p, qa, qb), 0);
  ASSERT_EQ(ToRtsWith(*dev_, p, qb, qa), 0);
  Buffer buf = Reg(8192, kAll);
  std::memset(buf.buf, 0x2d, 8192);
  Buffer foreign = RegInOtherPd(4096, kAll);
  if (HasFailure()) return;
  size_t bad = 99;
  ASSERT_EQ(dev_->PostRecv(qb, {Recv(10, {buf.At(6144, 240)})}, &bad), 0);
  SendWr read = RdmaTo(1, WrOpcode::kRdmaRead, {buf.At(0, 200)}, buf, 4096);
  read.send_flags = send_flag::kSignaled;
  SendWr cas = RdmaTo(2, WrOpcode::kAtomicCmpAndSwp, {foreign.At(0, 8)}, buf, 5120);
  cas.compare_add = 0;
  cas.swap = 7;
  cas.send_flags = send_flag::kSignaled;
  SendWr send = Send(3, {buf.At(2048, 2048)});
  send.send_flags = send_flag::kSignaled;
  ASSERT_EQ(dev_->PostSend(qa, {read, cas, send}, &bad), 0);
  auto wcs = WaitWc(ca, 3);
  ASSERT_EQ(wcs.size(), 3u);
  EXPECT_EQ(wcs[0].wr_id, 1u);
  EXPECT_EQ(wcs[0].status, WcStatus::kSuccess) << ToName(wcs[0].status);
  EXPECT_EQ(wcs[1].wr_id, 2u);
  EXPECT_EQ(wcs[1].status, WcStatus::kLocProtErr) << ToName(wcs[1].status);
  EXPECT_EQ(wcs[2].wr_id, 3u);
  const auto theirs = Drain(cb, kSecond / 10);
  if (b.post_answers_each_message) {
    EXPECT_EQ(wcs[2].status, WcStatus::kWrFlushErr) << ToName(wcs[2].status);
    EXPECT_TRUE(theirs.empty()) << "the SEND reached the peer: "
                                << (theirs.empty() ? "" : ToName(theirs[0].status));
    EXPECT_EQ(StateOf(qb), QpState::kRts);
  } else {
    ASSERT_EQ(theirs.size(), 1u) << "the SEND never reached the peer";
    EXPECT_NE(theirs[0].status, WcStatus::kSuccess) << "240 bytes took a 2,048-byte SEND";
  }
}

// After a CMP_SWP's error NAK in ERR, a post whose WRs bring the send ring's producer round to
// the requester's index: rxe (Behaviour::requester_walks_one_wqe_in_error; seed 20261232
// sequence 16220) takes one WQE per requester run in ERR, and req_next_wqe sees an empty ring
// when the index equals the producer (both modulo the ring's 16 slots), so the post flushes
// nothing. The completer's next run in ERR does: rxe_drain_resp_pkts completes every WQE up
// to the producer, and the transport timer the CMP_SWP armed (timeout 16: 268 ms) runs it.
// Elsewhere a WR posted in ERR is flushed at once.
TEST_P(Conformance, WrsAPostInErrLeftUnwalkedAreFlushedWhenTheTransportTimerRunsOut) {
  const bool walks = GetParam().behaviour.requester_walks_one_wqe_in_error;
  const BringUpParams p = Transport(Mtu::k1024, 16, 7, 7, 12);
  RcPair pair;
  FifteenDeepRcPair(p, &pair);
  if (IsSkipped() || HasFatalFailure()) return;
  const auto [ca, cb, qa, qb] = pair;
  Buffer buf = Reg(4096, kAll);
  Buffer no_atomic = Reg(4096, access::kLocalWrite | access::kRemoteWrite);
  std::vector<SendWr> first, second;
  for (uint64_t i = 1; i <= 8; ++i) {
    SendWr cs = RdmaTo(i, WrOpcode::kAtomicCmpAndSwp, {buf.At(8 * i, 8)}, no_atomic, 0);
    cs.swap = 1;
    first.push_back(cs);
  }
  for (uint64_t i = 11; i <= 20; ++i) second.push_back(Send(i, {buf.At(1024, 64)}));
  size_t bad = 99;
  ASSERT_EQ(dev_->PostSend(qa, first, &bad), 0);
  if (!walks) {  // the first post's completions make room for the second
    auto all = WaitWc(ca, 8, kSecond);
    ASSERT_EQ(all.size(), 8u);
    ASSERT_EQ(dev_->PostSend(qa, second, &bad), 0);
    const auto rest = WaitWc(ca, 10, kSecond);
    all.insert(all.end(), rest.begin(), rest.end());
    ASSERT_EQ(all.size(), 18u);
    EXPECT_EQ(all[0].wr_id, 1u);
    EXPECT_EQ(all[0].status, WcStatus::kRemAccessErr) << ToName(all[0].status);
    for (size_t i = 1; i < all.size(); ++i) {
      EXPECT_EQ(all[i].status, WcStatus::kWrFlushErr) << i << ": " << ToName(all[i].status);
    }
    return;
  }
  ASSERT_EQ(dev_->PostSend(qa, second, &bad), 0);  // in ERR: 2 + 16 WQEs on, the index's slot
  // rxe: the post answered the first CMP_SWP, failing the QP; nothing flushed the second post.
  WorkCompletion wc[32];
  const int now = dev_->PollCq(ca, 32, wc);
  ASSERT_EQ(now, 8);
  EXPECT_EQ(wc[0].wr_id, 1u);
  EXPECT_EQ(wc[0].status, WcStatus::kRemAccessErr) << ToName(wc[0].status);
  for (int i = 1; i < now; ++i) {
    EXPECT_EQ(wc[i].status, WcStatus::kWrFlushErr) << i << ": " << ToName(wc[i].status);
  }
  EXPECT_EQ(StateOf(qa), QpState::kErr);
  ExpectFlushedInOrder(ca, 10, 11, kSecond, "the transport timer's completer run flushes them");
}

// A 2-packet WRITE whose first packet draws a remote access NAK, then a SEND, in one post. rxe
// answers the first packet inside the post (Behaviour::post_send_runs_to_completion), so the
// requester never sends the WRITE's last packet and its index stays on the WRITE's slot
// (rxe_req.c update_state moves req.wqe_index at an END packet only); in ERR it walks that slot
// (Behaviour::requester_walks_one_wqe_in_error), one behind the consumer. A later post of 15
// brings the producer round to that index: req_next_wqe sees an empty ring and nothing is
// flushed, the ring is full, and only the next move to ERR flushes the 15 (seed 20261232
// sequence 16527). Elsewhere the 15 are flushed at once.
TEST_P(Conformance, AWriteNakedBeforeItsLastPacketLeavesTheRequesterOnItsSlot) {
  const Behaviour& b = GetParam().behaviour;
  const bool lags = b.requester_walks_one_wqe_in_error && b.post_send_runs_to_completion;
  const BringUpParams p = Transport(Mtu::k1024, 10, 0, 0, 12);  // 4 ms, no retries
  RcPair pair;
  FifteenDeepRcPair(p, &pair);
  if (IsSkipped() || HasFatalFailure()) return;
  const auto [ca, cb, qa, qb] = pair;
  Buffer buf = Reg(4096, kAll);
  Buffer read_only = Reg(4096, access::kLocalWrite | access::kRemoteRead);
  SendWr write = RdmaTo(1, WrOpcode::kRdmaWrite, {buf.At(0, 2048)}, read_only, 0);
  size_t bad = 99;
  ASSERT_EQ(dev_->PostSend(qa, {write, Send(2, {buf.At(2048, 8)})}, &bad), 0);
  auto wcs = WaitWc(ca, 2);
  ASSERT_EQ(wcs.size(), 2u);
  EXPECT_EQ(wcs[0].wr_id, 1u);
  EXPECT_EQ(wcs[0].status, WcStatus::kRemAccessErr) << ToName(wcs[0].status);
  EXPECT_EQ(wcs[1].status, WcStatus::kWrFlushErr) << ToName(wcs[1].status);
  EXPECT_TRUE(Drain(ca, kSecond / 10).empty()) << "the WRITE's transport timer has run out";
  std::vector<SendWr> fill;
  for (uint64_t i = 11; i <= 25; ++i) fill.push_back(Send(i, {buf.At(3072, 8)}));
  ASSERT_EQ(dev_->PostSend(qa, fill, &bad), 0);
  if (!lags) {
    wcs = WaitWc(ca, 15);
    ASSERT_EQ(wcs.size(), 15u) << "a post in ERR is flushed";
    return;
  }
  EXPECT_TRUE(Drain(ca, 3 * kSecond / 10).empty()) << "the requester saw an empty ring";
  EXPECT_EQ(dev_->PostSend(qa, {Send(26, {buf.At(3072, 8)})}, &bad), ENOMEM) << "the ring is full";
  ASSERT_EQ(dev_->ModifyQp(qa, StateOnly(QpState::kErr), attr::kState), 0);
  ExpectFlushedInOrder(ca, 15, 11);
}

// 14 SEND_IMMs into a QP without a receive (rnr_retry 7, retry_cnt 0) fail the QP inside
// the post (RETRY_EXC_ERR; rxe: the second message's sequence NAK ends the first), while the
// first's RNR timer is pending. rxe's requester walks its send ring slot by slot in ERR
// (Behaviour::requester_walks_one_wqe_in_error): the post's run, each later post's run and
// also the run the RNR timer schedules when it fires in ERR (rxe_req.c rnr_nak_timer). So
// after three single posts in ERR, a post of 5 does not bring the producer round to the
// requester's index and is flushed at once, as everywhere (seed 605888837999 sequence 1321;
// without the timer's walk it would wait for the next move to ERR).
TEST_P(Conformance, TheRnrTimerFiringInErrMovesTheRequesterOn) {
  // 8 ms, no retries, RNR NAKs of 0.96 ms; qb has no receive.
  const BringUpParams p = Transport(Mtu::k1024, 11, 0, 7, 17);
  RcPair pair;
  FifteenDeepRcPair(p, &pair);
  if (IsSkipped() || HasFatalFailure()) return;
  const auto [ca, cb, qa, qb] = pair;
  Buffer buf = Reg(4096, kAll);
  std::vector<SendWr> first;
  for (uint64_t i = 1; i <= 14; ++i) {
    SendWr w = Send(i, {buf.At(0, 7)});
    w.opcode = WrOpcode::kSendWithImm;
    first.push_back(w);
  }
  size_t bad = 99;
  ASSERT_EQ(dev_->PostSend(qa, first, &bad), 0);
  // Where the transport timer does not run during RNR waits (rxe:
  // Behaviour::retry_timer_runs_during_rnr), rnr_retry 7 retries for ever: ERR by a modify.
  if (!GetParam().behaviour.retry_timer_runs_during_rnr) {
    ASSERT_EQ(dev_->ModifyQp(qa, StateOnly(QpState::kErr), attr::kState), 0);
  }
  auto wcs = WaitWc(ca, 14);
  ASSERT_EQ(wcs.size(), 14u);
  EXPECT_NE(wcs[0].status, WcStatus::kSuccess) << "no receive";
  for (size_t i = 1; i < wcs.size(); ++i) {
    EXPECT_EQ(wcs[i].status, WcStatus::kWrFlushErr) << i << ": " << ToName(wcs[i].status);
  }
  EXPECT_TRUE(Drain(ca, kSecond / 10).empty()) << "its timers have run out";
  for (uint64_t i = 21; i <= 23; ++i) {
    ASSERT_EQ(dev_->PostSend(qa, {Send(i, {buf.At(64, 8)})}, &bad), 0);
    wcs = WaitWc(ca, 1);
    ASSERT_EQ(wcs.size(), 1u) << "a post in ERR is flushed";
    EXPECT_EQ(wcs[0].status, WcStatus::kWrFlushErr) << ToName(wcs[0].status);
  }
  std::vector<SendWr> five;
  for (uint64_t i = 31; i <= 35; ++i) five.push_back(Send(i, {buf.At(128, 8)}));
  ASSERT_EQ(dev_->PostSend(qa, five, &bad), 0);
  ExpectFlushedInOrder(ca, 5, 31, 3 * kSecond / 10, "flushed before the next move to ERR");
}

// A WRITE to a peer in RESET arms qa's transport timer (67 ms); qa goes to RESET 2 ms later,
// and a SEND is posted there (refused, EINVAL; rxe leaves it in the ring:
// Behaviour::post_send_below_rts_queues). rxe never stops that timer
// (Behaviour::retrans_timer_runs_out): it runs out in RESET, and the completer it runs there
// drops every queued WQE without a completion (rxe_comp.c rxe_drain_resp_pkts(qp, false)).
// So after both QPs are brought up, that SEND never completes; without the timer it would be
// sent first (row 124). Elsewhere a refused post queues nothing: never sent either.
TEST_P(Conformance, TheTransportTimerRunningOutInResetDropsWhatAPostLeftThere) {
  CqHandle ca = Cq(), cb = Cq();
  QpHandle qa = Qp(QpType::kRc, 15, 16, 2, false, ca), qb = Qp(QpType::kRc, 15, 16, 2, false, cb);
  const BringUpParams p = Transport(Mtu::k1024, 14, 7, 7, 12);  // 67 ms
  ASSERT_EQ(ToRtsWith(*dev_, p, qa, qb), 0);                   // qb stays in RESET
  Buffer buf = Reg(4096, kAll);
  SendWr write = RdmaTo(1, WrOpcode::kRdmaWrite, {buf.At(0, 8)}, buf, 1024);
  size_t bad = 99;
  ASSERT_EQ(dev_->PostSend(qa, {write}, &bad), 0);
  EXPECT_TRUE(Drain(ca, kSecond / 500).empty()) << "qb in RESET answers nothing";
  ASSERT_EQ(dev_->ModifyQp(qa, StateOnly(QpState::kReset), attr::kState), 0);
  EXPECT_EQ(dev_->PostSend(qa, {Send(2, {buf.At(64, 8)})}, &bad), EINVAL) << "R2: RESET";
  EXPECT_TRUE(Drain(ca, kSecond / 5).empty()) << "the timer ran out in RESET";
  ASSERT_EQ(ToRtsWith(*dev_, p, qb, qa), 0);
  ASSERT_EQ(dev_->PostRecv(qb, {Recv(10, {buf.At(2048, 64)})}, &bad), 0);
  ASSERT_EQ(ToRtsWith(*dev_, p, qa, qb), 0);
  ASSERT_EQ(dev_->PostSend(qa, {Send(3, {buf.At(128, 16)})}, &bad), 0);
  auto theirs = WaitWc(cb, 1);
  ASSERT_EQ(theirs.size(), 1u);
  EXPECT_EQ(theirs[0].status, WcStatus::kSuccess) << ToName(theirs[0].status);
  auto ours = Drain(ca, kSecond / 10);
  ASSERT_EQ(dev_->ModifyQp(qa, StateOnly(QpState::kErr), attr::kState), 0);
  const auto flushed = Drain(ca, kSecond / 10);
  ours.insert(ours.end(), flushed.begin(), flushed.end());
  for (const WorkCompletion& wc : ours) {
    EXPECT_NE(wc.wr_id, 2u) << "the SEND posted in RESET completed: " << ToName(wc.status);
  }
}

// Three READs (max_rd_atomic 1) to a responder with max_dest_rd_atomic 0: the first is
// NAKed (REM_INV_REQ_ERR) inside the post and the QP goes to ERR. rxe's requester then walks
// two of its ring slots, not one (a READ's responder runs as a tasklet, row 120), so after
// ERR -> RTS by IBV_QP_CUR_STATE no stale READ waits ahead of the requester, and a type 1
// bind completes at once. With one walk (3 FETCH_ADDs: measured) a stale READ would wait
// for ever for the credit the failed READ kept, and the bind behind it (seed 20261235
// sequence 414). Elsewhere nothing stale is left at all.
TEST_P(Conformance, AReadNakedInsideThePostLeavesNoStaleReadBehind) {
  BringUpParams p = Transport(Mtu::k1024, 11, 1, 0, 17);  // 8 ms, one retry
  p.max_rd_atomic = 1;
  p.max_dest_rd_atomic = 0;
  RcPair pair;
  FifteenDeepRcPair(p, &pair);
  if (IsSkipped() || HasFatalFailure()) return;
  const auto [ca, cb, qa, qb] = pair;
  Buffer buf = Reg(4096, kAll);
  std::vector<SendWr> reads;
  for (uint64_t i = 1; i <= 3; ++i) {
    reads.push_back(RdmaTo(i, WrOpcode::kRdmaRead, {buf.At(8 * i, 8)}, buf, 2048));
  }
  size_t bad = 99;
  ASSERT_EQ(dev_->PostSend(qa, reads, &bad), 0);
  const auto wcs = WaitWc(ca, 3);
  ASSERT_EQ(wcs.size(), 3u);
  EXPECT_EQ(wcs[0].wr_id, 1u);
  EXPECT_EQ(wcs[0].status, WcStatus::kRemInvReqErr) << ToName(wcs[0].status);
  EXPECT_EQ(StateOf(qa), QpState::kErr);
  ASSERT_EQ(ModifyToRtsClaimingRts(qa), 0);
  Buffer target = Reg(4096, kAll | access::kMwBind);
  MwHandle mw;
  uint32_t rkey = 0;
  ASSERT_EQ(dev_->AllocMw(pd_, MwType::kType1, &mw, &rkey), 0);
  ASSERT_EQ(dev_->BindMw(qa, mw, SignaledBind(20, target), &rkey), 0);
  OneWc(ca, 20, WcStatus::kSuccess, kSecond / 10);  // none if a stale READ waits ahead of the bind
}

// A 2-packet SEND into a QP without a receive (rnr_retry 7, retry_cnt 0): rxe's transport
// timer ends the RNR loop (Behaviour::retry_timer_runs_during_rnr; RETRY_EXC_ERR) while an
// RNR timer is pending, and that timer, firing in ERR, leaves a retry set
// (Qp::retry_after_err). After ERR -> RTS by IBV_QP_CUR_STATE nothing runs the requester
// until RTS -> SQD schedules it (rxe_qp_drain): its retry puts req.psn back to comp.psn, which
// the RNR NAK of the first packet left at the SEND's first PSN, so the query in SQD reads
// that (seed 20261237 sequence 207: sq_psn 0, not 2, 3 of 3 runs). Elsewhere nothing rewinds
// sq_psn: it is past the SEND's two packets.
TEST_P(Conformance, EnteringSqdRunsTheRetryTheRnrTimerSetInErr) {
  const Behaviour& b = GetParam().behaviour;
  // 8 ms, no retries, RNR NAKs of 0.96 ms; qb has no receive.
  const BringUpParams p = Transport(Mtu::k1024, 11, 0, 7, 17);
  RcPair pair;
  FifteenDeepRcPair(p, &pair);
  if (IsSkipped() || HasFatalFailure()) return;
  const auto [ca, cb, qa, qb] = pair;
  Buffer buf = Reg(4096, kAll);
  size_t bad = 99;
  ASSERT_EQ(dev_->PostSend(qa, {Send(1, {buf.At(0, 2048)})}, &bad), 0);
  if (!b.retry_timer_runs_during_rnr) {  // rnr_retry 7 retries for ever: ERR by a modify
    EXPECT_TRUE(Drain(ca, kSecond / 10).empty()) << "RNR retries for ever";
    ASSERT_EQ(dev_->ModifyQp(qa, StateOnly(QpState::kErr), attr::kState), 0);
  }
  const auto wcs = WaitWc(ca, 1);
  ASSERT_EQ(wcs.size(), 1u);
  EXPECT_NE(wcs[0].status, WcStatus::kSuccess) << "no receive";
  EXPECT_TRUE(Drain(ca, kSecond / 10).empty()) << "its timers have run out";
  ASSERT_EQ(ModifyToRtsClaimingRts(qa), 0);
  EXPECT_TRUE(Drain(ca, kSecond / 10).empty());
  ASSERT_EQ(dev_->ModifyQp(qa, StateOnly(QpState::kSqd), attr::kState), 0);
  QpAttr attr;
  QpInitAttr init;
  ASSERT_EQ(dev_->QueryQp(qa, &attr, &init), 0);
  const bool retries = b.retry_timer_runs_during_rnr && b.requester_walks_one_wqe_in_error;
  EXPECT_EQ(attr.sq_psn, retries ? p.sq_psn : p.sq_psn + 2)
      << (retries ? "the retry puts req.psn back" : "past the SEND's two packets");
}

// After ERR -> RTS by IBV_QP_CUR_STATE, the WQEs the requester never reached in ERR wait
// ahead of it in their ring slots (rxe: Behaviour::requester_walks_one_wqe_in_error). A post
// of 12 behind 13 of them goes round the 16-slot ring onto 9 of those slots: rxe's requester
// walks its slots up to the producer, so it sends just those 9 SENDs (the post's last) and
// stops; the post's first three are behind it for good, the completer's head never starts,
// so every response is dropped and no timeout retries: the QP hangs in RTS until ERR flushes
// the 12 (seed 20261232 sequence 12293). Elsewhere the 12 SENDs go in order and the first
// fails the QP (no receive, no retries).
TEST_P(Conformance, APostThatGoesRoundOntoStaleSlotsIsSentOnlyInPart) {
  const bool walks = GetParam().behaviour.requester_walks_one_wqe_in_error;
  // 67 ms, no retries; qb has no receive: an RNR NAK ends qa.
  const BringUpParams p = Transport(Mtu::k1024, 14, 0, 0, 12);
  RcPair pair;
  FifteenDeepRcPair(p, &pair);
  if (IsSkipped() || HasFatalFailure()) return;
  const auto [ca, cb, qa, qb] = pair;
  Buffer buf = Reg(4096, kAll);
  std::vector<SendWr> first, second;
  for (uint64_t i = 1; i <= 15; ++i) {
    SendWr w = Send(i, {buf.At(0, 1)});
    w.opcode = WrOpcode::kSendWithImm;
    first.push_back(w);
  }
  for (uint64_t i = 101; i <= 112; ++i) second.push_back(Send(i, {buf.At(64, 7)}));
  size_t bad = 99;
  ASSERT_EQ(dev_->PostSend(qa, first, &bad), 0);
  auto wcs = WaitWc(ca, 15);
  ASSERT_EQ(wcs.size(), 15u);
  EXPECT_EQ(wcs[0].status, WcStatus::kRnrRetryExcErr) << ToName(wcs[0].status);
  ASSERT_EQ(ModifyToRtsClaimingRts(qa), 0);
  ASSERT_EQ(dev_->PostSend(qa, second, &bad), 0);
  if (!walks) {
    wcs = WaitWc(ca, 12);
    ASSERT_EQ(wcs.size(), 12u);
    EXPECT_EQ(wcs[0].wr_id, 101u);
    EXPECT_NE(wcs[0].status, WcStatus::kSuccess) << "no receive, no retries";
    return;
  }
  EXPECT_TRUE(Drain(ca, 3 * kSecond / 10).empty()) << "no response and no timeout completes one";
  QpAttr attr;
  QpInitAttr init;
  ASSERT_EQ(dev_->QueryQp(qa, &attr, &init), 0);
  EXPECT_EQ(attr.qp_state, QpState::kRts);
  EXPECT_EQ(attr.sq_psn, p.sq_psn + 1 + 9) << "the first SEND_IMM and the post's last 9 SENDs";
  ASSERT_EQ(dev_->ModifyQp(qa, StateOnly(QpState::kErr), attr::kState), 0);
  ExpectFlushedInOrder(ca, 12, 101);
}

// One post of 5 READs to a QP of the same device whose responses cannot be written (the
// local SGE runs past its region's end). rxe (Behaviour::post_answers_each_message): the
// READ's responder is a scheduled tasklet, and the pending softirq runs at the requester
// task's next spin_unlock_bh, so the first READ's response fails the QP (LOC_PROT_ERR)
// before the second is sent: sq_psn moves by one, the responder executed one READ.
// Elsewhere the READs go out back to back.
TEST_P(Conformance, AReadsResponseOnTheSameDeviceIsHandledBeforeTheNextRead) {
  const bool inline_answers = GetParam().behaviour.post_answers_each_message;
  BringUpParams p = Transport(Mtu::k1024, 14, 0, 0, 12);
  p.max_rd_atomic = 4;
  p.max_dest_rd_atomic = 4;
  RcPair pair;
  FifteenDeepRcPair(p, &pair);
  if (IsSkipped() || HasFatalFailure()) return;
  const auto [ca, cb, qa, qb] = pair;
  Buffer buf = Reg(4096, kAll);
  Buffer small = Reg(256, kAll);
  std::vector<SendWr> reads;
  for (uint64_t i = 1; i <= 5; ++i) {
    SendWr r = RdmaTo(i, WrOpcode::kRdmaRead, {small.At(200, 100)}, buf, 1024);
    reads.push_back(r);
  }
  size_t bad = 99;
  ASSERT_EQ(dev_->PostSend(qa, reads, &bad), 0);
  const auto wcs = WaitWc(ca, 5);
  ASSERT_EQ(wcs.size(), 5u);
  EXPECT_EQ(wcs[0].wr_id, 1u);
  EXPECT_EQ(wcs[0].status, WcStatus::kLocProtErr) << ToName(wcs[0].status);
  for (size_t i = 1; i < wcs.size(); ++i) {
    EXPECT_EQ(wcs[i].status, WcStatus::kWrFlushErr) << ToName(wcs[i].status);
  }
  QpAttr a, b;
  QpInitAttr init;
  ASSERT_EQ(dev_->QueryQp(qa, &a, &init), 0);
  ASSERT_EQ(dev_->QueryQp(qb, &b, &init), 0);
  if (inline_answers) {
    EXPECT_EQ(a.sq_psn, p.sq_psn + 1) << "one READ sent";
    EXPECT_EQ(b.rq_psn, p.rq_psn + 1) << "one READ executed";
  } else {
    EXPECT_GT(a.sq_psn, p.sq_psn + 1) << "the READs went back to back";
  }
}

// A 2-packet READ, then a SEND into a QP without a receive (an RNR loop). A retry starts from
// the completer's PSN, past the READ's last response packet: the SEND is resent with its own
// PSN, and sq_psn reads the READ's two PSNs and the SEND's one past the start (rxe_req.c
// req_retry: req.psn = comp.psn; seed 20261232 sequence 12735).
TEST_P(Conformance, ARetryAfterAMultiPacketReadResendsFromPastItsLastResponse) {
  CqHandle ca = Cq(), cb = Cq();
  QpHandle qa = Qp(QpType::kRc, 16, 16, 2, false, ca), qb = Qp(QpType::kRc, 16, 16, 2, false, cb);
  const BringUpParams p = Transport(Mtu::k1024, 14, 0, 7, 1);  // 67 ms; RNR waits of 0.01 ms
  ASSERT_EQ(ToRtsWith(*dev_, p, qa, qb), 0);
  ASSERT_EQ(ToRtsWith(*dev_, p, qb, qa), 0);
  Buffer buf = Reg(8192, kAll);
  SendWr read = RdmaTo(1, WrOpcode::kRdmaRead, {buf.At(0, 2048)}, buf, 4096);
  size_t bad = 99;
  ASSERT_EQ(dev_->PostSend(qa, {read}, &bad), 0);
  auto wcs = WaitWc(ca, 1);
  ASSERT_EQ(wcs.size(), 1u);
  ASSERT_EQ(wcs[0].status, WcStatus::kSuccess) << ToName(wcs[0].status);
  ASSERT_EQ(dev_->PostSend(qa, {Send(2, {buf.At(64, 64)})}, &bad), 0);
  backend_->Advance(20 * kSecond / 1000);  // RNR retries, before the transport timeout
  // Each RNR round's req_retry sets req.psn back to comp.psn (p + 2) and the requester sends
  // the SEND again at once (p + 3): a query can fall between the two, so it reads again.
  QpAttr a;
  QpInitAttr init;
  bool sent_again = false;
  for (int k = 0; k < 5 && !sent_again; ++k) {
    if (k > 0) backend_->Advance(kSecond / 1000);
    ASSERT_EQ(dev_->QueryQp(qa, &a, &init), 0);
    EXPECT_EQ(a.qp_state, QpState::kRts);
    EXPECT_TRUE(a.sq_psn == p.sq_psn + 2 || a.sq_psn == p.sq_psn + 3) << a.sq_psn;
    sent_again = a.sq_psn == p.sq_psn + 3;
  }
  EXPECT_TRUE(sent_again) << "the READ's 2 PSNs and the SEND's (sq_psn " << a.sq_psn << ")";
  // rxe's transport timer runs during the RNR loop (Behaviour::retry_timer_runs_during_rnr)
  // and ends it; elsewhere the loop goes on until ERR flushes the SEND.
  const bool timer_runs = GetParam().behaviour.retry_timer_runs_during_rnr;
  if (!timer_runs) {
    ASSERT_EQ(dev_->ModifyQp(qa, StateOnly(QpState::kErr), attr::kState), 0);
  }
  wcs = WaitWc(ca, 1, kSecond);
  ASSERT_EQ(wcs.size(), 1u);
  EXPECT_EQ(wcs[0].status, timer_runs ? WcStatus::kRetryExcErr : WcStatus::kWrFlushErr)
      << ToName(wcs[0].status);
}

// Row 130 (differential seed 20261243 sequence 10898): a READ posted behind a SEND the peer
// RNR-NAKs (no receive) draws a PSN sequence NAK, the SEND's PSN not being accepted yet. The
// READ's request took the PSNs of both its response packets when it left. rxe answers inside
// the post: the NAK uses up retry_cnt 0, the SEND ends RETRY_EXC_ERR, the QP goes to ERR, and
// its send PSN is past the READ's (elsewhere the RNR retry goes on: the PSN moves back and
// forth, not checked).
TEST_P(Conformance, AReadBehindAnRnrNakedSendHasTakenAllItsPsns) {
  const Behaviour& b = GetParam().behaviour;
  if (!b.post_send_runs_to_completion || !b.psn_nak_uses_retry) {
    GTEST_SKIP() << "the device answers after the post (no NAK inside it)";
  }
  CqHandle ca = Cq(), cb = Cq();
  QpHandle qa = Qp(QpType::kRc, 16, 16, 2, false, ca), qb = Qp(QpType::kRc, 16, 16, 2, false, cb);
  const BringUpParams p = Transport(Mtu::k1024, 11, 0, 7, 17);
  ASSERT_EQ(ToRtsWith(*dev_, p, qa, qb), 0);
  ASSERT_EQ(ToRtsWith(*dev_, p, qb, qa), 0);
  Buffer buf = Reg(8192, kAll);
  size_t bad = 99;
  ASSERT_EQ(dev_->PostSend(qa, {Send(1, {buf.At(0, 8)})}, &bad), 0);  // qb has no receive
  SendWr read = RdmaTo(2, WrOpcode::kRdmaRead, {buf.At(1024, 2048)}, buf, 4096);
  ASSERT_EQ(dev_->PostSend(qa, {read}, &bad), 0);
  auto wcs = WaitWc(ca, 2, kSecond);
  ASSERT_EQ(wcs.size(), 2u);
  EXPECT_EQ(wcs[0].status, WcStatus::kRetryExcErr) << ToName(wcs[0].status);
  EXPECT_EQ(wcs[1].status, WcStatus::kWrFlushErr) << ToName(wcs[1].status);
  QpAttr a;
  QpInitAttr init;
  ASSERT_EQ(dev_->QueryQp(qa, &a, &init), 0);
  EXPECT_EQ(a.qp_state, QpState::kErr);
  EXPECT_EQ(a.sq_psn, p.sq_psn + 3) << "the SEND's PSN and the READ's two";
}

// Row 131 (differential seed 20261244 sequence 14140): a type 2 window bound through qb holds
// a reference on qb (rxe_mw.c), so destroying qb waits for it, 50 s (rxe_pool.c
// __rxe_cleanup), and returns 0; qb is unreachable from the start and the device runs on
// meanwhile. qa, in an RNR loop towards qb (rnr_retry 7), gets no answer any more: its
// transport timer runs out (timeout 11, retry_cnt 1) inside the destroy, so when the call
// returns qa is in ERR and its SEND ended RETRY_EXC_ERR. Without a bound window the destroy
// returns at once (the first part).
TEST_P(Conformance, DestroyingAQpABoundType2WindowNamesWaitsForTheWindow) {
  const Behaviour& b = GetParam().behaviour;
  if (!b.destroy_qp_waits_for_bound_type2_window) {
    GTEST_SKIP() << "the device's destroy does not wait for a bound type 2 window (IBTA: "
                    "destroying the QP invalidates it)";
  }
  const BringUpParams p = Transport(Mtu::k1024, 11, 1, 7, 17);
  Buffer buf = Reg(8192, kAll | access::kMwBind);
  size_t bad = 99;
  {  // No window: at once.
    CqHandle cq = Cq();
    QpHandle q = Qp(QpType::kRc, 16, 16, 2, false, cq);
    const uint64_t t0 = backend_->NowNs();
    ASSERT_EQ(dev_->DestroyQp(q), 0);
    EXPECT_LT(backend_->NowNs() - t0, 10 * kSecond) << "a destroy with no window waited";
  }
  CqHandle ca = Cq(), cb = Cq();
  QpHandle qa = Qp(QpType::kRc, 16, 16, 2, false, ca), qb = Qp(QpType::kRc, 16, 16, 2, false, cb);
  ASSERT_EQ(ToRtsWith(*dev_, p, qa, qb), 0);
  ASSERT_EQ(ToRtsWith(*dev_, p, qb, qa), 0);
  MwHandle mw;
  uint32_t rkey = 0;
  ASSERT_EQ(dev_->AllocMw(pd_, MwType::kType2, &mw, &rkey), 0);
  SendWr bind = Send(5, {});
  bind.opcode = WrOpcode::kBindMw;
  bind.mw = mw;
  bind.rkey = (rkey & ~0xffu) | ((rkey + 1) & 0xffu);
  bind.bind_info.mr = buf.mr;
  bind.bind_info.addr = buf.Addr(1024);
  bind.bind_info.length = 1024;
  bind.bind_info.mw_access_flags = access::kRemoteWrite;
  ASSERT_EQ(dev_->PostSend(qb, {bind}, &bad), 0);
  auto bound = WaitWc(cb, 1, kSecond);
  ASSERT_EQ(bound.size(), 1u);
  ASSERT_EQ(bound[0].status, WcStatus::kSuccess) << ToName(bound[0].status);
  ASSERT_EQ(dev_->PostSend(qa, {Send(1, {buf.At(0, 8)})}, &bad), 0);  // qb has no receive
  backend_->Advance(20 * kSecond / 1000);  // RNR rounds, each answered
  EXPECT_EQ(StateOf(qa), QpState::kRts);
  const uint64_t t0 = backend_->NowNs();
  ASSERT_EQ(dev_->DestroyQp(qb), 0);
  EXPECT_GE(backend_->NowNs() - t0, 49 * kSecond) << "the destroy did not wait for the window";
  EXPECT_EQ(StateOf(qa), QpState::kErr) << "qa's transport timer ran out inside the destroy";
  OneWc(ca, 1, WcStatus::kRetryExcErr, kSecond);
}

// Row 132 (differential seed 20261244 sequence 1612): a READ NAKed as an invalid request by
// a responder of the same device (max_dest_rd_atomic 0). rxe schedules the responder for a
// READ request (rxe_resp.c rxe_resp_queue_pkt); measured with a CQ that overruns, the order
// on the shared CQ is: the READ's REM_INV_REQ_ERR, the responder's flushed receive, then
// the READs behind it (a WRITE's NAK flushes the requester's first: row 83). The requester's
// own receive is flushed before the responder's (seed 20261259 sequence 15300; probes rn-a,
// rn-b, rxe 3 of 3 each).
TEST_P(Conformance, AReadNakedAsInvalidFlushesTheRespondersReceiveBeforeTheReadsBehind) {
  const Behaviour& b = GetParam().behaviour;
  if (!b.loopback_read_nak_flushes_responder_first) {
    GTEST_SKIP() << "no order between two QPs' flushes on this device (IBTA)";
  }
  CqHandle c = Cq();
  QpHandle qa = Qp(QpType::kRc, 16, 16, 2, false, c), qb = Qp(QpType::kRc, 16, 16, 2, false, c);
  BringUpParams pa = Transport(Mtu::k1024, 11, 0, 0, 17);
  pa.max_rd_atomic = 4;
  BringUpParams pb = pa;
  pb.max_dest_rd_atomic = 0;
  ASSERT_EQ(ToRtsWith(*dev_, pa, qa, qb), 0);
  ASSERT_EQ(ToRtsWith(*dev_, pb, qb, qa), 0);
  Buffer buf = Reg(8192, kAll);
  size_t bad = 99;
  ASSERT_EQ(dev_->PostRecv(qb, {Recv(100, {buf.At(0, 64)})}, &bad), 0);
  ASSERT_EQ(dev_->PostRecv(qa, {Recv(200, {buf.At(64, 64)})}, &bad), 0);
  std::vector<SendWr> reads;
  for (uint64_t id = 2; id <= 4; ++id) {
    reads.push_back(RdmaTo(id, WrOpcode::kRdmaRead, {buf.At(1024 * id, 64)}, buf, 4096));
  }
  ASSERT_EQ(dev_->PostSend(qa, reads, &bad), 0);
  auto wcs = WaitWc(c, 5, kSecond);
  ASSERT_EQ(wcs.size(), 5u);
  const std::vector<std::pair<uint64_t, WcStatus>> want = {
      {2, WcStatus::kRemInvReqErr}, {200, WcStatus::kWrFlushErr}, {100, WcStatus::kWrFlushErr},
      {3, WcStatus::kWrFlushErr}, {4, WcStatus::kWrFlushErr}};
  for (size_t k = 0; k < want.size(); ++k) {
    EXPECT_EQ(wcs[k].wr_id, want[k].first) << "completion " << k;
    EXPECT_EQ(wcs[k].status, want[k].second) << "completion " << k << ": " << ToName(wcs[k].status);
  }
  EXPECT_EQ(StateOf(qa), QpState::kErr);
  EXPECT_EQ(StateOf(qb), QpState::kErr);
}

// Row 133 (differential seed 20261244 sequence 11265; probes timer-tick-flush-order and
// tick-bind): two RC SENDs posted together to peers in ERR time out in the same tick of the
// host's timers (retry_cnt 0). Linux runs every timer of the tick first, each scheduling its
// QP's completer; the completers end both SENDs RETRY_EXC_ERR, and only then do the flushes
// their rxe_qp_error calls scheduled run: both errors before either QP's flushed receives.
// Run three times: as is; with a BIND_MW behind each SEND (the requester runs the bind at
// once, but its completion waits behind the unanswered SEND, so the QP's flush takes it back,
// after the QP's receives; also for the QP whose flush waited for the tick's other timer);
// and waiting for the first completion alone (the program wakes up after the tick's softirq
// work, so the order in the CQ does not depend on when it polls).
TEST_P(Conformance, TwoTimersOfOneTickCompleteBeforeEitherQpFlushes) {
  const Behaviour& b = GetParam().behaviour;
  if (!b.tick_timers_complete_before_flushes) {
    GTEST_SKIP() << "no order between two QPs' completions on this device (IBTA)";
  }
  // Timeout 19 (2.1 s, 537 jiffies): level 2 of the kernel's timer wheel, whose buckets are
  // 64 jiffies (256 ms) wide, so both timers fall into one bucket unless one of its edges
  // comes between the two posts (at timeout 11, 3 jiffies, a tick did in 1 of 3 runs).
  const BringUpParams p = Transport(Mtu::k1024, 19, 0, 0, 17);
  Buffer buf = Reg(8192, kAll | access::kMwBind);
  enum Mode { kAlone, kBinds, kPollOne };
  auto run = [&](Mode mode) {
    const bool binds = mode == kBinds;
    SCOPED_TRACE(mode == kBinds ? "a BIND_MW behind each SEND"
                                : mode == kPollOne ? "the first completion waited for alone"
                                                   : "SENDs alone");
    CqHandle c = Cq();
    QpHandle qa = RcTowardsPeerInErr(c, p), qc = RcTowardsPeerInErr(c, p);
    ASSERT_FALSE(HasFailure());
    MwHandle mw[2];
    SendWr bind[2];
    for (int i = 0; binds && i < 2; ++i) {
      uint32_t rkey = 0;
      ASSERT_EQ(dev_->AllocMw(pd_, MwType::kType2, &mw[i], &rkey), 0);
      bind[i] = Send(i == 0 ? 2 : 4, {});
      bind[i].opcode = WrOpcode::kBindMw;
      bind[i].send_flags = send_flag::kSignaled;
      bind[i].mw = mw[i];
      bind[i].rkey = (rkey & ~0xffu) | ((rkey + 1) & 0xffu);
      bind[i].bind_info.mr = buf.mr;
      bind[i].bind_info.addr = buf.Addr(4096 + 1024 * i);
      bind[i].bind_info.length = 8;
      bind[i].bind_info.mw_access_flags = access::kRemoteWrite;
    }
    size_t bad = 99;
    ASSERT_EQ(dev_->PostRecv(qa, {Recv(101, {buf.At(0, 64)}), Recv(102, {buf.At(64, 64)})}, &bad),
              0);
    ASSERT_EQ(dev_->PostRecv(qc, {Recv(301, {buf.At(128, 64)}), Recv(302, {buf.At(192, 64)})},
                             &bad),
              0);
    ASSERT_EQ(dev_->PostSend(qa, {Send(1, {buf.At(1024, 8)})}, &bad), 0);
    ASSERT_EQ(dev_->PostSend(qc, {Send(3, {buf.At(2048, 8)})}, &bad), 0);
    if (binds) {
      ASSERT_EQ(dev_->PostSend(qa, {bind[0]}, &bad), 0);
      ASSERT_EQ(dev_->PostSend(qc, {bind[1]}, &bad), 0);
    }
    const size_t n = binds ? 8 : 6;
    std::vector<WorkCompletion> wcs;
    if (mode == kPollOne) {
      wcs = WaitWc(c, 1, 5 * kSecond);
      (void)StateOf(qa);  // a verb between the two waits (its answer may race on a device)
    }
    for (const WorkCompletion& wc : WaitWc(c, n - wcs.size(), 5 * kSecond)) wcs.push_back(wc);
    // A bound type 2 window holds its QP: dealloc the windows first (rxe's destroy waits 50 s).
    for (int i = 0; binds && i < 2; ++i) EXPECT_EQ(dev_->DeallocMw(mw[i]), 0);
    ASSERT_EQ(wcs.size(), n);
    // The two errors first (either order: the latest armed fires first on Linux), then each
    // QP's flush (its receives, then its bind), the first error's QP first.
    ASSERT_EQ(wcs[0].status, WcStatus::kRetryExcErr) << ToName(wcs[0].status);
    ASSERT_EQ(wcs[1].status, WcStatus::kRetryExcErr) << ToName(wcs[1].status);
    const bool c_first = wcs[0].wr_id == 3;
    EXPECT_EQ(wcs[1].wr_id, c_first ? 1u : 3u);
    std::vector<uint64_t> a_flush = {101, 102}, c_flush = {301, 302};
    if (binds) {
      a_flush.push_back(2);
      c_flush.push_back(4);
    }
    std::vector<uint64_t> want = c_first ? c_flush : a_flush;
    for (uint64_t id : c_first ? a_flush : c_flush) want.push_back(id);
    for (size_t k = 0; k < want.size(); ++k) {
      EXPECT_EQ(wcs[2 + k].wr_id, want[k]) << "completion " << 2 + k;
      EXPECT_EQ(wcs[2 + k].status, WcStatus::kWrFlushErr) << ToName(wcs[2 + k].status);
    }
  };
  run(kAlone);
  run(kBinds);
  run(kPollOne);
}

// Row 133 with a READ among the tick's timers (probe tick-read-retry): qa and qe run out
// (retry_cnt 0, peers in ERR) and qc, whose READ qd dropped while in INIT, resends it, all in
// one tick, fired latest armed first: qa, qc, qe. rxe runs a READ request's responder as a
// tasklet (rxe_resp_queue_pkt), queued behind qa's flush: qa's and qe's errors, qa's flushed
// receives, then the READ.
TEST_P(Conformance, AReadATimerOfTheTickResendsCompletesAfterTheTicksFlushes) {
  const Behaviour& b = GetParam().behaviour;
  if (!b.tick_timers_complete_before_flushes) {
    GTEST_SKIP() << "no order between two QPs' completions on this device (IBTA)";
  }
  // Timeout 19: one bucket of the timer wheel's level 2 for all three (see above).
  const BringUpParams fail = Transport(Mtu::k1024, 19, 0, 0, 17);
  const BringUpParams retry = Transport(Mtu::k1024, 19, 1, 0, 17);
  CqHandle c = Cq();
  QpHandle qa = RcTowardsPeerInErr(c, fail), qe = RcTowardsPeerInErr(c, fail);
  ASSERT_FALSE(HasFailure());
  QpHandle qc = Qp(QpType::kRc, 16, 16, 2, false, c), qd = Qp(QpType::kRc, 16, 16, 2, false, c);
  ASSERT_EQ(ToRtsWith(*dev_, retry, qc, qd), 0);
  ConnectionInfo to_qc;
  QpAttr qd_attr;
  ASSERT_EQ(dev_->LocalConnectionInfo(qc, &to_qc), 0);
  ASSERT_EQ(BringUpAttr(*dev_, retry, to_qc, &qd_attr), 0);
  ASSERT_EQ(BringUp(*dev_, qd, qd_attr, QpState::kInit), 0);  // drops the READ's first send
  Buffer buf = Reg(16384, kAll);
  size_t bad = 99;
  ASSERT_EQ(dev_->PostRecv(qa, {Recv(101, {buf.At(0, 64)}), Recv(102, {buf.At(64, 64)})}, &bad), 0);
  ASSERT_EQ(dev_->PostSend(qe, {Send(5, {buf.At(4096, 8)})}, &bad), 0);
  ASSERT_EQ(dev_->PostSend(qc, {RdmaTo(3, WrOpcode::kRdmaRead, {buf.At(2048, 8)}, buf, 8192)},
                           &bad),
            0);
  ASSERT_EQ(dev_->PostSend(qa, {Send(1, {buf.At(1024, 8)})}, &bad), 0);
  ASSERT_EQ(BringUp(*dev_, qd, qd_attr, QpState::kRtr), 0);  // answers the resent READ
  auto wcs = WaitWc(c, 5, 5 * kSecond);
  ASSERT_EQ(wcs.size(), 5u);
  // The two errors first (qe's first only where a tick fell between the posts: rxe 1 of 2
  // runs of the probe at timeout 11), then qa's flush, then the READ.
  const bool e_first = wcs[0].wr_id == 5;
  const std::vector<std::pair<uint64_t, WcStatus>> want = {
      {e_first ? 5 : 1, WcStatus::kRetryExcErr}, {e_first ? 1 : 5, WcStatus::kRetryExcErr},
      {101, WcStatus::kWrFlushErr}, {102, WcStatus::kWrFlushErr}, {3, WcStatus::kSuccess}};
  for (size_t k = 0; k < want.size(); ++k) {
    EXPECT_EQ(wcs[k].wr_id, want[k].first) << "completion " << k;
    EXPECT_EQ(wcs[k].status, want[k].second) << "completion " << k << ": " << ToName(wcs[k].status);
  }
}

// Differential seed 858754918255 sequence 859 (Behaviour::send_slot_keeps_status): rxe writes a
// send WQE's status only for an error, a flush, a local operation or a faked UD send, and
// ibv_post_send does not clear the slot's. A SEND posted to a QP in ERR is flushed (its slot
// now says WR_FLUSH_ERR); brought back to RTS with IBV_QP_CUR_STATE, the QP's WRs go round
// the ring, and the one that lands in that slot is executed (its data lands) but completes
// WR_FLUSH_ERR, unsignaled as it is, and the QP stays in RTS. The WR after it, in a slot never
// marked, completes SUCCESS; after RESET (which clears the slots) a whole lap does.
TEST_P(Conformance, AWrInASlotAFlushMarkedCompletesWithTheFlushStatus) {
  const Behaviour& b = GetParam().behaviour;
  RcPair r;
  FifteenDeepRcPair(Transport(pattr_.active_mtu, 14, 3, 3, 12), &r);
  if (IsSkipped() || HasFatalFailure()) return;
  Buffer buf = Reg(16384, kAll);
  size_t bad = 99;
  ASSERT_EQ(dev_->ModifyQp(r.qa, StateOnly(QpState::kErr), attr::kState), 0);
  ASSERT_EQ(dev_->PostSend(r.qa, {Send(1, {buf.At(0, 8)})}, &bad), 0);
  ExpectFlushedInOrder(r.ca, 1, 1);
  if (HasFatalFailure()) return;
  if (ModifyToRtsClaimingRts(r.qa) != 0) {
    GTEST_SKIP() << "the device refuses ERR -> RTS claiming RTS: a QP leaves ERR only "
                    "through RESET, which clears the ring";
  }
  // Slots 1 to 15: one WRITE each, all executed and SUCCESS.
  for (uint64_t i = 0; i < 15; ++i) {
    std::vector<SendWr> one = {RdmaTo(10 + i, WrOpcode::kRdmaWrite, {buf.At(64 * i, 8)}, buf,
                                      8192 + 64 * i)};
    ASSERT_EQ(dev_->PostSend(r.qa, one, &bad), 0) << "WRITE " << i;
    const auto wcs = WaitWc(r.ca, 1);
    ASSERT_EQ(wcs.size(), 1u) << "WRITE " << i;
    EXPECT_EQ(wcs[0].status, WcStatus::kSuccess) << "WRITE " << i << ": " << ToName(wcs[0].status);
  }
  // The ring's slot 0, the flushed SEND's: an unsignaled WRITE.
  std::memset(buf.buf + 2048, 0x6d, 32);
  SendWr marked = RdmaTo(100, WrOpcode::kRdmaWrite, {buf.At(2048, 32)}, buf, 12288);
  marked.send_flags = 0;
  ASSERT_EQ(dev_->PostSend(r.qa, {marked}, &bad), 0);
  std::vector<WorkCompletion> wcs = Drain(r.ca);
  if (b.send_slot_keeps_status) {
    ASSERT_EQ(wcs.size(), 1u) << "the flush's status in the slot asks for a completion";
    EXPECT_EQ(wcs[0].wr_id, 100u);
    EXPECT_EQ(wcs[0].status, WcStatus::kWrFlushErr) << ToName(wcs[0].status);
  } else {
    EXPECT_TRUE(wcs.empty()) << "an unsignaled WRITE that succeeds has no completion";
  }
  EXPECT_EQ(std::memcmp(buf.buf + 12288, buf.buf + 2048, 32), 0) << "the WRITE was executed";
  EXPECT_EQ(StateOf(r.qa), QpState::kRts);
  ASSERT_EQ(dev_->PostSend(r.qa, {RdmaTo(101, WrOpcode::kRdmaWrite, {buf.At(0, 8)}, buf, 13312)},
                           &bad), 0);
  OneWc(r.ca, 101, WcStatus::kSuccess);  // slot 1 was never marked
  // RESET clears the slots: a whole lap of the ring succeeds.
  for (QpHandle q : {r.qa, r.qb}) {
    ASSERT_EQ(dev_->ModifyQp(q, StateOnly(QpState::kReset), attr::kState), 0);
  }
  ASSERT_EQ(ToRtsWith(*dev_, Transport(pattr_.active_mtu, 14, 3, 3, 12), r.qa, r.qb), 0);
  ASSERT_EQ(ToRtsWith(*dev_, Transport(pattr_.active_mtu, 14, 3, 3, 12), r.qb, r.qa), 0);
  for (uint64_t i = 0; i < 16; ++i) {
    ASSERT_EQ(dev_->PostSend(r.qa, {RdmaTo(200 + i, WrOpcode::kRdmaWrite, {buf.At(0, 8)}, buf,
                                           14336)}, &bad), 0);
    wcs = WaitWc(r.ca, 1);
    ASSERT_EQ(wcs.size(), 1u) << "after RESET, WRITE " << i;
    EXPECT_EQ(wcs[0].status, WcStatus::kSuccess)
        << "after RESET, WRITE " << i << ": " << ToName(wcs[0].status);
  }
}

// Row 142, its credit half (probes slot-credit, slot-credit2; rxe 2 of 2 each): the slot also
// keeps rxe's wqe->has_rd_atomic, which only an acknowledgement (rxe_comp.c complete_ack)
// clears as it gives the READ/atomic credit back. A READ that fails REM_ACCESS_ERR never gives
// its credit back (Behaviour::failed_rd_atomic_keeps_credit: with max_rd_atomic 1 none is
// left after ERR -> RTS), and its slot says so. The READ that lands in that slot a lap later
// holds that credit already: it is sent, executed, and reports the slot's REM_ACCESS_ERR; its
// acknowledgement gives the credit back, so the next READ goes too.
TEST_P(Conformance, AReadInTheSlotOfAFailedReadUsesTheCreditItKept) {
  const Behaviour& b = GetParam().behaviour;
  BringUpParams p = Transport(pattr_.active_mtu, 14, 3, 3, 12);
  p.max_rd_atomic = 1;
  RcPair r;
  FifteenDeepRcPair(p, &r);
  if (IsSkipped() || HasFatalFailure()) return;
  Buffer buf = Reg(16384, kAll);
  Buffer unreadable = Reg(4096, access::kLocalWrite | access::kRemoteWrite);
  size_t bad = 99;
  ASSERT_EQ(dev_->PostSend(r.qa, {RdmaTo(1, WrOpcode::kRdmaRead, {buf.At(0, 64)}, unreadable, 0)},
                           &bad), 0);
  auto wcs = WaitWc(r.ca, 1);
  ASSERT_EQ(wcs.size(), 1u);
  ASSERT_EQ(wcs[0].status, WcStatus::kRemAccessErr) << ToName(wcs[0].status);
  // qb (which NAKed the READ) back through RESET, expecting the PSN after the READ's.
  ASSERT_EQ(dev_->ModifyQp(r.qb, StateOnly(QpState::kReset), attr::kState), 0);
  BringUpParams pb = p;
  pb.rq_psn = (p.sq_psn + 1) & 0xffffff;
  ASSERT_EQ(ToRtsWith(*dev_, pb, r.qb, r.qa), 0);
  if (ModifyToRtsClaimingRts(r.qa) != 0) {
    GTEST_SKIP() << "the device refuses ERR -> RTS claiming RTS: a QP leaves ERR only "
                    "through RESET, which clears the ring";
  }
  for (uint64_t i = 0; i < 15; ++i) {  // slots 1 to 15
    ASSERT_EQ(dev_->PostSend(r.qa, {RdmaTo(10 + i, WrOpcode::kRdmaWrite, {buf.At(0, 8)}, buf,
                                           8192)}, &bad), 0) << "WRITE " << i;
    wcs = WaitWc(r.ca, 1);
    ASSERT_EQ(wcs.size(), 1u) << "WRITE " << i;
    EXPECT_EQ(wcs[0].status, WcStatus::kSuccess) << "WRITE " << i << ": " << ToName(wcs[0].status);
  }
  std::memset(buf.buf + 4096, 0x47, 64);
  ASSERT_EQ(dev_->PostSend(r.qa, {RdmaTo(20, WrOpcode::kRdmaRead, {buf.At(2048, 64)}, buf, 4096)},
                           &bad), 0);  // slot 0, the failed READ's
  wcs = Drain(r.ca, kSecond / 5);
  if (b.send_slot_keeps_status) {
    ASSERT_EQ(wcs.size(), 1u) << "the READ goes on the credit its slot kept";
    EXPECT_EQ(wcs[0].status, WcStatus::kRemAccessErr) << "the slot's status: "
                                                      << ToName(wcs[0].status);
    EXPECT_EQ(std::memcmp(buf.buf + 2048, buf.buf + 4096, 64), 0) << "the READ was executed";
  } else if (b.failed_rd_atomic_keeps_credit) {
    EXPECT_TRUE(wcs.empty()) << "no credit is left: the READ waits";
    return;
  } else {
    ASSERT_EQ(wcs.size(), 1u);
    EXPECT_EQ(wcs[0].status, WcStatus::kSuccess) << ToName(wcs[0].status);
  }
  EXPECT_EQ(StateOf(r.qa), QpState::kRts);
  ASSERT_EQ(dev_->PostSend(r.qa, {RdmaTo(21, WrOpcode::kRdmaRead, {buf.At(1024, 64)}, buf, 4096)},
                           &bad), 0);
  OneWc(r.ca, 21, WcStatus::kSuccess);  // the credit came back
}

// Differential seed 20261257 sequence 1904 (row 143): a retry rxe started stays under way
// (comp.started_retry) through RESET until an acknowledgement resets the retry counters. With
// it under way, a NAK PSN sequence error moves comp.psn and asks for no retry, and an ACK
// older than comp.psn is dropped (rxe_comp.c check_psn: COMPST_DONE) without resetting
// anything. Here qa's SEND to a peer in RESET is retried once and ends RETRY_EXC_ERR; qa goes
// through RESET to RTS with retry_cnt 0, and two 2-packet WRITE_WITH_IMMs to a peer without a
// receive draw an RNR NAK and sequence NAKs at every RNR round. The RNR loop goes on (the
// sequence NAKs' completer runs push the transport timer on) until receives are posted.
TEST_P(Conformance, ASequenceNakDuringAStaleRetryEndsNothing) {
  Buffer buf = Reg(16384, kAll);
  for (size_t i = 0; i < 4096; ++i) buf.buf[i] = static_cast<uint8_t>(i * 5 + 3);
  RcPair r;  // qa's earlier retry stays under way; now retry_cnt 0, rnr_retry 7
  RcPairAfterStaleRetry(Transport(Mtu::k1024, 11, 0, 7, 17), buf, &r);
  if (HasFatalFailure()) return;
  size_t bad = 99;
  std::vector<SendWr> wrs = {RdmaTo(2, WrOpcode::kRdmaWriteWithImm, {buf.At(0, 2048)}, buf, 8192),
                             RdmaTo(3, WrOpcode::kRdmaWriteWithImm, {buf.At(2048, 2048)}, buf,
                                    10240)};
  wrs[0].imm_data = 0x11;
  wrs[1].imm_data = 0x22;
  ASSERT_EQ(dev_->PostSend(r.qa, wrs, &bad), 0);
  EXPECT_TRUE(Drain(r.ca, kSecond / 10).empty())
      << "no receive: RNR NAKs for ever, the sequence NAKs end nothing";
  EXPECT_EQ(StateOf(r.qa), QpState::kRts);
  ASSERT_EQ(dev_->PostRecv(r.qb, {Recv(10, {buf.At(12288, 64)}), Recv(11, {buf.At(12352, 64)})},
                           &bad), 0);
  const auto wcs = WaitWc(r.ca, 2);
  ASSERT_EQ(wcs.size(), 2u);
  for (const WorkCompletion& wc : wcs) {
    EXPECT_EQ(wc.status, WcStatus::kSuccess) << wc.wr_id << ": " << ToName(wc.status);
  }
  EXPECT_EQ(WaitWc(r.cb, 2).size(), 2u);
  EXPECT_EQ(std::memcmp(buf.buf + 8192, buf.buf, 4096), 0) << "both WRITEs landed";
}

// Differential seed 271681157250 sequence 636 (row 146): a READ response resets the retry
// counters before its data is written (rxe_comp.c check_ack: reset_retry_counters, then
// do_read), so a READ that fails LOC_PROT_ERR ends a retry under way. qa's earlier retry
// stays under way (RcPairAfterStaleRetry, as in the test above); qa's READ into a region of
// another PD fails; both QPs go through RESET to RTS (qa with retry_cnt 0), and a 2-packet SEND
// to qb without a receive draws an RNR NAK and a NAK PSN sequence error. Where a sequence NAK uses a
// retry (psn_nak_uses_retry) none is under way now: the SEND ends RETRY_EXC_ERR.
TEST_P(Conformance, AReadThatFailsLocallyEndsARetryUnderWay) {
  const Behaviour& b = GetParam().behaviour;
  Buffer buf = Reg(16384, kAll);
  const BringUpParams p = Transport(Mtu::k1024, 11, 0, 7, 17);  // retry_cnt 0, rnr_retry 7
  RcPair r;
  RcPairAfterStaleRetry(p, buf, &r);
  if (HasFatalFailure()) return;
  Buffer foreign = RegInOtherPd(4096, kAll);
  if (HasFailure()) return;
  size_t bad = 99;
  SendWr read = RdmaTo(2, WrOpcode::kRdmaRead, {foreign.At(0, 3000)}, buf, 4096);
  read.send_flags = send_flag::kSignaled;
  ASSERT_EQ(dev_->PostSend(r.qa, {read}, &bad), 0);
  OneWc(r.ca, 2, WcStatus::kLocProtErr);
  for (QpHandle q : {r.qa, r.qb}) {  // both start again at PSN 0
    ASSERT_EQ(dev_->ModifyQp(q, StateOnly(QpState::kReset), attr::kState), 0);
  }
  ASSERT_EQ(ToRtsWith(*dev_, p, r.qa, r.qb), 0);
  ASSERT_EQ(ToRtsWith(*dev_, p, r.qb, r.qa), 0);
  SendWr send = Send(3, {buf.At(0, 1024), buf.At(1024, 1024)});
  send.send_flags = send_flag::kSignaled;
  if (!b.psn_nak_uses_retry || !b.rnr_nak_then_seq_nak) {
    GTEST_SKIP() << "this device sends no NAK PSN sequence error behind an RNR NAK, or such a "
                    "NAK counts no retry: nothing here shows whether a retry is under way";
  }
  ASSERT_EQ(dev_->PostSend(r.qa, {send}, &bad), 0);
  // At the first sequence NAK, answered inside the post: well before the transport timer
  // (timeout 11: 8.4 ms), which would end the SEND RETRY_EXC_ERR as well.
  const auto wcs = WaitWc(r.ca, 1, kSecond / 1000);
  ASSERT_EQ(wcs.size(), 1u) << "the sequence NAK started a retry it had no count for";
  EXPECT_EQ(wcs[0].wr_id, 3u);
  EXPECT_EQ(wcs[0].status, WcStatus::kRetryExcErr) << ToName(wcs[0].status);
  EXPECT_EQ(StateOf(r.qa), QpState::kErr);
}

// Row 144 (probes ghost-read-*): two WRs posted in one call while qa is in ERR are flushed; where
// the requester takes one WQE per run in ERR (Behaviour::requester_walks_one_wqe_in_error) the
// second stays in the ring and goes out again after ERR -> RTS (a ghost, PSN p). Its ACK comes
// back over loopback before the READ posted behind it has left: the WQE at the consumer index
// is not started, so the ACK is dropped (rxe_comp.c get_wqe) and comp.psn stays at p. The READ
// (PSN p + 1) is answered, but check_psn drops a READ response newer than comp.psn; the
// transport timer resends the READ from comp.psn (PSN p), a duplicate the responder has no
// READ for, until RETRY_EXC_ERR. A WRITE behind the ghost completes: its ACK passes
// check_ack. Where the device takes no stale WQE the READ is the first request and completes.
TEST_P(Conformance, AReadBehindAGhostFailsWhereTheGhostsAckWasDropped) {
  const bool ghost = GetParam().behaviour.requester_walks_one_wqe_in_error;
  // Timeout 11 (8.4 ms), retry_cnt 1: RETRY_EXC_ERR within about 25 ms.
  const BringUpParams p = Transport(pattr_.active_mtu, 11, 1, 1, 12);
  // out_of_bounds: the READ reaches past the end of the peer's region, so it draws a NAK
  // (remote access error); newer than comp.psn, rxe drops that NAK too (check_psn).
  auto run = [&](WrOpcode op, bool out_of_bounds) {
    SCOPED_TRACE(std::string(ToName(op)) + (out_of_bounds ? " past the region's end" : ""));
    Buffer buf = Reg(16384, kAll);
    for (size_t i = 0; i < 64; ++i) buf.buf[8192 + i] = static_cast<uint8_t>(i + 1);
    RcPair pair;
    RcPairWithGhost(p,
                    {RdmaTo(1, WrOpcode::kRdmaWrite, {buf.At(0, 64)}, buf, 12288),
                     RdmaTo(2, WrOpcode::kRdmaWrite, {buf.At(0, 64)}, buf, 12288)},
                    &pair);
    if (HasFatalFailure() || IsSkipped()) return;
    const auto [ca, cb, qa, qb] = pair;
    size_t bad = 99;
    const size_t remote = out_of_bounds ? 16384 - 32 : 8192;
    ASSERT_EQ(dev_->PostSend(qa, {RdmaTo(10, op, {buf.At(256, 64)}, buf, remote)}, &bad), 0);
    if (out_of_bounds && !ghost) {
      OneWc(ca, 10, WcStatus::kRemAccessErr);
    } else if (ghost && op == WrOpcode::kRdmaRead) {
      OneWc(ca, 10, WcStatus::kRetryExcErr);
      EXPECT_EQ(StateOf(qa), QpState::kErr);
    } else {
      OneWc(ca, 10, WcStatus::kSuccess);
      EXPECT_EQ(StateOf(qa), QpState::kRts);
      if (op == WrOpcode::kRdmaRead) {
        EXPECT_EQ(std::memcmp(&buf.buf[256], &buf.buf[8192], 64), 0) << "the READ's data";
      }
    }
  };
  run(WrOpcode::kRdmaRead, false);
  if (HasFatalFailure() || IsSkipped()) return;
  run(WrOpcode::kRdmaWrite, false);
  if (HasFatalFailure()) return;
  run(WrOpcode::kRdmaRead, true);
}

// Row 145 (probes ghost-send-read, ghost-send-send): as above, with two SENDs posted in ERR to
// a peer without a receive. The ghost SEND's RNR NAK is dropped (the READ behind it not
// started), the READ goes at PSN 1 and draws a NAK PSN sequence error at PSN 0, checked
// against the WQE at the consumer index: rxe_req.c req_retry resends from that index at
// comp.psn, never the ghost before it. So the READ goes again at PSN 0 and completes, and a
// SEND after it lands in the peer's receive with its own bytes. Resending the ghost as well
// drew RNR NAKs until RNR_RETRY_EXC_ERR. Every device completes both.
TEST_P(Conformance, ARetryNeverResendsAGhost) {
  const BringUpParams p = Transport(pattr_.active_mtu, 14, 3, 3, 12);
  Buffer buf = Reg(16384, kAll);
  for (size_t i = 0; i < 64; ++i) {
    buf.buf[i] = 0x11;
    buf.buf[8192 + i] = static_cast<uint8_t>(i + 1);
    buf.buf[512 + i] = 0x77;
  }
  RcPair pair;
  RcPairWithGhost(p, {Send(1, {buf.At(0, 64)}), Send(2, {buf.At(0, 64)})}, &pair);
  if (HasFatalFailure() || IsSkipped()) return;
  const auto [ca, cb, qa, qb] = pair;
  size_t bad = 99;
  ASSERT_EQ(dev_->PostSend(qa, {RdmaTo(10, WrOpcode::kRdmaRead, {buf.At(256, 64)}, buf, 8192)}, &bad),
            0);
  OneWc(ca, 10, WcStatus::kSuccess);
  EXPECT_EQ(std::memcmp(&buf.buf[256], &buf.buf[8192], 64), 0) << "the READ's data";
  EXPECT_EQ(StateOf(qa), QpState::kRts);
  ASSERT_EQ(dev_->PostRecv(qb, {Recv(100, {buf.At(4096, 64)})}, &bad), 0);
  ASSERT_EQ(dev_->PostSend(qa, {Send(11, {buf.At(512, 64)})}, &bad), 0);
  OneWc(ca, 11, WcStatus::kSuccess);
  OneWc(cb, 100, WcStatus::kSuccess);
  EXPECT_EQ(buf.buf[4096], 0x77) << "the receive holds the last SEND, not the ghost";
  EXPECT_TRUE(Drain(cb, kSecond / 50).empty());
}

// Rows 147 and 148 (differential seed 368346329046 sequence 991; a review of row 147;
// examples/fidelity/34-36): after ERR -> RTS a ghost SEND goes to a peer in ERR, which drops
// it, and a local operation posted behind it fails. The ghost lies before rxe's consumer
// index, so it neither fences a LOCAL_INV (rxe_req.c rxe_wqe_is_fenced compares the
// requester's index with that consumer) nor holds the failure back (the completer's head is
// the failed WQE): it completes at once and the QP goes to ERR. The model held a failed
// bind behind the unanswered ghost until the QP was moved to ERR, and fenced a LOCAL_INV
// behind it for ever. Every device fails them the same way (one without ghosts has nothing
// before them).
TEST_P(Conformance, ALocalOperationThatFailsBehindAGhostCompletesAtOnce) {
  const BringUpParams p = Transport(pattr_.active_mtu, 11, 1, 0, 17);
  // A BIND_MW of a type 2 window on a region without MW_BIND; a LOCAL_INV of a type 1
  // window, which a LOCAL_INV may not invalidate.
  auto run = [&](WrOpcode op, WcStatus expected) {
    SCOPED_TRACE(ToName(op));
    Buffer buf = Reg(4096, kAll);  // no MW_BIND
    RcPair pair;
    RcPairWithGhost(p, {Send(1, {buf.At(0, 64)}), Send(2, {buf.At(0, 64)})}, &pair);
    if (HasFatalFailure() || IsSkipped()) return;
    const auto [ca, cb, qa, qb] = pair;
    ASSERT_EQ(dev_->ModifyQp(qb, StateOnly(QpState::kErr), attr::kState), 0);
    const bool bind = op == WrOpcode::kBindMw;
    MwHandle mw;
    uint32_t rkey = 0;
    ASSERT_EQ(dev_->AllocMw(pd_, bind ? MwType::kType2 : MwType::kType1, &mw, &rkey), 0);
    SendWr wr = Send(10, {});
    wr.opcode = op;
    if (bind) {
      wr.mw = mw;
      wr.rkey = (rkey & ~0xffu) | ((rkey + 1) & 0xffu);
      wr.bind_info.mr = buf.mr;
      wr.bind_info.addr = buf.Addr(0);
      wr.bind_info.length = 64;
      wr.bind_info.mw_access_flags = access::kRemoteRead;
    } else {
      wr.imm_data = rkey;
    }
    size_t bad = 99;
    ASSERT_EQ(dev_->PostSend(qa, {wr}, &bad), 0);
    OneWc(ca, 10, expected, kSecond / 20);
    EXPECT_EQ(StateOf(qa), QpState::kErr);
    EXPECT_TRUE(Drain(ca, kSecond / 50).empty());
    EXPECT_TRUE(Drain(cb, kSecond / 50).empty());
  };
  run(WrOpcode::kBindMw, WcStatus::kMwBindErr);
  if (HasFatalFailure() || IsSkipped()) return;
  run(WrOpcode::kLocalInv, WcStatus::kLocQpOpErr);
}

}  // namespace
}  // namespace qptwin::testing
