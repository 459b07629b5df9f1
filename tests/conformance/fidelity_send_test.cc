// The requester's side of the differences between rxe and IBTA found by the hand-written
// scenarios of examples/fidelity (docs/differences.md rows 11-17), each asserted as the
// case's device description says: a valid WR before a local error, the status of a bad lkey,
// READ/atomic depth 0 on either side, WRs queued in SQD, zero-length RDMA without a key.
#include <cstring>

#include "spec/bring_up.h"
#include "tests/conformance/fixture.h"

namespace qptwin::testing {
namespace {

using access::kAll;

SendWr Rdma(uint64_t wr_id, WrOpcode op, std::vector<Sge> sges, uint64_t addr, uint32_t rkey) {
  SendWr wr;
  wr.wr_id = wr_id;
  wr.opcode = op;
  wr.sg_list = std::move(sges);
  wr.send_flags = send_flag::kSignaled;
  wr.remote_addr = addr;
  wr.rkey = rkey;
  return wr;
}

std::vector<WcStatus> Statuses(const std::vector<WorkCompletion>& wcs) {
  std::vector<WcStatus> out;
  for (const WorkCompletion& wc : wcs) out.push_back(wc.status);
  return out;
}

// examples/fidelity/01: rxe completes the WRITE before the SEND whose lkey names no MR (its
// data lands); IBTA's model may flush it. Either way the failing WR completes in error.
TEST_P(Conformance, ValidWrBeforeALocalErrorCompletesWhereTheDeviceDoes) {
  const Behaviour& b = GetParam().behaviour;
  auto [qa, qb] = ConnectedPair(QpType::kRc);
  Buffer buf = Reg(4096, kAll), dst = Reg(4096, kAll);
  std::memset(buf.buf, 0x3c, 64);
  SendWr write = Rdma(1, WrOpcode::kRdmaWrite, {buf.At(0, 64)}, dst.Addr(0), dst.rkey);
  SendWr bad_key = Send(2, {Sge{buf.Addr(0), 16, 0}});  // lkey 0: no MR has it
  size_t bad = 99;
  ASSERT_EQ(dev_->PostSend(qa, {write}, &bad), 0);
  ASSERT_EQ(dev_->PostSend(qa, {bad_key}, &bad), 0);
  auto wcs = WaitWc(cq_, 2);
  ASSERT_EQ(wcs.size(), 2u);
  EXPECT_EQ(wcs[0].wr_id, 1u);
  EXPECT_EQ(wcs[1].wr_id, 2u);
  const WcStatus key_error = b.unresolved_lkey_is_qp_op_err ? WcStatus::kLocQpOpErr
                                                            : WcStatus::kLocProtErr;
  EXPECT_EQ(wcs[1].status, key_error);
  if (b.local_error_completes_in_order) {
    EXPECT_EQ(wcs[0].status, WcStatus::kSuccess);
    EXPECT_EQ(dst.buf[0], 0x3c) << "the WRITE's data landed";
    EXPECT_EQ(dst.buf[63], 0x3c);
  } else {
    EXPECT_TRUE(wcs[0].status == WcStatus::kSuccess || wcs[0].status == WcStatus::kWrFlushErr)
        << ToName(wcs[0].status);
  }
  EXPECT_EQ(StateOf(qa), QpState::kErr);
  EXPECT_EQ(StateOf(qb), QpState::kRts);
}

// examples/fidelity/02: an lkey that resolves to no MR vs an SGE past the end of a valid MR.
TEST_P(Conformance, UnresolvedLkeyAndSgePastTheEndGiveTheDevicesStatuses) {
  const Behaviour& b = GetParam().behaviour;
  Buffer buf = Reg(4096, kAll);
  const Sge cases[] = {Sge{buf.Addr(0), 16, 0}, buf.At(4090, 16)};
  const WcStatus want[] = {
      b.unresolved_lkey_is_qp_op_err ? WcStatus::kLocQpOpErr : WcStatus::kLocProtErr,
      WcStatus::kLocProtErr};
  for (int i = 0; i < 2; ++i) {
    CqHandle cq = Cq(16);
    auto [qa, qb] = ConnectedPair(QpType::kRc, cq, cq);
    size_t bad = 99;
    ASSERT_EQ(dev_->PostRecv(qb, {Recv(10, {buf.At(1024, 64)})}, &bad), 0);
    ASSERT_EQ(dev_->PostSend(qa, {Send(1, {cases[i]})}, &bad), 0);
    auto wcs = WaitWc(cq, 1);
    ASSERT_EQ(wcs.size(), 1u);
    EXPECT_EQ(wcs[0].status, want[i]) << (i == 0 ? "lkey 0" : "past the end");
    EXPECT_EQ(StateOf(qa), QpState::kErr);
  }
}

// examples/fidelity/06: with max_rd_atomic 0 no READ ever starts (nor what is behind it).
TEST_P(Conformance, ReadWithMaxRdAtomicZeroNeverStarts) {
  QpHandle qa = Qp(QpType::kRc), qb = Qp(QpType::kRc);
  QpAttr a = FullAttr(qa, qb);
  a.max_rd_atomic = 0;
  ASSERT_EQ(BringUp(*dev_, qa, a, QpState::kRts), 0);
  Drive(QpType::kRc, qb, QpState::kRts, qa);
  Buffer buf = Reg(4096, kAll);
  size_t bad = 99;
  ASSERT_EQ(dev_->PostSend(qa, {Rdma(1, WrOpcode::kRdmaRead, {buf.At(0, 16)}, buf.Addr(64),
                                     buf.rkey)},
                           &bad),
            0);
  EXPECT_TRUE(Drain(cq_, kSecond / 5).empty());
  EXPECT_EQ(StateOf(qa), QpState::kRts);
  ASSERT_EQ(dev_->ModifyQp(qa, StateOnly(QpState::kErr), attr::kState), 0);
  EXPECT_EQ(Statuses(WaitWc(cq_, 1)), std::vector<WcStatus>{WcStatus::kWrFlushErr});
}

// examples/fidelity/07: a responder with max_dest_rd_atomic 0 NAKs a READ: Invalid Request.
TEST_P(Conformance, ReadToAResponderWithoutResourcesIsRemInvReqErr) {
  QpHandle qa = Qp(QpType::kRc), qb = Qp(QpType::kRc);
  QpAttr a = FullAttr(qb, qa);
  a.max_dest_rd_atomic = 0;
  ASSERT_EQ(BringUp(*dev_, qb, a, QpState::kRts), 0);
  Drive(QpType::kRc, qa, QpState::kRts, qb);
  Buffer buf = Reg(4096, kAll);
  size_t bad = 99;
  ASSERT_EQ(dev_->PostSend(qa, {Rdma(1, WrOpcode::kRdmaRead, {buf.At(0, 16)}, buf.Addr(64),
                                     buf.rkey)},
                           &bad),
            0);
  EXPECT_EQ(Statuses(WaitWc(cq_, 1)), std::vector<WcStatus>{WcStatus::kRemInvReqErr});
  EXPECT_EQ(StateOf(qa), QpState::kErr);
  EXPECT_EQ(StateOf(qb), QpState::kErr);
}

// examples/fidelity/08: a WR posted in SQD waits; after SQD -> RTS it starts at once (IBTA)
// or only with the next doorbell (rxe).
TEST_P(Conformance, WrQueuedInSqdStartsInRtsOrAtTheNextDoorbell) {
  auto [qa, qb] = ConnectedPair(QpType::kRc);
  (void)qb;
  QpAttr a = FullAttr(qa, qb);
  ASSERT_EQ(ModifyOnMinimumMask(*dev_, qa, QpType::kRc, QpState::kRts, QpState::kSqd, a), 0);
  (void)dev_->WaitForAsyncEvent(EventType::kSqDrained, qa, kSecond / 2);
  Buffer buf = Reg(4096, kAll);
  size_t bad = 99;
  ASSERT_EQ(dev_->PostSend(qa, {Rdma(1, WrOpcode::kRdmaWrite, {buf.At(0, 16)}, buf.Addr(64),
                                     buf.rkey)},
                           &bad),
            0);
  EXPECT_TRUE(Drain(cq_, kSecond / 10).empty()) << "nothing starts in SQD";
  ASSERT_EQ(ModifyOnMinimumMask(*dev_, qa, QpType::kRc, QpState::kSqd, QpState::kRts, a), 0);
  auto after_rts = Drain(cq_, kSecond / 5);
  if (GetParam().behaviour.rts_waits_for_doorbell) {
    EXPECT_TRUE(after_rts.empty()) << "rxe: RTS alone starts nothing";
    ASSERT_EQ(dev_->PostSend(qa, {Rdma(2, WrOpcode::kRdmaWrite, {buf.At(0, 16)},
                                       buf.Addr(128), buf.rkey)},
                             &bad),
              0);
    auto wcs = WaitWc(cq_, 2);
    ASSERT_EQ(wcs.size(), 2u);
    EXPECT_EQ(wcs[0].wr_id, 1u);
    EXPECT_EQ(wcs[1].wr_id, 2u);
  } else {
    ASSERT_EQ(after_rts.size(), 1u);
    EXPECT_EQ(after_rts[0].wr_id, 1u);
    EXPECT_EQ(after_rts[0].status, WcStatus::kSuccess);
  }
}

// examples/fidelity/10, IBTA C9-88: a zero-length WRITE or READ needs no valid R_Key.
TEST_P(Conformance, ZeroLengthRdmaNeedsNoValidRkey) {
  auto [qa, qb] = ConnectedPair(QpType::kRc);
  size_t bad = 99;
  ASSERT_EQ(dev_->PostSend(qa, {Rdma(1, WrOpcode::kRdmaWrite, {}, 0, 0),
                                Rdma(2, WrOpcode::kRdmaRead, {}, 0, 0)},
                           &bad),
            0);
  EXPECT_EQ(Statuses(WaitWc(cq_, 2)),
            (std::vector<WcStatus>{WcStatus::kSuccess, WcStatus::kSuccess}));
  EXPECT_EQ(StateOf(qa), QpState::kRts);
  EXPECT_EQ(StateOf(qb), QpState::kRts);
}

// examples/fidelity/13, IBTA C10-93.1.1: a UD message longer than the path MTU sends nothing
// and completes successfully, before its SGEs are looked at (this one runs past its MR).
TEST_P(Conformance, UdMessageOverTheMtuSucceedsWithoutItsSgesChecked) {
  auto [qa, qb] = ConnectedPair(QpType::kUd);
  Buffer small = Reg(256, kAll), dst = Reg(8192, kAll);
  size_t bad = 99;
  ASSERT_EQ(dev_->PostRecv(qb, {Recv(10, {dst.At(0, 8192)})}, &bad), 0);
  AhHandle ah;
  ASSERT_EQ(dev_->CreateAh(pd_, FullAttr(qb, {}).ah_attr, &ah), 0);
  ConnectionInfo info;
  ASSERT_EQ(dev_->LocalConnectionInfo(qb, &info), 0);
  SendWr wr = Send(1, {small.At(0, MtuBytes(pattr_.active_mtu) + 1024)});
  wr.ah = ah;
  wr.remote_qpn = info.qp_num;
  wr.remote_qkey = kQkey;
  ASSERT_EQ(dev_->PostSend(qa, {wr}, &bad), 0);
  OneWc(cq_, 1, WcStatus::kSuccess);
  EXPECT_TRUE(Drain(cq_).empty()) << "nothing arrived";
  EXPECT_EQ(StateOf(qa), QpState::kRts);
  EXPECT_EQ(dev_->DestroyAh(ah), 0);
}

// examples/fidelity/13: inline data is copied from the program's memory at post time; its
// SGE's lkey is not used (here: a buffer registered in another PD, lkey 0).
TEST_P(Conformance, InlineDataNeedsNoLkeyOfTheQpsPd) {
  if (dattr_.max_inline_data < 32) GTEST_SKIP() << "max_inline_data " << dattr_.max_inline_data;
  Buffer src = RegInOtherPd(4096, kAll);
  if (HasFailure()) return;
  std::memset(src.buf, 0x6b, 32);
  QpInitAttr init;
  init.qp_type = QpType::kRc;
  init.pd = pd_;
  init.send_cq = init.recv_cq = cq_;
  init.cap = {16, 16, 1, 1, 64};
  QpHandle qa, qb;
  QpCap actual;
  ASSERT_EQ(dev_->CreateQp(init, &qa, &actual), 0);
  qb = Qp(QpType::kRc);
  Drive(QpType::kRc, qa, QpState::kRts, qb);
  Drive(QpType::kRc, qb, QpState::kRts, qa);
  Buffer dst = Reg(4096, kAll);
  size_t bad = 99;
  ASSERT_EQ(dev_->PostRecv(qb, {Recv(10, {dst.At(0, 64)})}, &bad), 0);
  SendWr wr = Send(1, {Sge{reinterpret_cast<uint64_t>(src.buf), 32, 0}});
  wr.send_flags |= send_flag::kInline;
  ASSERT_EQ(dev_->PostSend(qa, {wr}, &bad), 0);
  EXPECT_EQ(Statuses(WaitWc(cq_, 2)),
            (std::vector<WcStatus>{WcStatus::kSuccess, WcStatus::kSuccess}));
  EXPECT_EQ(dst.buf[0], 0x6b);
  EXPECT_EQ(dst.buf[31], 0x6b);
}

// examples/fidelity/14: rxe runs a post's exchange inside ibv_post_send (requester, loopback
// responder, completer): a query right after it sees both PSNs moved, and a WRITE to a bad
// rkey has moved the QP to ERR before the call returns. Elsewhere only after the CQE.
TEST_P(Conformance, PostSendRunsItsExchangeWhereTheDeviceDoes) {
  const bool inline_run = GetParam().behaviour.post_send_runs_to_completion;
  auto [qa, qb] = ConnectedPair(QpType::kRc);
  Buffer buf = Reg(4096, kAll), dst = Reg(4096, kAll);
  QpAttr a0, b0;
  QpInitAttr init;
  ASSERT_EQ(dev_->QueryQp(qa, &a0, &init), 0);
  ASSERT_EQ(dev_->QueryQp(qb, &b0, &init), 0);
  size_t bad = 99;
  ASSERT_EQ(dev_->PostSend(qa, {Rdma(1, WrOpcode::kRdmaWrite, {buf.At(0, 64)}, dst.Addr(0),
                                     dst.rkey)}, &bad), 0);
  QpAttr a1, b1;
  ASSERT_EQ(dev_->QueryQp(qa, &a1, &init), 0);
  ASSERT_EQ(dev_->QueryQp(qb, &b1, &init), 0);
  if (inline_run) {
    EXPECT_EQ(a1.sq_psn, (a0.sq_psn + 1) & 0xffffff);
    EXPECT_EQ(b1.rq_psn, (b0.rq_psn + 1) & 0xffffff);
  }
  ASSERT_EQ(WaitWc(cq_, 1).size(), 1u);
  ASSERT_EQ(dev_->PostSend(qa, {Rdma(2, WrOpcode::kRdmaWrite, {buf.At(0, 64)}, dst.Addr(4064),
                                     dst.rkey)}, &bad), 0);
  if (inline_run) {
    EXPECT_EQ(StateOf(qa), QpState::kErr) << "the NAK came inside the post";
  }
  auto wcs = WaitWc(cq_, 1);
  ASSERT_EQ(wcs.size(), 1u);
  EXPECT_EQ(wcs[0].status, WcStatus::kRemAccessErr);
  EXPECT_EQ(StateOf(qa), QpState::kErr);
}

// examples/fidelity/15: a SEND to a QP without a receive (rnr_retry 7): rxe's transport timer
// keeps running through the RNR waits and ends it with RETRY_EXC_ERR after retry_cnt
// timeouts; IBTA retries the RNR until a receive comes.
TEST_P(Conformance, RnrWaitCountsTransportTimeoutsWhereTheDeviceDoes) {
  const bool counts = GetParam().behaviour.retry_timer_runs_during_rnr;
  QpHandle qa = Qp(QpType::kRc), qb = Qp(QpType::kRc);
  BringUpParams p;
  p.path_mtu = pattr_.active_mtu;
  p.timeout = 11;  // 8.4 ms
  p.retry_cnt = 1;
  p.rnr_retry = 7;
  p.min_rnr_timer = 17;  // 3.84 ms
  for (auto [self, peer] : {std::pair{qa, qb}, std::pair{qb, qa}}) {
    ConnectionInfo info;
    ASSERT_EQ(dev_->LocalConnectionInfo(peer, &info), 0);
    QpAttr a;
    ASSERT_EQ(BringUpAttr(*dev_, p, info, &a), 0);
    ASSERT_EQ(BringUp(*dev_, self, a, QpState::kRts), 0);
  }
  Buffer buf = Reg(4096, kAll);
  size_t bad = 99;
  ASSERT_EQ(dev_->PostSend(qa, {Send(1, {buf.At(0, 64)})}, &bad), 0);
  if (counts) {
    auto wcs = WaitWc(cq_, 1, kSecond / 2);
    ASSERT_EQ(wcs.size(), 1u);
    EXPECT_EQ(wcs[0].status, WcStatus::kRetryExcErr);
    EXPECT_EQ(StateOf(qa), QpState::kErr);
    return;
  }
  EXPECT_TRUE(Drain(cq_, kSecond / 5).empty()) << "still retrying the RNR";
  ASSERT_EQ(dev_->PostRecv(qb, {Recv(10, {buf.At(1024, 64)})}, &bad), 0);
  auto wcs = WaitWc(cq_, 2);
  ASSERT_EQ(wcs.size(), 2u);
  EXPECT_EQ(wcs[0].status, WcStatus::kSuccess);
  EXPECT_EQ(wcs[1].status, WcStatus::kSuccess);
}

// Connects RC QPs a and b in RTS with timeout 11 (8.4 ms; rxe: 3 jiffies at HZ 250) and
// min_rnr_timer 17 (3.84 ms): 0 or the first errno.
int ConnectShortTimeouts(Device& dev, Mtu mtu, QpHandle a, QpHandle b, int retry_cnt,
                         int rnr_retry) {
  BringUpParams p;
  p.path_mtu = mtu;
  p.timeout = 11;
  p.retry_cnt = retry_cnt;
  p.rnr_retry = rnr_retry;
  p.min_rnr_timer = 17;
  for (auto [self, peer] : {std::pair{a, b}, std::pair{b, a}}) {
    ConnectionInfo info;
    QpAttr attr;
    if (int e = dev.LocalConnectionInfo(peer, &info)) return e;
    if (int e = BringUpAttr(dev, p, info, &attr)) return e;
    if (int e = BringUp(dev, self, attr, QpState::kRts)) return e;
  }
  return 0;
}

// examples/fidelity/18: SEND wr 1 into a QP without a receive (rnr_retry 7) and a second WR
// behind it. The responder NAKs the second one's PSN as out of sequence. On rxe that NAK counts
// retry_cnt down (Behaviour::psn_nak_uses_retry): with retry_cnt 0 wr 1 ends at once with
// RETRY_EXC_ERR; with 1 the first NAK takes the retry and later ones count no more, so the
// RNR loop goes on (as without the behaviour).
TEST_P(Conformance, SequenceNakCountsARetryWhereTheDeviceDoes) {
  const bool counts = GetParam().behaviour.psn_nak_uses_retry;
  Buffer buf = Reg(8192, kAll);
  for (int retry_cnt : {0, 1}) {
    SCOPED_TRACE("retry_cnt " + std::to_string(retry_cnt));
    CqHandle cq = Cq();
    QpHandle qa = Qp(QpType::kRc, 16, 16, 2, true, cq), qb = Qp(QpType::kRc);
    ASSERT_EQ(ConnectShortTimeouts(*dev_, pattr_.active_mtu, qa, qb, retry_cnt, 7), 0);
    size_t bad = 99;
    ASSERT_EQ(dev_->PostSend(qa, {Send(1, {buf.At(0, 64)}), Send(2, {buf.At(64, 64)})}, &bad), 0);
    if (counts && retry_cnt == 0) {
      auto wcs = WaitWc(cq, 2, kSecond / 2);
      ASSERT_EQ(wcs.size(), 2u);
      EXPECT_EQ(wcs[0].wr_id, 1u);
      EXPECT_EQ(wcs[0].status, WcStatus::kRetryExcErr);
      EXPECT_EQ(wcs[1].status, WcStatus::kWrFlushErr);
      EXPECT_EQ(StateOf(qa), QpState::kErr);
      continue;
    }
    // Longer than the 12-24 ms rxe takes to end a lone SEND's RNR loop with retry_cnt 0 or 1.
    EXPECT_TRUE(Drain(cq, kSecond / 5).empty()) << "still retrying the RNR";
    EXPECT_EQ(StateOf(qa), QpState::kRts);
    ASSERT_EQ(dev_->PostRecv(qb, {Recv(10, {buf.At(4096, 64)}), Recv(11, {buf.At(4160, 64)})},
                             &bad), 0);
    auto wcs = WaitWc(cq, 2);
    ASSERT_EQ(wcs.size(), 2u);
    EXPECT_EQ(wcs[0].status, WcStatus::kSuccess);
    EXPECT_EQ(wcs[1].status, WcStatus::kSuccess);
  }
}

// examples/fidelity/18: a receive posted to a QP in ERR, then a request arriving for that QP.
// The request is dropped before any responder runs, so on a device whose receives in ERR wait
// (Behaviour::recv_in_err_waits) the receive is flushed only by the next move to ERR.
TEST_P(Conformance, RequestToAQpInErrFlushesNoWaitingReceive) {
  const bool waits = GetParam().behaviour.recv_in_err_waits;
  CqHandle ca = Cq(), cb = Cq();
  QpHandle qa = Qp(QpType::kRc, 16, 16, 2, false, ca), qb = Qp(QpType::kRc, 16, 16, 2, false, cb);
  ASSERT_EQ(ConnectShortTimeouts(*dev_, pattr_.active_mtu, qa, qb, 1, 0), 0);
  Buffer buf = Reg(4096, kAll);
  ASSERT_EQ(dev_->ModifyQp(qb, StateOnly(QpState::kErr), attr::kState), 0);
  size_t bad = 99;
  ASSERT_EQ(dev_->PostRecv(qb, {Recv(10, {buf.At(1024, 64)})}, &bad), 0);
  ASSERT_EQ(dev_->PostSend(qa, {Send(1, {buf.At(0, 64)})}, &bad), 0);
  auto swc = WaitWc(ca, 1, kSecond / 2);  // no answer: the retries run out
  ASSERT_EQ(swc.size(), 1u);
  EXPECT_EQ(swc[0].status, WcStatus::kRetryExcErr);
  auto early = Drain(cb, kSecond / 20);
  if (waits) {
    EXPECT_TRUE(early.empty()) << "the request flushed the waiting receive";
    ASSERT_EQ(dev_->ModifyQp(qb, StateOnly(QpState::kErr), attr::kState), 0);
    early = WaitWc(cb, 1);
  }
  ASSERT_EQ(early.size(), 1u);
  EXPECT_EQ(early[0].wr_id, 10u);
  EXPECT_EQ(early[0].status, WcStatus::kWrFlushErr);
}

// WRs queued in SQD wait, on rxe, for a doorbell after SQD -> RTS (Behaviour::
// rts_waits_for_doorbell), and every ibv_post_send rings it: also one refused with ENOMEM
// because the queue is full. So after the refused post every queued WR completes, on every
// device (IBTA: they started at RTS already).
TEST_P(Conformance, ARefusedPostStillStartsTheQueuedWrs) {
  CqHandle ca = Cq(), cb = Cq();
  auto [qa, qb] = ConnectedPair(QpType::kRc, ca, cb, 8, true);
  const uint32_t depth = SendDepth(qa);
  ASSERT_LE(depth, 16u);
  Buffer buf = Reg(4096, kAll);
  size_t bad = 99;
  std::vector<RecvWr> recvs;
  for (uint32_t i = 0; i < depth; ++i) recvs.push_back(Recv(100 + i, {buf.At(2048 + 64 * i, 64)}));
  ASSERT_EQ(dev_->PostRecv(qb, recvs, &bad), 0);
  ASSERT_EQ(dev_->ModifyQp(qa, StateOnly(QpState::kSqd), attr::kState), 0);
  std::vector<SendWr> sends;
  for (uint32_t i = 0; i < depth; ++i) sends.push_back(Send(i + 1, {buf.At(64 * i, 8)}));
  ASSERT_EQ(dev_->PostSend(qa, sends, &bad), 0);
  ASSERT_EQ(dev_->ModifyQp(qa, StateOnly(QpState::kRts), attr::kState), 0);
  EXPECT_EQ(dev_->PostSend(qa, {Send(99, {buf.At(0, 8)})}, &bad), ENOMEM) << "the queue is full";
  EXPECT_EQ(bad, 0u);
  auto wcs = WaitWc(ca, static_cast<int>(depth));
  ASSERT_EQ(wcs.size(), depth);
  for (uint32_t i = 0; i < depth; ++i) {
    EXPECT_EQ(wcs[i].wr_id, i + 1);
    EXPECT_EQ(wcs[i].status, WcStatus::kSuccess);
  }
}

// A 3-packet SEND into a 16-byte receive: the responder NAKs the packet that overflows it
// (the first). Where a post runs its exchange inside ibv_post_send (rxe's loopback,
// Behaviour::post_send_runs_to_completion) the NAK arrives before the next packet leaves,
// so the requester sends no more and its sq_psn moves by 1; elsewhere by the whole message.
TEST_P(Conformance, AFatalNakStopsTheMessageWhereTheDeviceRunsItInThePost) {
  CqHandle ca = Cq(), cb = Cq();
  auto [qa, qb] = ConnectedPair(QpType::kRc, ca, cb);
  QpAttr a0, a1;
  QpInitAttr init;
  ASSERT_EQ(dev_->QueryQp(qa, &a0, &init), 0);
  const uint32_t mtu = MtuBytes(a0.path_mtu);
  Buffer buf = Reg(16384, kAll);
  size_t bad = 99;
  ASSERT_EQ(dev_->PostRecv(qb, {Recv(10, {buf.At(12288, 16)})}, &bad), 0);
  ASSERT_EQ(dev_->PostSend(qa, {Send(1, {buf.At(0, 2 * mtu + 100)})}, &bad), 0);
  auto wcs = WaitWc(ca, 1);
  ASSERT_EQ(wcs.size(), 1u);
  EXPECT_NE(wcs[0].status, WcStatus::kSuccess);
  ASSERT_EQ(dev_->QueryQp(qa, &a1, &init), 0);
  const uint32_t sent = GetParam().behaviour.post_send_runs_to_completion ? 1 : 3;
  EXPECT_EQ(a1.sq_psn, (a0.sq_psn + sent) & 0xffffff) << "path MTU " << mtu;
}

// The same for an RNR NAK that ends the message (rnr_retry 0: RNR_RETRY_EXC_ERR).
TEST_P(Conformance, AFatalRnrNakStopsTheMessageWhereTheDeviceRunsItInThePost) {
  CqHandle ca = Cq(), cb = Cq();
  QpHandle qa = Qp(QpType::kRc, 16, 16, 2, true, ca), qb = Qp(QpType::kRc, 16, 16, 2, false, cb);
  ASSERT_EQ(ConnectShortTimeouts(*dev_, pattr_.active_mtu, qa, qb, 1, 0), 0);
  QpAttr a0, a1;
  QpInitAttr init;
  ASSERT_EQ(dev_->QueryQp(qa, &a0, &init), 0);
  const uint32_t mtu = MtuBytes(a0.path_mtu);
  Buffer buf = Reg(4 * mtu, kAll);
  size_t bad = 99;
  ASSERT_EQ(dev_->PostSend(qa, {Send(1, {buf.At(0, 2 * mtu + 100)})}, &bad), 0);
  auto wcs = WaitWc(ca, 1);
  ASSERT_EQ(wcs.size(), 1u);
  EXPECT_EQ(wcs[0].status, WcStatus::kRnrRetryExcErr);
  ASSERT_EQ(dev_->QueryQp(qa, &a1, &init), 0);
  const uint32_t sent = GetParam().behaviour.post_send_runs_to_completion ? 1 : 3;
  EXPECT_EQ(a1.sq_psn, (a0.sq_psn + sent) & 0xffffff) << "path MTU " << mtu;
}

// examples/fidelity/19: SQD while a SEND waits out an RNR timer (no transport timer, a 491 ms
// RNR timer). Where a retry in SQD resends nothing (Behaviour::sqd_retry_unsends) the SQ
// drains when the RNR timer expires and the SEND starts again after SQD -> RTS; elsewhere the
// drain waits for the SEND, which is retried until a receive comes.
TEST_P(Conformance, ARetryInSqdUnsendsWhereTheDeviceDoes) {
  const bool unsends = GetParam().behaviour.sqd_retry_unsends;
  CqHandle ca = Cq(), cb = Cq();
  QpHandle qa = Qp(QpType::kRc, 16, 16, 2, true, ca), qb = Qp(QpType::kRc, 16, 16, 2, false, cb);
  BringUpParams p;
  p.path_mtu = pattr_.active_mtu;
  p.timeout = 0;
  p.retry_cnt = 0;
  p.rnr_retry = 7;
  for (auto [self, peer] : {std::pair{qa, qb}, std::pair{qb, qa}}) {
    p.min_rnr_timer = self == qb ? 31 : 17;  // b NAKs with 491 ms
    ConnectionInfo info;
    ASSERT_EQ(dev_->LocalConnectionInfo(peer, &info), 0);
    QpAttr a;
    ASSERT_EQ(BringUpAttr(*dev_, p, info, &a), 0);
    ASSERT_EQ(BringUp(*dev_, self, a, QpState::kRts), 0);
  }
  Buffer buf = Reg(8192, kAll);
  size_t bad = 99;
  ASSERT_EQ(dev_->PostSend(qa, {Send(1, {buf.At(0, 64)})}, &bad), 0);
  EXPECT_TRUE(Drain(ca, kSecond / 100).empty());  // sent and RNR-NAKed: in its RNR wait
  QpAttr sqd;
  sqd.qp_state = QpState::kSqd;
  sqd.en_sqd_async_notify = true;
  ASSERT_EQ(dev_->ModifyQp(qa, sqd, attr::kState | attr::kEnSqdAsyncNotify), 0);
  const int got = dev_->WaitForAsyncEvent(EventType::kSqDrained, qa, kSecond * 3 / 2);
  if (unsends) {
    EXPECT_EQ(got, 0) << "the retry drained the SQ";
    EXPECT_TRUE(Drain(ca, kSecond / 20).empty());
    QpAttr now;
    QpInitAttr init;
    ASSERT_EQ(dev_->QueryQp(qa, &now, &init), 0);
    EXPECT_EQ(now.sq_psn, p.sq_psn) << "the SEND's PSN taken back";
  } else {
    EXPECT_EQ(got, ETIMEDOUT) << "the drain waits for the SEND in flight";
  }
  ASSERT_EQ(dev_->PostRecv(qb, {Recv(10, {buf.At(4096, 64)})}, &bad), 0);
  if (!unsends) {  // the next retry finds the receive: the SEND completes, the SQ drains
    auto wcs = WaitWc(ca, 1, kSecond);
    ASSERT_EQ(wcs.size(), 1u);
    EXPECT_EQ(wcs[0].status, WcStatus::kSuccess);
    EXPECT_EQ(dev_->WaitForAsyncEvent(EventType::kSqDrained, qa, kSecond), 0);
    EXPECT_EQ(dev_->ModifyQp(qa, StateOnly(QpState::kRts), attr::kState), 0);
    return;
  }
  ASSERT_EQ(dev_->ModifyQp(qa, StateOnly(QpState::kRts), attr::kState), 0);
  ASSERT_EQ(dev_->PostSend(qa, {Send(2, {buf.At(64, 64)})}, &bad), 0);
  OneWc(ca, 1, WcStatus::kSuccess, kSecond);  // the doorbell starts the SEND again
}

// Eight signaled WRITEs into a one-entry send CQ. Where a send CQE that does not fit is lost
// and the QP carries on (Behaviour::send_cq_overrun_keeps_qp: rxe_comp.c ignores
// rxe_cq_post's -EBUSY) the QP stays in RTS and sends on once the CQ is drained; IBTA / R14:
// the overrun moves it to ERR. Either way the CQ error event comes.
TEST_P(Conformance, SendCqOverrunLeavesTheQpWhereTheDeviceDoes) {
  const bool keeps = GetParam().behaviour.send_cq_overrun_keeps_qp;
  CqHandle small = Cq(1), cb = Cq();
  auto [qa, qb] = ConnectedPair(QpType::kRc, small, cb);
  (void)qb;
  Buffer buf = Reg(4096, kAll);
  std::vector<SendWr> writes;
  for (int i = 0; i < 8; ++i) {
    writes.push_back(Rdma(i + 1, WrOpcode::kRdmaWrite, {buf.At(64 * i, 8)}, buf.Addr(2048 + 64 * i),
                          buf.rkey));
  }
  size_t bad = 99;
  ASSERT_EQ(dev_->PostSend(qa, writes, &bad), 0);
  EXPECT_EQ(dev_->WaitForAsyncEvent(EventType::kCqErr, {}, kSecond / 2), 0);
  auto wcs = Drain(small, kSecond / 10);
  ASSERT_FALSE(wcs.empty());
  EXPECT_LT(wcs.size(), 8u) << "the CQ could not hold them all";
  EXPECT_EQ(wcs[0].wr_id, 1u);
  EXPECT_EQ(wcs[0].status, WcStatus::kSuccess);
  EXPECT_EQ(StateOf(qa), keeps ? QpState::kRts : QpState::kErr);
  if (!keeps) return;
  ASSERT_EQ(dev_->PostSend(qa, {Rdma(9, WrOpcode::kRdmaWrite, {buf.At(0, 8)}, buf.Addr(4000),
                                     buf.rkey)}, &bad), 0);
  OneWc(small, 9, WcStatus::kSuccess);
}

// A two-packet SEND into a QP without a receive (rnr_retry 7, retry_cnt 1). Where the second
// packet draws a sequence NAK each round (Behaviour::rnr_nak_then_seq_nak) that NAK pushes
// the retransmit timer that rxe leaves running through RNR waits, so the RNR loop goes on as
// under IBTA (a one-packet SEND there ends with RETRY_EXC_ERR: RnrWaitCounts... above).
TEST_P(Conformance, ATwoPacketSendKeepsItsRnrLoopGoing) {
  CqHandle ca = Cq(), cb = Cq();
  QpHandle qa = Qp(QpType::kRc, 16, 16, 2, true, ca), qb = Qp(QpType::kRc, 16, 16, 2, false, cb);
  ASSERT_EQ(ConnectShortTimeouts(*dev_, pattr_.active_mtu, qa, qb, 1, 7), 0);
  QpAttr a0;
  QpInitAttr init;
  ASSERT_EQ(dev_->QueryQp(qa, &a0, &init), 0);
  const uint32_t mtu = MtuBytes(a0.path_mtu);
  Buffer buf = Reg(4 * mtu, kAll);
  size_t bad = 99;
  ASSERT_EQ(dev_->PostSend(qa, {Send(1, {buf.At(0, mtu + 64)})}, &bad), 0);
  EXPECT_TRUE(Drain(ca, kSecond / 5).empty()) << "still retrying the RNR";
  EXPECT_EQ(StateOf(qa), QpState::kRts);
  ASSERT_EQ(dev_->PostRecv(qb, {Recv(10, {buf.At(2 * mtu, mtu + 64)})}, &bad), 0);
  auto wcs = WaitWc(ca, 1);
  ASSERT_EQ(wcs.size(), 1u);
  EXPECT_EQ(wcs[0].status, WcStatus::kSuccess);
}

// A post that fills the send queue with WRITEs to a bad rkey and is refused (ENOMEM) at the
// WR that does not fit. Where the post runs its exchange inside the call (rxe's loopback;
// the refused post rings the doorbell too) the first WRITE's NAK has moved the QP to ERR and
// the queue is flushed by the time it returns, so the next post finds room; elsewhere the
// queue is still full.
TEST_P(Conformance, ARefusedPostRunsWhatItQueuedWhereTheDeviceRunsItInThePost) {
  const bool inline_run = GetParam().behaviour.post_send_runs_to_completion;
  CqHandle ca = Cq(), cb = Cq();
  auto [qa, qb] = ConnectedPair(QpType::kRc, ca, cb, 8, true);
  const uint32_t depth = SendDepth(qa);
  Buffer buf = Reg(4096, kAll);
  std::vector<SendWr> writes;
  for (uint32_t i = 0; i <= depth; ++i) {
    writes.push_back(Rdma(i + 1, WrOpcode::kRdmaWrite, {buf.At(0, 8)}, buf.Addr(64),
                          buf.rkey ^ 0x80u));
  }
  size_t bad = 99;
  ASSERT_EQ(dev_->PostSend(qa, writes, &bad), ENOMEM);
  EXPECT_EQ(bad, depth);
  EXPECT_EQ(dev_->PostSend(qa, {Rdma(99, WrOpcode::kRdmaWrite, {buf.At(0, 8)}, buf.Addr(64),
                                     buf.rkey)}, &bad),
            inline_run ? 0 : ENOMEM);
  auto wcs = WaitWc(ca, static_cast<int>(depth) + (inline_run ? 1 : 0));
  ASSERT_FALSE(wcs.empty());
  EXPECT_EQ(wcs[0].status, WcStatus::kRemAccessErr);
  EXPECT_EQ(StateOf(qa), QpState::kErr);
}

// docs/differences.md row 60: a READ with IBV_SEND_FENCE to a peer that does not answer
// (left in ERR). rxe_req.c rxe_wqe_is_fenced waits while a READ/atomic holds a max_rd_atomic
// credit, and the READ keeps its own through the retry (Behaviour::fence_counts_sent_rd_atomic):
// the first timeout's retry stalls at it, nothing is resent, no timer runs, sq_psn reads the
// READ's PSN again, an SQD drain ends at once (row 77), and only a move to ERR ends it
// (flushed). Elsewhere the retries run out: RETRY_EXC_ERR.
TEST_P(Conformance, FencedReadStallsAtItsRetryWhereTheDeviceDoes) {
  const bool stalls = GetParam().behaviour.fence_counts_sent_rd_atomic;
  CqHandle ca = Cq();
  QpHandle qa = Qp(QpType::kRc, 16, 16, 2, false, ca), qb = Qp(QpType::kRc);
  ASSERT_EQ(ConnectShortTimeouts(*dev_, pattr_.active_mtu, qa, qb, 1, 7), 0);
  ASSERT_EQ(dev_->ModifyQp(qb, StateOnly(QpState::kErr), attr::kState), 0);
  Buffer buf = Reg(8192, kAll);
  SendWr r = RdmaTo(1, WrOpcode::kRdmaRead, {buf.At(0, 8)}, buf, 4096);
  r.send_flags |= send_flag::kFence;
  QpAttr a;
  QpInitAttr init;
  ASSERT_EQ(dev_->QueryQp(qa, &a, &init), 0);
  const uint32_t first_psn = a.sq_psn;
  size_t bad = 99;
  ASSERT_EQ(dev_->PostSend(qa, {r}, &bad), 0);
  if (!stalls) {
    auto wcs = WaitWc(ca, 1, kSecond / 2);
    ASSERT_EQ(wcs.size(), 1u);
    EXPECT_EQ(wcs[0].status, WcStatus::kRetryExcErr);
    return;
  }
  EXPECT_TRUE(Drain(ca, kSecond / 5).empty()) << "the READ was retried";
  ASSERT_EQ(dev_->QueryQp(qa, &a, &init), 0);
  EXPECT_EQ(a.qp_state, QpState::kRts);
  EXPECT_EQ(a.sq_psn, first_psn) << "the retry set the PSN back and sent nothing";
  // Row 77: the retry set the READ back to not started, so a drain is over at once.
  QpAttr sqd = StateOnly(QpState::kSqd);
  sqd.en_sqd_async_notify = 1;
  ASSERT_EQ(dev_->ModifyQp(qa, sqd, attr::kState | attr::kEnSqdAsyncNotify), 0);
  EXPECT_EQ(dev_->WaitForAsyncEvent(EventType::kSqDrained, qa, kSecond / 10), 0);
  ASSERT_EQ(dev_->QueryQp(qa, &a, &init), 0);
  EXPECT_EQ(a.qp_state, QpState::kSqd);
  EXPECT_FALSE(a.sq_draining);
  ASSERT_EQ(dev_->ModifyQp(qa, StateOnly(QpState::kErr), attr::kState), 0);
  auto wcs = WaitWc(ca, 1);
  ASSERT_EQ(wcs.size(), 1u);
  EXPECT_EQ(wcs[0].status, WcStatus::kWrFlushErr);
}

// docs/differences.md row 61: a 2-packet RDMA WRITE_WITH_IMM into a QP without a receive
// (rnr_retry 7). The first packet is executed, the last is RNR-NAKed; the first retry's
// duplicate is ACKed, which restores retry_cnt once but pushes no timer, and later retries
// resend only the last packet (Behaviour::partial_ack_resets_retries_only with
// retry_timer_runs_during_rnr): the transport timer ends it with RETRY_EXC_ERR, retry_cnt 0
// or 1. Elsewhere the RNR loop goes on until a receive comes.
TEST_P(Conformance, TwoPacketWriteImmInAnRnrLoopEndsByTheTimerWhereTheDeviceDoes) {
  const Behaviour& b = GetParam().behaviour;
  const bool ends = b.partial_ack_resets_retries_only && b.retry_timer_runs_during_rnr;
  const uint32_t mtu = MtuBytes(pattr_.active_mtu);
  Buffer buf = Reg(8 * mtu, kAll);
  for (int retry_cnt : {0, 1}) {
    SCOPED_TRACE("retry_cnt " + std::to_string(retry_cnt));
    CqHandle ca = Cq();
    QpHandle qa = Qp(QpType::kRc, 16, 16, 2, false, ca), qb = Qp(QpType::kRc);
    ASSERT_EQ(ConnectShortTimeouts(*dev_, pattr_.active_mtu, qa, qb, retry_cnt, 7), 0);
    SendWr w = RdmaTo(1, WrOpcode::kRdmaWriteWithImm, {buf.At(0, 2 * mtu)}, buf, 4 * mtu);
    w.imm_data = 5;
    size_t bad = 99;
    ASSERT_EQ(dev_->PostSend(qa, {w}, &bad), 0);
    if (ends) {
      auto wcs = WaitWc(ca, 1, kSecond / 2);
      ASSERT_EQ(wcs.size(), 1u);
      EXPECT_EQ(wcs[0].status, WcStatus::kRetryExcErr);
      continue;
    }
    EXPECT_TRUE(Drain(ca, kSecond / 5).empty()) << "the RNR loop ended";
    ASSERT_EQ(dev_->PostRecv(qb, {Recv(10, {buf.At(2 * mtu, 64)})}, &bad), 0);
    auto wcs = WaitWc(ca, 1);
    ASSERT_EQ(wcs.size(), 1u);
    EXPECT_EQ(wcs[0].status, WcStatus::kSuccess);
  }
}

// docs/differences.md row 64: a FETCH_ADD, then the requester is RESET and reconnected with
// the same sq_psn, and a READ goes out at the atomic's PSN: a duplicate for the responder. rxe
// answers a duplicate READ only from a READ resource it still holds (rxe_resp.c
// duplicate_request, find_resource; Behaviour::dup_read_needs_its_resource): the PSN's
// resource is the atomic's, so the READ is dropped and the requester times out
// (retry_cnt 0). IBTA: the duplicate READ is executed again.
TEST_P(Conformance, DuplicateReadWithoutItsResourceIsDroppedWhereTheDeviceDoes) {
  const bool drops = GetParam().behaviour.dup_read_needs_its_resource;
  CqHandle ca = Cq();
  QpHandle qa = Qp(QpType::kRc, 16, 16, 2, false, ca), qb = Qp(QpType::kRc);
  ASSERT_EQ(ConnectShortTimeouts(*dev_, pattr_.active_mtu, qa, qb, 0, 7), 0);
  Buffer buf = Reg(8192, kAll);
  SendWr f = RdmaTo(1, WrOpcode::kAtomicFetchAndAdd, {buf.At(0, 8)}, buf, 4096);
  f.compare_add = 1;
  size_t bad = 99;
  ASSERT_EQ(dev_->PostSend(qa, {f}, &bad), 0);
  auto first = WaitWc(ca, 1);
  ASSERT_EQ(first.size(), 1u);
  ASSERT_EQ(first[0].status, WcStatus::kSuccess);
  ASSERT_EQ(dev_->ModifyQp(qa, StateOnly(QpState::kReset), attr::kState), 0);
  BringUpParams p;
  p.path_mtu = pattr_.active_mtu;
  p.timeout = 11;
  p.retry_cnt = 0;
  p.rnr_retry = 7;
  p.min_rnr_timer = 17;
  ConnectionInfo info;
  ASSERT_EQ(dev_->LocalConnectionInfo(qb, &info), 0);
  QpAttr a;
  ASSERT_EQ(BringUpAttr(*dev_, p, info, &a), 0);
  ASSERT_EQ(BringUp(*dev_, qa, a, QpState::kRts), 0);
  SendWr r = RdmaTo(2, WrOpcode::kRdmaRead, {buf.At(64, 8)}, buf, 4096 + 512);
  ASSERT_EQ(dev_->PostSend(qa, {r}, &bad), 0);
  auto wcs = WaitWc(ca, 1, kSecond / 2);
  ASSERT_EQ(wcs.size(), 1u);
  EXPECT_EQ(wcs[0].status, drops ? WcStatus::kRetryExcErr : WcStatus::kSuccess);
}

// docs/differences.md row 65: five one-packet SENDs into a QP without a receive (rnr_retry 7,
// retry_cnt 0). The first is RNR-NAKed, the second draws a sequence NAK, which ends the first
// with RETRY_EXC_ERR (row 32). rxe answers inside the post (post_send_runs_to_completion), so
// the requester stops after the packet that drew that NAK: sq_psn reads the first PSN + 2.
// A device that sends the whole list first reads + 5; without psn_nak_uses_retry the RNR loop
// goes on.
TEST_P(Conformance, SequenceNakThatEndsAWrStopsThePsnWhereTheDeviceRunsItInThePost) {
  const Behaviour& b = GetParam().behaviour;
  CqHandle ca = Cq();
  QpHandle qa = Qp(QpType::kRc, 16, 16, 2, false, ca), qb = Qp(QpType::kRc);
  ASSERT_EQ(ConnectShortTimeouts(*dev_, pattr_.active_mtu, qa, qb, 0, 7), 0);
  Buffer buf = Reg(4096, kAll);
  QpAttr a;
  QpInitAttr init;
  ASSERT_EQ(dev_->QueryQp(qa, &a, &init), 0);
  const uint32_t first_psn = a.sq_psn;
  std::vector<SendWr> wrs;
  for (uint64_t i = 1; i <= 5; ++i) wrs.push_back(Send(i, {buf.At(64 * i, 64)}));
  size_t bad = 99;
  ASSERT_EQ(dev_->PostSend(qa, wrs, &bad), 0);
  if (!b.psn_nak_uses_retry) {
    EXPECT_TRUE(Drain(ca, kSecond / 10).empty()) << "the RNR loop ended";
    return;
  }
  auto wcs = WaitWc(ca, 5, kSecond / 2);
  ASSERT_EQ(wcs.size(), 5u);
  EXPECT_EQ(wcs[0].status, WcStatus::kRetryExcErr);
  ASSERT_EQ(dev_->QueryQp(qa, &a, &init), 0);
  EXPECT_EQ(a.sq_psn, first_psn + (b.post_send_runs_to_completion ? 2u : 5u));
}

}  // namespace
}  // namespace qptwin::testing
