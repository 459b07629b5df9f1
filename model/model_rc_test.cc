// RC data movement through the model: SEND/RECV, WRITE, READ, atomics, inline, immediate
// data, ordering, completion channels and determinism.
#include <cstring>

#include "model/model_backend.h"
#include "tests/support/support.h"

namespace qptwin::model::testing {
namespace {

using namespace ::qptwin::testing;  // tests/support/support.h

class RcTest : public ::testing::Test {
 protected:
  void SetUp() override {
    be_ = RxeModel();
    a_ = MakeSide(*be_, "mdev0");
    b_ = MakeSide(*be_, "mdev1");
    Connect(a_, b_);
  }
  // Message timing on the wire: on rxe a post's exchange has run when ibv_post_send returns
  // (Behaviour::post_send_runs_to_completion), so these tests use the ibta profile.
  void UseIbtaProfile() {
    ModelOptions o;
    o.profile = "ibta";
    be_ = MakeModelBackend(o);
    a_ = MakeSide(*be_, "mdev0");
    b_ = MakeSide(*be_, "mdev1");
    Connect(a_, b_);
  }
  std::unique_ptr<Backend> be_;
  Side a_, b_;
};

TEST_F(RcTest, SendRecvMovesBytesAcrossDevicesInMtuPackets) {
  for (int i = 0; i < 3000; ++i) a_.buf[i] = static_cast<uint8_t>(i * 7 + 3);
  size_t bad = 99;
  ASSERT_EQ(b_.dev->PostRecv(b_.qp, {Rwr(7, {b_.At(100, 4000)})}, &bad), 0);
  ASSERT_EQ(a_.dev->PostSend(a_.qp, {Wr(1, WrOpcode::kSend, {a_.At(0, 3000)})}, &bad), 0);
  EXPECT_EQ(bad, 99u);
  auto rwc = Wait(b_, b_.rcq, 1);
  auto swc = Wait(a_, a_.scq, 1);
  ASSERT_EQ(rwc.size(), 1u);
  EXPECT_EQ(rwc[0].status, WcStatus::kSuccess);
  EXPECT_EQ(rwc[0].opcode, WcOpcode::kRecv);
  EXPECT_EQ(rwc[0].wr_id, 7u);
  EXPECT_EQ(rwc[0].byte_len, 3000u);
  // The rxe profile (Behaviour::connected_recv_src_qp_zero, recv_wc_grh_always): an RC
  // receive CQE has src_qp 0 and IBV_WC_GRH (rxe_resp.c do_complete).
  EXPECT_EQ(rwc[0].src_qp, 0u);
  EXPECT_EQ(rwc[0].wc_flags, wc_flag::kGrh);
  EXPECT_EQ(rwc[0].qp_num, b_.qpn);
  EXPECT_EQ(std::memcmp(a_.buf, b_.buf + 100, 3000), 0);
  EXPECT_EQ(b_.buf[99], 0);
  EXPECT_EQ(b_.buf[3100], 0);
  ASSERT_EQ(swc.size(), 1u);
  EXPECT_EQ(swc[0].status, WcStatus::kSuccess);
  EXPECT_EQ(swc[0].opcode, WcOpcode::kSend);
  EXPECT_EQ(swc[0].byte_len, 3000u);
  EXPECT_GT(be_->NowNs(), 0u);
}

TEST_F(RcTest, SendCompletesOnlyAfterAck) {
  UseIbtaProfile();
  ASSERT_EQ(b_.dev->PostRecv(b_.qp, {Rwr(1, {b_.At(0, 64)})}, nullptr), 0);
  ASSERT_EQ(a_.dev->PostSend(a_.qp, {Wr(1, WrOpcode::kSend, {a_.At(0, 64)})}, nullptr), 0);
  Wait(b_, b_.rcq, 1);
  uint64_t received = be_->NowNs();
  // The receiver has the data; the sender's CQE needs the ACK's trip back.
  WorkCompletion wc;
  EXPECT_EQ(a_.dev->PollCq(a_.scq, 1, &wc), 0);
  Wait(a_, a_.scq, 1);
  EXPECT_GT(be_->NowNs(), received);
}

TEST_F(RcTest, SendWithImmAndInlineData) {
  std::memcpy(a_.buf, "inline!", 7);
  ASSERT_EQ(b_.dev->PostRecv(b_.qp, {Rwr(1, {b_.At(0, 64)})}, nullptr), 0);
  SendWr w = Wr(5, WrOpcode::kSendWithImm, {a_.At(0, 7)}, send_flag::kSignaled | send_flag::kInline);
  w.imm_data = 0xabcdef01;
  ASSERT_EQ(a_.dev->PostSend(a_.qp, {w}, nullptr), 0);
  std::memcpy(a_.buf, "changed", 7);  // inline data was copied at post time
  auto rwc = Wait(b_, b_.rcq, 1);
  EXPECT_EQ(rwc[0].wc_flags & wc_flag::kWithImm, wc_flag::kWithImm);
  EXPECT_EQ(rwc[0].imm_data, 0xabcdef01u);
  EXPECT_EQ(std::memcmp(b_.buf, "inline!", 7), 0);
  Wait(a_, a_.scq, 1);
}

TEST_F(RcTest, InlineLongerThanMaxInlineIsEinval) {
  size_t bad = 9;
  SendWr w = Wr(1, WrOpcode::kSend, {a_.At(0, 65)}, send_flag::kInline);
  EXPECT_EQ(a_.dev->PostSend(a_.qp, {w}, &bad), EINVAL);
  EXPECT_EQ(bad, 0u);
}

TEST_F(RcTest, RdmaWriteAndWriteWithImm) {
  for (int i = 0; i < 2500; ++i) a_.buf[i] = static_cast<uint8_t>(i ^ 0x5a);
  SendWr w = RemoteWr(1, WrOpcode::kRdmaWrite, a_.At(0, 2500), b_, 1000);
  ASSERT_EQ(a_.dev->PostSend(a_.qp, {w}, nullptr), 0);
  auto swc = Wait(a_, a_.scq, 1);
  EXPECT_EQ(swc[0].status, WcStatus::kSuccess);
  EXPECT_EQ(swc[0].opcode, WcOpcode::kRdmaWrite);
  EXPECT_EQ(std::memcmp(a_.buf, b_.buf + 1000, 2500), 0);
  WorkCompletion wc;
  EXPECT_EQ(b_.dev->PollCq(b_.rcq, 1, &wc), 0);  // plain WRITE consumes no receive

  ASSERT_EQ(b_.dev->PostRecv(b_.qp, {Rwr(9, {})}, nullptr), 0);
  SendWr wi = RemoteWr(2, WrOpcode::kRdmaWriteWithImm, a_.At(0, 16), b_, 0);
  wi.imm_data = 77;
  ASSERT_EQ(a_.dev->PostSend(a_.qp, {wi}, nullptr), 0);
  auto rwc = Wait(b_, b_.rcq, 1);
  EXPECT_EQ(rwc[0].opcode, WcOpcode::kRecvRdmaWithImm);
  EXPECT_EQ(rwc[0].imm_data, 77u);
  EXPECT_EQ(rwc[0].byte_len, 16u);
  EXPECT_EQ(rwc[0].wr_id, 9u);
  Wait(a_, a_.scq, 1);
}

TEST_F(RcTest, RdmaReadBringsRemoteBytes) {
  for (int i = 0; i < 5000; ++i) b_.buf[i] = static_cast<uint8_t>(255 - i % 251);
  SendWr w = Wr(3, WrOpcode::kRdmaRead, {a_.At(10, 2000), a_.At(4000, 3000)});
  w.remote_addr = b_.Addr(0);
  w.rkey = b_.rkey;
  ASSERT_EQ(a_.dev->PostSend(a_.qp, {w}, nullptr), 0);
  auto swc = Wait(a_, a_.scq, 1);
  EXPECT_EQ(swc[0].status, WcStatus::kSuccess);
  EXPECT_EQ(swc[0].opcode, WcOpcode::kRdmaRead);
  EXPECT_EQ(swc[0].byte_len, 5000u);
  EXPECT_EQ(std::memcmp(a_.buf + 10, b_.buf, 2000), 0);
  EXPECT_EQ(std::memcmp(a_.buf + 4000, b_.buf + 2000, 3000), 0);
}

TEST_F(RcTest, AtomicsReturnOriginalAndUpdateRemote) {
  uint64_t v = 40;
  std::memcpy(b_.buf + 64, &v, 8);
  SendWr faa = RemoteWr(1, WrOpcode::kAtomicFetchAndAdd, a_.At(0, 8), b_, 64);
  faa.compare_add = 2;
  SendWr cas = RemoteWr(2, WrOpcode::kAtomicCmpAndSwp, a_.At(8, 8), b_, 64);
  cas.compare_add = 42;
  cas.swap = 1000;
  ASSERT_EQ(a_.dev->PostSend(a_.qp, {faa, cas}, nullptr), 0);
  auto swc = Wait(a_, a_.scq, 2);
  EXPECT_EQ(swc[0].opcode, WcOpcode::kFetchAdd);
  EXPECT_EQ(swc[1].opcode, WcOpcode::kCompSwap);
  uint64_t r0, r1, now;
  std::memcpy(&r0, a_.buf, 8);
  std::memcpy(&r1, a_.buf + 8, 8);
  std::memcpy(&now, b_.buf + 64, 8);
  EXPECT_EQ(r0, 40u);
  EXPECT_EQ(r1, 42u);
  EXPECT_EQ(now, 1000u);
  // A compare that does not match leaves the target alone and still returns it.
  cas.wr_id = 3;
  cas.swap = 7;
  ASSERT_EQ(a_.dev->PostSend(a_.qp, {cas}, nullptr), 0);
  EXPECT_EQ(Wait(a_, a_.scq, 1)[0].status, WcStatus::kSuccess);
  std::memcpy(&r1, a_.buf + 8, 8);
  std::memcpy(&now, b_.buf + 64, 8);
  EXPECT_EQ(r1, 1000u);
  EXPECT_EQ(now, 1000u);
}

TEST_F(RcTest, MisalignedAtomicIsEinvalAtPost) {
  SendWr w = RemoteWr(1, WrOpcode::kAtomicFetchAndAdd, a_.At(0, 8), b_, 4);
  EXPECT_EQ(a_.dev->PostSend(a_.qp, {w}, nullptr), EINVAL);
}

TEST_F(RcTest, SqCompletionsInPostingOrderWithSelectiveSignaling) {
  std::vector<RecvWr> recvs;
  for (int i = 0; i < 6; ++i) recvs.push_back(Rwr(100 + i, {b_.At(i * 100, 100)}));
  ASSERT_EQ(b_.dev->PostRecv(b_.qp, recvs, nullptr), 0);
  std::vector<SendWr> sends;
  for (int i = 0; i < 6; ++i) {
    sends.push_back(Wr(i, WrOpcode::kSend, {a_.At(i * 100, 50 + i)}, i % 2 ? send_flag::kSignaled : 0));
  }
  ASSERT_EQ(a_.dev->PostSend(a_.qp, sends, nullptr), 0);
  auto rwc = Wait(b_, b_.rcq, 6);
  for (int i = 0; i < 6; ++i) {
    EXPECT_EQ(rwc[i].wr_id, 100u + i);
    EXPECT_EQ(rwc[i].byte_len, 50u + i);
  }
  auto swc = Wait(a_, a_.scq, 3);
  EXPECT_EQ(swc[0].wr_id, 1u);
  EXPECT_EQ(swc[1].wr_id, 3u);
  EXPECT_EQ(swc[2].wr_id, 5u);
  be_->Advance(1000000);
  WorkCompletion wc;
  EXPECT_EQ(a_.dev->PollCq(a_.scq, 1, &wc), 0);  // R21: unsignaled successes leave no CQE
}

TEST_F(RcTest, SolicitedOnlyArmWakesOnSolicitedSendOnly) {
  ChannelHandle ch;
  ASSERT_EQ(b_.dev->CreateCompChannel(&ch), 0);
  CqHandle cq;
  ASSERT_EQ(b_.dev->CreateCq(8, ch, &cq, nullptr), 0);
  EXPECT_EQ(b_.dev->DestroyCompChannel(ch), EBUSY);
  QpInitAttr init;
  init.pd = b_.pd;
  init.send_cq = b_.scq;
  init.recv_cq = cq;
  init.cap = QpCap{4, 4, 1, 1, 0};
  Side b2 = SiblingQp(b_, init);
  Side a2 = MakeSide(*be_, "mdev0");
  Connect(a2, b2);
  ASSERT_EQ(b2.dev->PostRecv(b2.qp, {Rwr(1, {b2.At(0, 8)}), Rwr(2, {b2.At(8, 8)})}, nullptr), 0);
  ASSERT_EQ(b2.dev->ReqNotifyCq(cq, /*solicited_only=*/true), 0);
  ASSERT_EQ(a2.dev->PostSend(a2.qp, {Wr(1, WrOpcode::kSend, {a2.At(0, 8)})}, nullptr), 0);
  CqHandle got;
  EXPECT_EQ(b2.dev->GetCqEvent(ch, 1000000, &got), ETIMEDOUT);  // completed, not solicited
  uint64_t before = be_->NowNs();
  ASSERT_EQ(a2.dev->PostSend(a2.qp, {Wr(2, WrOpcode::kSend, {a2.At(0, 8)},
                                        send_flag::kSignaled | send_flag::kSolicited)},
                             nullptr),
            0);
  ASSERT_EQ(b2.dev->GetCqEvent(ch, 1000000, &got), 0);
  EXPECT_EQ(got, cq);
  EXPECT_GT(be_->NowNs(), before);  // the wait let simulated time run to the arrival
  b2.dev->AckCqEvents(cq, 1);
  std::vector<WorkCompletion> wcs;
  ASSERT_EQ(b2.dev->WaitForCompletions(cq, 2, 0, &wcs), 0);
  EXPECT_EQ(wcs[1].wr_id, 2u);
  ASSERT_EQ(b2.dev->DestroyQp(b2.qp), 0);
  ASSERT_EQ(b2.dev->DestroyCq(cq), 0);
  EXPECT_EQ(b2.dev->DestroyCompChannel(ch), 0);
}

TEST_F(RcTest, FenceHoldsSendUntilEarlierReadCompletes) {
  UseIbtaProfile();
  for (bool fence : {false, true}) {
    ASSERT_EQ(b_.dev->PostRecv(b_.qp, {Rwr(1, {b_.At(0, 8)})}, nullptr), 0);
    SendWr r = RemoteWr(1, WrOpcode::kRdmaRead, a_.At(0, 8000), b_, 0);
    SendWr s = Wr(2, WrOpcode::kSend, {a_.At(0, 8)}, fence ? send_flag::kFence : 0);
    ASSERT_EQ(a_.dev->PostSend(a_.qp, {r, s}, nullptr), 0);
    Wait(b_, b_.rcq, 1);
    uint64_t received = be_->NowNs();
    WorkCompletion wc;
    bool read_done_first = a_.dev->PollCq(a_.scq, 1, &wc) == 1;
    if (!read_done_first) Wait(a_, a_.scq, 1);
    // R20: with FENCE the SEND leaves only after the READ's data is back.
    EXPECT_EQ(read_done_first, fence) << "fence=" << fence << " received at " << received;
    be_->Advance(1000000);
  }
}

TEST(RcFence, RxeFenceWaitsForEarlierWritesTooIbtaDoesNot) {
  for (const char* profile : {"rxe", "ibta"}) {
    ModelOptions o;
    o.profile = profile;
    auto [be, a, b] = ConnectedSides(MakeModelBackend(o));
    ASSERT_EQ(b.dev->PostRecv(b.qp, {Rwr(1, {b.At(0, 8)})}, nullptr), 0);
    SendWr w = RemoteWr(1, WrOpcode::kRdmaWrite, a.At(0, 8000), b, 0);
    SendWr s = Wr(2, WrOpcode::kSend, {a.At(0, 8)}, send_flag::kSignaled | send_flag::kFence);
    ASSERT_EQ(a.dev->PostSend(a.qp, {w, s}, nullptr), 0);
    Wait(b, b.rcq, 1);
    WorkCompletion wc;
    bool write_acked_first = a.dev->PollCq(a.scq, 1, &wc) == 1;
    EXPECT_EQ(write_acked_first, std::string(profile) == "rxe") << profile;
  }
}

TEST(RcAttributes, PathMtuSetsPacketCountAndSoTheWireTime) {
  // 4 KB is 4 packets at MTU 1024 and 16 at MTU 256: 12 more headers on the wire.
  uint64_t took[2];
  Mtu mtus[2] = {Mtu::k1024, Mtu::k256};
  for (int i = 0; i < 2; ++i) {
    auto be = RxeModel();
    Side a = MakeSide(*be, "mdev0");
    Side b = MakeSide(*be, "mdev1");
    ASSERT_EQ(ToInit(a), 0);
    ASSERT_EQ(ToInit(b), 0);
    ASSERT_EQ(ToRtr(a, b, 1, mtus[i]), 0);
    ASSERT_EQ(ToRtr(b, a, 1, mtus[i]), 0);
    QpAttr q;
    ASSERT_EQ(a.dev->QueryQp(a.qp, &q, nullptr), 0);
    EXPECT_EQ(q.path_mtu, mtus[i]);
    ASSERT_EQ(ToRts(a), 0);
    ASSERT_EQ(ToRts(b), 0);
    SendWr w = RemoteWr(1, WrOpcode::kRdmaWrite, a.At(0, 4096), b, 0);
    ASSERT_EQ(a.dev->PostSend(a.qp, {w}, nullptr), 0);
    Wait(a, a.scq, 1);
    took[i] = be->NowNs();
  }
  // rxe profile (RoCE v2 at 10 Gb/s): a middle WRITE packet has 82 header bytes = 65.6 ns.
  EXPECT_NEAR(static_cast<double>(took[1] - took[0]), 12 * 65.6, 2.0);
}

TEST(RcSrq, TwoQpsShareOneSrqInPostingOrder) {
  auto be = RxeModel();
  Side a1 = MakeSide(*be, "mdev0");
  Side a2 = MakeSide(*be, "mdev0");
  Side b = MakeSide(*be, "mdev1");
  SrqHandle srq;
  ASSERT_EQ(b.dev->CreateSrq(b.pd, 8, 1, &srq), 0);
  QpInitAttr init;
  init.pd = b.pd;
  init.send_cq = b.scq;
  init.recv_cq = b.rcq;
  init.srq = srq;
  init.cap = QpCap{4, 0, 1, 0, 0};
  Side b1 = SiblingQp(b, init);
  Side b2 = SiblingQp(b, init);
  Connect(a1, b1);
  Connect(a2, b2);
  ASSERT_EQ(b.dev->PostSrqRecv(srq, {Rwr(1, {b.At(0, 16)}), Rwr(2, {b.At(16, 16)})}, nullptr), 0);
  std::memcpy(a1.buf, "first", 5);
  std::memcpy(a2.buf, "second", 6);
  ASSERT_EQ(a1.dev->PostSend(a1.qp, {Wr(1, WrOpcode::kSend, {a1.At(0, 5)})}, nullptr), 0);
  Wait(a1, a1.scq, 1);
  ASSERT_EQ(a2.dev->PostSend(a2.qp, {Wr(1, WrOpcode::kSend, {a2.At(0, 6)})}, nullptr), 0);
  Wait(a2, a2.scq, 1);
  auto wcs = Wait(b, b.rcq, 2);
  EXPECT_EQ(wcs[0].wr_id, 1u);
  EXPECT_EQ(wcs[0].qp_num, b1.qpn);
  EXPECT_EQ(wcs[1].wr_id, 2u);
  EXPECT_EQ(wcs[1].qp_num, b2.qpn);
  EXPECT_EQ(std::memcmp(b.buf, "first", 5), 0);
  EXPECT_EQ(std::memcmp(b.buf + 16, "second", 6), 0);
}

TEST(IbtaRc, FirstPacketInRtrRaisesCommEst) {
  auto be = MakeBackendOrSkip(ModelChoice("ibta"));
  Side a = MakeSide(*be, "mdev0");
  Side b = MakeSide(*be, "mdev1");
  ASSERT_EQ(ToInit(a), 0);
  ASSERT_EQ(ToInit(b), 0);
  ASSERT_EQ(ToRtr(a, b), 0);
  ASSERT_EQ(ToRtr(b, a), 0);
  ASSERT_EQ(ToRts(a), 0);  // b stays in RTR
  ASSERT_EQ(b.dev->PostRecv(b.qp, {Rwr(1, {b.At(0, 8)})}, nullptr), 0);
  ASSERT_EQ(a.dev->PostSend(a.qp, {Wr(1, WrOpcode::kSend, {a.At(0, 8)})}, nullptr), 0);
  ASSERT_EQ(b.dev->WaitForAsyncEvent(EventType::kCommEst, b.qp, 1000000), 0);
  EXPECT_EQ(Wait(a, a.scq, 1)[0].status, WcStatus::kSuccess);  // RTR answers with ACKs
}

TEST(RcDeterminism, SameScenarioSameTimes) {
  uint64_t times[2];
  for (int run = 0; run < 2; ++run) {
    auto [be, a, b] = ConnectedSides(RxeModel());
    ASSERT_EQ(b.dev->PostRecv(b.qp, {Rwr(1, {b.At(0, 4096)})}, nullptr), 0);
    ASSERT_EQ(a.dev->PostSend(a.qp, {Wr(1, WrOpcode::kSend, {a.At(0, 4096)})}, nullptr), 0);
    Wait(a, a.scq, 1);
    times[run] = be->NowNs();
  }
  EXPECT_EQ(times[0], times[1]);
  EXPECT_GT(times[0], 4u * 1024 * 8 / 10);  // at least the wire time at 10 Gb/s
}

TEST(RcLoopback, TwoQpsOnOneDeviceTalk) {
  auto be = RxeModel();
  Side a = MakeSide(*be, "mdev0");
  Side b = MakeSide(*be, "mdev0");
  Connect(a, b);
  std::memcpy(a.buf, "loopback", 8);
  ASSERT_EQ(b.dev->PostRecv(b.qp, {Rwr(1, {b.At(0, 64)})}, nullptr), 0);
  ASSERT_EQ(a.dev->PostSend(a.qp, {Wr(1, WrOpcode::kSend, {a.At(0, 8)})}, nullptr), 0);
  Wait(b, b.rcq, 1);
  EXPECT_EQ(std::memcmp(b.buf, "loopback", 8), 0);
}

// rxe's responder NAKs a gap once (Behaviour::one_psn_nak_per_gap, rxe_resp.c check_psn
// sent_psn_nak): a 3-packet WRITE_WITH_IMM RNR-NAKed at its last packet, with four
// WRITE_WITH_IMMs behind it sent during every RNR wait (Behaviour::rnr_wait_sends_new_wqes),
// draws an RNR NAK and one sequence NAK per retry round, not one per packet past the gap
// (probe tests/differential/probes/rnr-count: rxe's counters, 8 of each for 8 rounds).
TEST_F(RcTest, AGapDrawsOneSequenceNakPerRetryRound) {
  std::vector<NetTransfer> seen;
  ASSERT_TRUE(SetModelNetObserver([&seen](const NetTransfer& t) { seen.push_back(t); }));
  size_t bad = 99;
  std::vector<SendWr> wrs;
  for (uint64_t id = 1; id <= 5; ++id) {
    SendWr w = WriteWr(a_, b_, id, 0, id == 1 ? 3000 : 64);
    w.opcode = WrOpcode::kRdmaWriteWithImm;
    wrs.push_back(w);
  }
  ASSERT_EQ(a_.dev->PostSend(a_.qp, wrs, &bad), 0);
  std::vector<WorkCompletion> wcs;
  EXPECT_EQ(a_.dev->WaitForCompletions(a_.scq, 1, 30'000'000, &wcs), ETIMEDOUT);  // 30 ms
  ASSERT_TRUE(SetModelNetObserver(nullptr));
  int rounds = 0, naks = 0;
  for (const NetTransfer& t : seen) {
    if (t.kind == "WRITE" && t.packets == 3) ++rounds;
    if (t.kind == "NAK") ++naks;
  }
  EXPECT_GE(rounds, 3) << "RNR retries every 4-8 ms";
  EXPECT_EQ(naks, 2 * rounds) << "an RNR NAK and one sequence NAK a round";
}

}  // namespace
}  // namespace qptwin::model::testing
