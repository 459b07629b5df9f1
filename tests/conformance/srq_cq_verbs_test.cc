// ibv_query_srq / ibv_modify_srq (resize, srq_limit and SRQ_LIMIT_REACHED), ibv_resize_cq and
// completion channels (req_notify, solicited-only arms, get/ack events) on every backend.
#include <cerrno>

#include "spec/device_description.h"
#include "tests/conformance/fixture.h"

namespace qptwin::testing {
namespace {

using access::kAll;

class SrqCq : public Conformance {
 protected:
  // An RC QP receiving from `srq`, connected to a plain RC QP (returned first).
  std::pair<QpHandle, QpHandle> PairIntoSrq(SrqHandle srq) {
    QpInitAttr init;
    init.qp_type = QpType::kRc;
    init.pd = pd_;
    init.send_cq = init.recv_cq = cq_;
    init.srq = srq;
    init.cap = {16, 0, 1, 1, 0};
    QpHandle b;
    QpCap granted;
    EXPECT_EQ(dev_->CreateQp(init, &b, &granted), 0);
    QpHandle a = Qp(QpType::kRc);
    Drive(QpType::kRc, a, QpState::kRts, b);
    Drive(QpType::kRc, b, QpState::kRts, a);
    return {a, b};
  }
  uint32_t Slots(uint32_t n) const { return QueueSlots(GetParam().behaviour, n); }
};

TEST_P(SrqCq, QuerySrqReportsTheGrantedSizesAndNoLimit) {
  SrqHandle srq;
  ASSERT_EQ(dev_->CreateSrq(pd_, 10, 1, &srq), 0);
  SrqAttr a;
  ASSERT_EQ(dev_->QuerySrq(srq, &a), 0);
  EXPECT_EQ(a.max_wr, Slots(10));
  EXPECT_EQ(a.max_sge, 1u);
  EXPECT_EQ(a.srq_limit, 0u);
  EXPECT_EQ(dev_->QuerySrq(SrqHandle{}, &a), EINVAL);
  ASSERT_EQ(dev_->DestroySrq(srq), 0);
}

TEST_P(SrqCq, ModifySrqChecksBeforeChangingAnything) {
  SrqHandle srq;
  ASSERT_EQ(dev_->CreateSrq(pd_, 10, 1, &srq), 0);
  SrqAttr a;
  a.srq_limit = Slots(10) + 1;  // rxe_srq_chk_attr: beyond the ring
  EXPECT_EQ(dev_->ModifySrq(srq, a, srq_attr::kLimit), EINVAL);
  a.max_wr = 0;
  EXPECT_EQ(dev_->ModifySrq(srq, a, srq_attr::kMaxWr), EINVAL);
  a.max_wr = static_cast<uint32_t>(dattr_.max_srq_wr) + 1;
  EXPECT_EQ(dev_->ModifySrq(srq, a, srq_attr::kMaxWr), EINVAL);
  SrqAttr q;
  ASSERT_EQ(dev_->QuerySrq(srq, &q), 0);
  EXPECT_EQ(q.max_wr, Slots(10));
  EXPECT_EQ(q.srq_limit, 0u);
  a.srq_limit = 4;
  ASSERT_EQ(dev_->ModifySrq(srq, a, srq_attr::kLimit), 0);
  ASSERT_EQ(dev_->QuerySrq(srq, &q), 0);
  EXPECT_EQ(q.srq_limit, 4u);
  a.max_wr = 3;  // below the armed limit
  EXPECT_EQ(dev_->ModifySrq(srq, a, srq_attr::kMaxWr), EINVAL);
  ASSERT_EQ(dev_->DestroySrq(srq), 0);
}

TEST_P(SrqCq, ModifySrqResizesKeepingQueuedReceives) {
  SrqHandle srq;
  ASSERT_EQ(dev_->CreateSrq(pd_, 7, 1, &srq), 0);
  Buffer dst = Reg(4096, kAll);
  size_t bad;
  for (uint64_t i = 0; i < 5; ++i) {
    ASSERT_EQ(dev_->PostSrqRecv(srq, {Recv(10 + i, {dst.At(i * 64, 64)})}, &bad), 0);
  }
  SrqAttr a;
  a.max_wr = 2;  // fewer slots than the 5 receives queued
  EXPECT_EQ(dev_->ModifySrq(srq, a, srq_attr::kMaxWr), EINVAL);
  a.max_wr = 20;
  ASSERT_EQ(dev_->ModifySrq(srq, a, srq_attr::kMaxWr), 0);
  SrqAttr q;
  ASSERT_EQ(dev_->QuerySrq(srq, &q), 0);
  EXPECT_EQ(q.max_wr, Slots(20));
  // The queued receives survived the resize, in order.
  auto [qa, qb] = PairIntoSrq(srq);
  Buffer src = Reg(4096, kAll);
  ASSERT_EQ(dev_->PostSend(qa, {Send(1, {src.At(0, 8)}), Send(2, {src.At(0, 8)})}, &bad), 0);
  auto wcs = WaitWc(cq_, 4);
  std::vector<uint64_t> recvs;
  for (const WorkCompletion& wc : wcs) {
    EXPECT_EQ(wc.status, WcStatus::kSuccess);
    if (wc.opcode == WcOpcode::kRecv) recvs.push_back(wc.wr_id);
  }
  EXPECT_EQ(recvs, (std::vector<uint64_t>{10, 11}));
  ASSERT_EQ(dev_->DestroyQp(qa), 0);
  ASSERT_EQ(dev_->DestroyQp(qb), 0);
  ASSERT_EQ(dev_->DestroySrq(srq), 0);
}

TEST_P(SrqCq, SrqLimitRaisesOneEventWhenFewerRemainAndDisarms) {
  SrqHandle srq;
  ASSERT_EQ(dev_->CreateSrq(pd_, 15, 1, &srq), 0);
  auto [qa, qb] = PairIntoSrq(srq);
  Buffer src = Reg(4096, kAll), dst = Reg(4096, kAll);
  size_t bad;
  for (uint64_t i = 0; i < 5; ++i) {
    ASSERT_EQ(dev_->PostSrqRecv(srq, {Recv(10 + i, {dst.At(i * 64, 64)})}, &bad), 0);
  }
  SrqAttr a;
  a.srq_limit = 4;
  ASSERT_EQ(dev_->ModifySrq(srq, a, srq_attr::kLimit), 0);
  (void)dev_->TakeAsyncEvents();
  // 5 -> 4 queued: not below the limit yet.
  ASSERT_EQ(dev_->PostSend(qa, {Send(1, {src.At(0, 8)})}, &bad), 0);
  WaitWc(cq_, 2);
  EXPECT_EQ(dev_->WaitForAsyncEvent(EventType::kSrqLimitReached, {}, kSecond / 5), ETIMEDOUT);
  // 4 -> 3: below it, one event, and the limit is disarmed.
  ASSERT_EQ(dev_->PostSend(qa, {Send(2, {src.At(0, 8)}), Send(3, {src.At(0, 8)})}, &bad), 0);
  WaitWc(cq_, 4);
  ASSERT_EQ(dev_->WaitForAsyncEvent(EventType::kSrqLimitReached, {}, 2 * kSecond), 0);
  int limit_events = 0;
  for (const AsyncEvent& ev : dev_->TakeAsyncEvents()) {
    if (ev.type != EventType::kSrqLimitReached) continue;
    ++limit_events;
    EXPECT_EQ(ev.srq, srq);
  }
  EXPECT_EQ(limit_events, 1);
  SrqAttr q;
  ASSERT_EQ(dev_->QuerySrq(srq, &q), 0);
  EXPECT_EQ(q.srq_limit, 0u);
  ASSERT_EQ(dev_->DestroyQp(qa), 0);
  ASSERT_EQ(dev_->DestroyQp(qb), 0);
  ASSERT_EQ(dev_->DestroySrq(srq), 0);
}

TEST_P(SrqCq, ResizeCqKeepsCompletionsAndRefusesFewerSlotsThanHeld) {
  auto [qa, qb] = ConnectedPair(QpType::kRc);
  Buffer src = Reg(4096, kAll), dst = Reg(4096, kAll);
  size_t bad;
  for (uint64_t i = 0; i < 3; ++i) {
    ASSERT_EQ(dev_->PostRecv(qb, {Recv(100 + i, {dst.At(i * 64, 64)})}, &bad), 0);
  }
  ASSERT_EQ(dev_->PostSend(qa, {Send(1, {src.At(0, 8)}), Send(2, {src.At(0, 8)}),
                                Send(3, {src.At(0, 8)})},
                           &bad),
            0);
  // Let all six CQEs arrive without taking them: poll nothing for a while.
  backend_->Advance(kSecond / 5);
  int actual = 0;
  EXPECT_EQ(dev_->ResizeCq(cq_, 2, &actual), EINVAL);  // rxe_cq_chk_attr: cqe < count
  EXPECT_EQ(dev_->ResizeCq(cq_, 0, &actual), EINVAL);
  EXPECT_EQ(dev_->ResizeCq(cq_, dattr_.max_cqe + 1, &actual), EINVAL);
  ASSERT_EQ(dev_->ResizeCq(cq_, 200, &actual), 0);
  EXPECT_GE(actual, 200);
  EXPECT_EQ(static_cast<uint32_t>(actual), Slots(200));
  auto wcs = WaitWc(cq_, 6);
  ASSERT_EQ(wcs.size(), 6u);
  std::vector<uint64_t> sends, recvs;
  for (const WorkCompletion& wc : wcs) {
    EXPECT_EQ(wc.status, WcStatus::kSuccess);
    (wc.opcode == WcOpcode::kRecv ? recvs : sends).push_back(wc.wr_id);
  }
  EXPECT_EQ(sends, (std::vector<uint64_t>{1, 2, 3}));
  EXPECT_EQ(recvs, (std::vector<uint64_t>{100, 101, 102}));
}

TEST_P(SrqCq, CompChannelWakesOncePerArm) {
  ChannelHandle ch;
  ASSERT_EQ(dev_->CreateCompChannel(&ch), 0);
  CqHandle rcq;
  int actual = 0;
  ASSERT_EQ(dev_->CreateCq(16, ch, &rcq, &actual), 0);
  auto [qa, qb] = ConnectedPair(QpType::kRc, CqHandle{}, rcq);
  Buffer src = Reg(4096, kAll), dst = Reg(4096, kAll);
  size_t bad;
  for (uint64_t i = 0; i < 2; ++i) {
    ASSERT_EQ(dev_->PostRecv(qb, {Recv(100 + i, {dst.At(i * 64, 64)})}, &bad), 0);
  }
  CqHandle got;
  EXPECT_EQ(dev_->GetCqEvent(ch, kSecond / 5, &got), ETIMEDOUT) << "not armed: no event";
  ASSERT_EQ(dev_->ReqNotifyCq(rcq, false), 0);
  ASSERT_EQ(dev_->PostSend(qa, {Send(1, {src.At(0, 8)})}, &bad), 0);
  ASSERT_EQ(dev_->GetCqEvent(ch, 2 * kSecond, &got), 0);
  EXPECT_EQ(got, rcq);
  EXPECT_EQ(WaitWc(rcq, 1).size(), 1u);
  // The arm was used up: the next completion wakes nobody.
  ASSERT_EQ(dev_->PostSend(qa, {Send(2, {src.At(0, 8)})}, &bad), 0);
  EXPECT_EQ(WaitWc(rcq, 1).size(), 1u);
  EXPECT_EQ(dev_->GetCqEvent(ch, kSecond / 5, &got), ETIMEDOUT);
  dev_->AckCqEvents(rcq, 1);
  ASSERT_EQ(dev_->DestroyQp(qa), 0);
  ASSERT_EQ(dev_->DestroyQp(qb), 0);
  EXPECT_EQ(dev_->DestroyCompChannel(ch), EBUSY) << "the CQ still uses it";
  ASSERT_EQ(dev_->DestroyCq(rcq), 0);
  ASSERT_EQ(dev_->DestroyCompChannel(ch), 0);
}

TEST_P(SrqCq, SolicitedOnlyArmWakesForSolicitedReceivesOnly) {
  ChannelHandle ch;
  ASSERT_EQ(dev_->CreateCompChannel(&ch), 0);
  CqHandle rcq;
  int actual = 0;
  ASSERT_EQ(dev_->CreateCq(16, ch, &rcq, &actual), 0);
  auto [qa, qb] = ConnectedPair(QpType::kRc, CqHandle{}, rcq);
  Buffer src = Reg(4096, kAll), dst = Reg(4096, kAll);
  size_t bad;
  for (uint64_t i = 0; i < 2; ++i) {
    ASSERT_EQ(dev_->PostRecv(qb, {Recv(100 + i, {dst.At(i * 64, 64)})}, &bad), 0);
  }
  ASSERT_EQ(dev_->ReqNotifyCq(rcq, true), 0);
  ASSERT_EQ(dev_->PostSend(qa, {Send(1, {src.At(0, 8)})}, &bad), 0);
  EXPECT_EQ(WaitWc(rcq, 1).size(), 1u);
  CqHandle got;
  EXPECT_EQ(dev_->GetCqEvent(ch, kSecond / 5, &got), ETIMEDOUT) << "not solicited";
  SendWr solicited = Send(2, {src.At(0, 8)});
  solicited.send_flags |= send_flag::kSolicited;
  ASSERT_EQ(dev_->PostSend(qa, {solicited}, &bad), 0);
  ASSERT_EQ(dev_->GetCqEvent(ch, 2 * kSecond, &got), 0);
  EXPECT_EQ(got, rcq);
  EXPECT_EQ(WaitWc(rcq, 1).size(), 1u);
  dev_->AckCqEvents(rcq, 1);
  ASSERT_EQ(dev_->DestroyQp(qa), 0);
  ASSERT_EQ(dev_->DestroyQp(qb), 0);
  ASSERT_EQ(dev_->DestroyCq(rcq), 0);
  ASSERT_EQ(dev_->DestroyCompChannel(ch), 0);
}

TEST_P(SrqCq, SolicitedOnlyArmAndAFlushedSendWhereTheDeviceSaysSo) {
  // Differential seed 20261207 sequence 1710. rxe (Behaviour::solicited_arm_ignores_errors):
  // rxe_cq_post fires a solicited-only arm only when told the CQE is solicited, and the
  // completer never says so: a send flushed in ERR raises no event. ibv_req_notify_cq(3) and
  // the IBTA: a completion in error wakes a solicited-only arm too.
  const Behaviour& b = GetParam().behaviour;
  ChannelHandle ch;
  ASSERT_EQ(dev_->CreateCompChannel(&ch), 0);
  CqHandle scq;
  int actual = 0;
  ASSERT_EQ(dev_->CreateCq(16, ch, &scq, &actual), 0);
  auto [qa, qb] = ConnectedPair(QpType::kRc, scq, CqHandle{});
  ASSERT_EQ(dev_->ModifyQp(qa, StateOnly(QpState::kErr), attr::kState), 0);
  Buffer src = Reg(4096, kAll);
  size_t bad;
  ASSERT_EQ(dev_->ReqNotifyCq(scq, true), 0);
  ASSERT_EQ(dev_->PostSend(qa, {Send(1, {src.At(0, 8)})}, &bad), 0);
  auto wcs = WaitWc(scq, 1);
  ASSERT_EQ(wcs.size(), 1u);
  EXPECT_EQ(wcs[0].status, WcStatus::kWrFlushErr);
  CqHandle got;
  const int err = dev_->GetCqEvent(ch, kSecond / 5, &got);
  if (b.solicited_arm_ignores_errors) {
    EXPECT_EQ(err, ETIMEDOUT) << "a flushed send woke the solicited-only arm";
  } else {
    EXPECT_EQ(err, 0);
    if (err == 0) dev_->AckCqEvents(scq, 1);
  }
  ASSERT_EQ(dev_->DestroyQp(qa), 0);
  ASSERT_EQ(dev_->DestroyQp(qb), 0);
  ASSERT_EQ(dev_->DestroyCq(scq), 0);
  ASSERT_EQ(dev_->DestroyCompChannel(ch), 0);
}

INSTANTIATE_TEST_SUITE_P(Backends, SrqCq, ::testing::ValuesIn(BackendsUnderTest()),
                         [](const ::testing::TestParamInfo<BackendCase>& info) {
                           return info.param.name;
                         });

}  // namespace
}  // namespace qptwin::testing
