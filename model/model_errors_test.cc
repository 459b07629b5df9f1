// Errors inside the data path as rxe reports them (rdma-facts R7, R13-R19) and loss.
#include <cstring>

#include "tests/support/support.h"

namespace qptwin::model::testing {
namespace {

using namespace ::qptwin::testing;  // tests/support/support.h

class ErrorsTest : public ::testing::Test {
 protected:
  void Make(double loss = 0, SideOptions ao = {}, SideOptions bo = {},
            const std::string& profile = "rxe") {
    ModelOptions o;
    o.profile = profile;
    o.loss_rate = loss;
    o.seed = 7;
    be_ = MakeModelBackend(o);
    a_ = MakeSide(*be_, "mdev0", ao);
    b_ = MakeSide(*be_, "mdev1", bo);
  }
  void ConnectWith(uint8_t timeout, uint8_t retry, uint8_t rnr_retry, AccessFlags b_access = access::kAll) {
    ASSERT_EQ(ToInit(a_), 0);
    ASSERT_EQ(ToInit(b_, b_access), 0);
    ASSERT_EQ(ToRtr(a_, b_), 0);
    ASSERT_EQ(ToRtr(b_, a_), 0);
    ASSERT_EQ(ToRts(a_, timeout, retry, rnr_retry), 0);
    ASSERT_EQ(ToRts(b_, timeout, retry, rnr_retry), 0);
  }
  SendWr Write(uint64_t id, uint64_t raddr, uint32_t rkey, uint32_t len = 8, SendFlags f = 0) {
    SendWr w = Wr(id, WrOpcode::kRdmaWrite, {a_.At(0, len)}, f);
    w.remote_addr = raddr;
    w.rkey = rkey;
    return w;
  }
  // 64 bytes registered with `access` in a new PD on `s`'s device.
  struct ForeignMr {
    uint8_t* buf = nullptr;
    uint32_t lkey = 0;
    uint32_t rkey = 0;
  };
  ForeignMr MrInAnotherPd(Side& s, AccessFlags access) {
    PdHandle other;
    MrHandle mr;
    ForeignMr m;
    EXPECT_EQ(s.dev->AllocPd(&other), 0);
    EXPECT_EQ(s.dev->RegMr(other, 64, access, &mr, &m.buf, &m.lkey, &m.rkey), 0);
    return m;
  }
  std::unique_ptr<Backend> be_;
  Side a_, b_;
};

TEST_F(ErrorsTest, RnrRetryExhaustedCompletesWithRnrErrorThenFlushes) {
  Make();
  ConnectWith(14, 7, 2);
  ASSERT_EQ(a_.dev->PostSend(a_.qp, {Wr(1, WrOpcode::kSend, {a_.At(0, 8)}, 0),
                                     Wr(2, WrOpcode::kSend, {a_.At(0, 8)}, 0)}, nullptr), 0);
  auto wc = Wait(a_, a_.scq, 2, 10000000000ull);
  // R7 + R18: the failing (unsignaled) WR reports its own error, then the flush.
  EXPECT_EQ(wc[0].wr_id, 1u);
  EXPECT_EQ(wc[0].status, WcStatus::kRnrRetryExcErr);
  EXPECT_EQ(wc[1].wr_id, 2u);
  EXPECT_EQ(wc[1].status, WcStatus::kWrFlushErr);
  EXPECT_EQ(StateOf(a_), QpState::kErr);
  EXPECT_EQ(StateOf(b_), QpState::kRts);  // the receiver is not harmed by RNR
  std::vector<StateChange> h;
  ASSERT_EQ(a_.dev->QpHistory(a_.qp, &h), 0);
  EXPECT_EQ(h.back().cause, "RNR retry exceeded");
}

TEST_F(ErrorsTest, WriteWithImmNeedsAReceiveAndWritesNothingWithoutOne) {
  Make();
  ConnectWith(14, 7, 1);
  a_.buf[0] = 0x5a;
  SendWr w = Write(1, b_.Addr(0), b_.rkey, 8, send_flag::kSignaled);
  w.opcode = WrOpcode::kRdmaWriteWithImm;
  ASSERT_EQ(a_.dev->PostSend(a_.qp, {w}, nullptr), 0);
  EXPECT_EQ(Wait(a_, a_.scq, 1)[0].status, WcStatus::kRnrRetryExcErr);
  EXPECT_EQ(b_.buf[0], 0);  // RNR is decided before any byte is placed
}

TEST_F(ErrorsTest, RnrRetryWaitsMinRnrTimerAndSucceedsWhenReceivePosted) {
  Make();
  ConnectWith(14, 7, 7);  // 7 = retry forever
  ASSERT_EQ(a_.dev->PostSend(a_.qp, {Wr(1, WrOpcode::kSend, {a_.At(0, 8)})}, nullptr), 0);
  be_->Advance(5000000);  // 5 ms of RNR NAKs
  ASSERT_EQ(b_.dev->PostRecv(b_.qp, {Rwr(5, {b_.At(0, 8)})}, nullptr), 0);
  EXPECT_EQ(Wait(a_, a_.scq, 1)[0].status, WcStatus::kSuccess);
  EXPECT_EQ(Wait(b_, b_.rcq, 1)[0].wr_id, 5u);
}

TEST_F(ErrorsTest, BadRkeyIsRemoteAccessErrorAndBothSidesErr) {
  Make();
  ConnectWith(14, 7, 7);
  ASSERT_EQ(a_.dev->PostSend(a_.qp, {Write(1, b_.Addr(0), b_.rkey + 1)}, nullptr), 0);
  auto wc = Wait(a_, a_.scq, 1);
  EXPECT_EQ(wc[0].status, WcStatus::kRemAccessErr);  // R15, even though unsignaled
  EXPECT_EQ(StateOf(a_), QpState::kErr);
  EXPECT_EQ(StateOf(b_), QpState::kErr);
  EXPECT_TRUE(b_.dev->TakeAsyncEvents().empty());  // rxe_qp_error raises no event
}

TEST_F(ErrorsTest, IbtaResponderRaisesAccessErrAndReqErr) {
  Make(0, {}, {}, "ibta");
  ConnectWith(14, 7, 7, access::kLocalWrite | access::kRemoteWrite);
  ASSERT_EQ(a_.dev->PostSend(a_.qp, {Write(1, b_.Addr(0), b_.rkey + 1)}, nullptr), 0);
  EXPECT_EQ(Wait(a_, a_.scq, 1)[0].status, WcStatus::kRemAccessErr);
  EXPECT_EQ(b_.dev->WaitForAsyncEvent(EventType::kQpAccessErr, b_.qp, 0), 0);
  Make(0, {}, {}, "ibta");
  ConnectWith(14, 7, 7, access::kLocalWrite);  // no REMOTE_WRITE on the QP
  ASSERT_EQ(a_.dev->PostSend(a_.qp, {Write(1, b_.Addr(0), b_.rkey)}, nullptr), 0);
  EXPECT_EQ(Wait(a_, a_.scq, 1)[0].status, WcStatus::kRemInvReqErr);
  EXPECT_EQ(b_.dev->WaitForAsyncEvent(EventType::kQpReqErr, b_.qp, 0), 0);
}

TEST_F(ErrorsTest, OutOfBoundsWriteIsRemoteAccessError) {
  Make();
  ConnectWith(14, 7, 7);
  ASSERT_EQ(a_.dev->PostSend(a_.qp, {Write(1, b_.Addr(8190), b_.rkey)}, nullptr), 0);
  EXPECT_EQ(Wait(a_, a_.scq, 1)[0].status, WcStatus::kRemAccessErr);
}

TEST_F(ErrorsTest, OperationNotAllowedByQpAccessIsRemoteInvalidRequest) {
  Make();
  ConnectWith(14, 7, 7, access::kLocalWrite | access::kRemoteWrite);  // no REMOTE_READ
  SendWr r = RemoteWr(1, WrOpcode::kRdmaRead, a_.At(0, 8), b_, 0);
  ASSERT_EQ(a_.dev->PostSend(a_.qp, {r}, nullptr), 0);
  EXPECT_EQ(Wait(a_, a_.scq, 1)[0].status, WcStatus::kRemInvReqErr);  // R16
  EXPECT_EQ(StateOf(b_), QpState::kErr);
}

// IBTA: a local protection error; rxe: an lkey its lookup_mr cannot resolve (no such MR, or
// one of another PD) is LOC_QP_OP_ERR (Behaviour::unresolved_lkey_is_qp_op_err, fidelity/02).
class LocalErrorTest : public ErrorsTest, public ::testing::WithParamInterface<const char*> {};

TEST_P(LocalErrorTest, BadLkeyIsTheProfilesLocalError) {
  Make(0, {}, {}, GetParam());
  ConnectWith(14, 7, 7);
  SendWr w = Wr(1, WrOpcode::kSend, {Sge{a_.Addr(0), 8, a_.lkey ^ 0x100}}, 0);
  ASSERT_EQ(a_.dev->PostSend(a_.qp, {w}, nullptr), 0);
  const bool rxe = std::string(GetParam()) == "rxe";
  EXPECT_EQ(Wait(a_, a_.scq, 1)[0].status, rxe ? WcStatus::kLocQpOpErr : WcStatus::kLocProtErr);
  EXPECT_EQ(StateOf(a_), QpState::kErr);
}

TEST_P(LocalErrorTest, LkeyOfAnotherPdIsTheProfilesLocalError) {
  Make(0, {}, {}, GetParam());
  ConnectWith(14, 7, 7);
  ForeignMr m = MrInAnotherPd(a_, access::kLocalWrite);
  SendWr w = RemoteWr(1, WrOpcode::kRdmaWrite, Sge{reinterpret_cast<uint64_t>(m.buf), 8, m.lkey},
                      b_, 0);
  ASSERT_EQ(a_.dev->PostSend(a_.qp, {w}, nullptr), 0);
  const bool rxe = std::string(GetParam()) == "rxe";
  EXPECT_EQ(Wait(a_, a_.scq, 1)[0].status, rxe ? WcStatus::kLocQpOpErr : WcStatus::kLocProtErr);
}

// IBTA: LOC_LEN_ERR and NAK Invalid Request; rxe: a malformed WQE, LOC_QP_OP_ERR and NAK
// remote operational error (Behaviour::recv_error_is_malformed_wqe, examples/fidelity/03).
TEST_P(LocalErrorTest, ReceiveTooSmallIsTheProfilesReceiveError) {
  Make(0, {}, {}, GetParam());
  ConnectWith(14, 7, 7);
  ASSERT_EQ(b_.dev->PostRecv(b_.qp, {Rwr(9, {b_.At(0, 4)})}, nullptr), 0);
  ASSERT_EQ(a_.dev->PostSend(a_.qp, {Wr(1, WrOpcode::kSend, {a_.At(0, 8)})}, nullptr), 0);
  const bool rxe = std::string(GetParam()) == "rxe";
  EXPECT_EQ(Wait(b_, b_.rcq, 1)[0].status, rxe ? WcStatus::kLocQpOpErr : WcStatus::kLocLenErr);
  EXPECT_EQ(Wait(a_, a_.scq, 1)[0].status, rxe ? WcStatus::kRemOpErr : WcStatus::kRemInvReqErr);
  EXPECT_EQ(StateOf(b_), QpState::kErr);
}

INSTANTIATE_TEST_SUITE_P(Profiles, LocalErrorTest, ::testing::Values("ibta", "rxe"));

TEST_F(ErrorsTest, RkeyOfAnotherPdIsRemoteAccessError) {
  Make();
  ConnectWith(14, 7, 7);
  ForeignMr m = MrInAnotherPd(b_, access::kAll);
  SendWr w = Write(1, reinterpret_cast<uint64_t>(m.buf), m.rkey, 8, send_flag::kSignaled);
  ASSERT_EQ(a_.dev->PostSend(a_.qp, {w}, nullptr), 0);
  EXPECT_EQ(Wait(a_, a_.scq, 1)[0].status, WcStatus::kRemAccessErr);
  EXPECT_EQ(m.buf[0], 0);
}

TEST_F(ErrorsTest, TotalLossExhaustsRetryCount) {
  for (const char* profile : {"ibta", "rxe"}) {
    SCOPED_TRACE(profile);
    Make(1.0, {}, {}, profile);
    ConnectWith(10, 3, 7);  // 4.096 us * 2^10 = 4.19 ms per try
    ASSERT_EQ(a_.dev->PostSend(a_.qp, {Write(1, b_.Addr(0), b_.rkey, 8, send_flag::kSignaled)},
                               nullptr),
              0);
    auto wc = Wait(a_, a_.scq, 1, 100000000);
    EXPECT_EQ(wc[0].status, WcStatus::kRetryExcErr);  // R19
    // 1 try + 3 retries, each waiting the full timeout; on rxe a timer of jiffies (HZ 250:
    // 4.19 ms is 1 jiffy), which fires at the tick after its expiry: 4-8 ms (plus up to
    // 0.2 ms: Nic::KernelBucketTime orders one tick's timers).
    if (std::string(profile) == "ibta") {
      EXPECT_GE(be_->NowNs(), 4u * 4096u * 1024u);
      EXPECT_LT(be_->NowNs(), 5u * 4096u * 1024u);
    } else {
      EXPECT_GE(be_->NowNs(), 4u * 4000000u);
      EXPECT_LE(be_->NowNs(), 4u * 8200000u);
    }
  }
}

TEST_F(ErrorsTest, ModerateLossIsRecoveredByRetries) {
  Make(0.2);
  ConnectWith(8, 7, 7);
  std::vector<RecvWr> rs;
  for (int i = 0; i < 16; ++i) rs.push_back(Rwr(i, {b_.At(i * 500, 500)}));
  ASSERT_EQ(b_.dev->PostRecv(b_.qp, rs, nullptr), 0);
  for (int i = 0; i < 8000; ++i) a_.buf[i] = static_cast<uint8_t>(i * 13);
  std::vector<SendWr> ss;
  for (int i = 0; i < 16; ++i) ss.push_back(Wr(i, WrOpcode::kSend, {a_.At(i * 500, 500)}));
  ASSERT_EQ(a_.dev->PostSend(a_.qp, ss, nullptr), 0);
  auto swc = Wait(a_, a_.scq, 16, 1000000000);
  for (int i = 0; i < 16; ++i) {
    EXPECT_EQ(swc[i].wr_id, static_cast<uint64_t>(i));
    EXPECT_EQ(swc[i].status, WcStatus::kSuccess);
  }
  auto rwc = Wait(b_, b_.rcq, 16);
  for (int i = 0; i < 16; ++i) EXPECT_EQ(rwc[i].wr_id, static_cast<uint64_t>(i));
  EXPECT_EQ(std::memcmp(a_.buf, b_.buf, 8000), 0);  // no duplicate, no gap
}

TEST_F(ErrorsTest, AtomicsExecuteExactlyOnceDespiteLoss) {
  Make(0.2);
  ConnectWith(8, 7, 7);
  std::vector<SendWr> wrs;
  for (int i = 0; i < 12; ++i) {
    SendWr w = Wr(i, WrOpcode::kAtomicFetchAndAdd, {a_.At(8 * i, 8)}, send_flag::kSignaled);
    w.remote_addr = b_.Addr(0);
    w.rkey = b_.rkey;
    w.compare_add = 3;
    wrs.push_back(w);
  }
  for (int round = 0; round < 4; ++round) {
    ASSERT_EQ(a_.dev->PostSend(a_.qp, wrs, nullptr), 0);
    auto wc = Wait(a_, a_.scq, 12, 1000000000);
    for (const auto& c : wc) ASSERT_EQ(c.status, WcStatus::kSuccess);
  }
  uint64_t total;
  std::memcpy(&total, b_.buf, 8);
  EXPECT_EQ(total, 4u * 12u * 3u);  // duplicates were answered from the replay, not re-added
  uint64_t last;
  std::memcpy(&last, a_.buf + 8 * 11, 8);
  EXPECT_EQ(last, total - 3);
}

TEST_F(ErrorsTest, ResponderCqOverflowRaisesCqErrAndMovesQpToErr) {
  for (const char* profile : {"rxe", "ibta"}) {
    SideOptions small;
    small.cq_depth = 3;  // rxe: 3 entries (2^2 - 1); ibta: 3
    Make(0, {}, small, profile);
    ConnectWith(14, 7, 7);
    std::vector<RecvWr> rs;
    for (int i = 0; i < 4; ++i) rs.push_back(Rwr(i, {b_.At(i * 8, 8)}));
    ASSERT_EQ(b_.dev->PostRecv(b_.qp, rs, nullptr), 0);
    std::vector<SendWr> ss;
    for (int i = 0; i < 4; ++i) ss.push_back(Wr(i, WrOpcode::kSend, {a_.At(0, 8)}));
    ASSERT_EQ(a_.dev->PostSend(a_.qp, ss, nullptr), 0);
    ASSERT_EQ(b_.dev->WaitForAsyncEvent(EventType::kCqErr, QpHandle{}, 10000000), 0);  // R13
    EXPECT_EQ(StateOf(b_), QpState::kErr);                                           // R14
    auto events = b_.dev->TakeAsyncEvents();
    ASSERT_FALSE(events.empty());
    EXPECT_EQ(events[0].type, EventType::kCqErr);
    EXPECT_EQ(events[0].cq, b_.rcq);
    if (std::string(profile) == "ibta") {  // IBTA: the QP's work queue is in error too
      ASSERT_EQ(events.size(), 2u);
      EXPECT_EQ(events[1].type, EventType::kQpFatal);
      EXPECT_EQ(events[1].qp, b_.qp);
    } else {
      EXPECT_EQ(events.size(), 1u);
    }
    std::vector<WorkCompletion> wcs;
    EXPECT_EQ(b_.dev->WaitForCompletions(b_.rcq, 3, 0, &wcs), 0);  // the 3 that fitted
  }
}

TEST_F(ErrorsTest, RequestsToAQpBelowRtrAreDropped) {
  // R10: b stays in INIT, so a's WRITE is dropped silently and a runs out of retries.
  Make();
  ASSERT_EQ(ToInit(a_), 0);
  ASSERT_EQ(ToInit(b_), 0);
  ASSERT_EQ(ToRtr(a_, b_), 0);
  ASSERT_EQ(ToRts(a_, 8, 1, 7), 0);
  b_.buf[0] = 0;
  a_.buf[0] = 0x77;
  ASSERT_EQ(a_.dev->PostSend(a_.qp, {Write(1, b_.Addr(0), b_.rkey)}, nullptr), 0);
  EXPECT_EQ(Wait(a_, a_.scq, 1)[0].status, WcStatus::kRetryExcErr);
  EXPECT_EQ(b_.buf[0], 0);
  EXPECT_EQ(StateOf(b_), QpState::kInit);
}

TEST_F(ErrorsTest, MinRnrTimerSetsTheRnrWait) {
  // min_rnr_timer 14 = 1.28 ms (IBTA table 45); rnr_retry 1: one wait, then the error.
  // rxe: usecs_to_jiffies rounds 1.28 ms up to 1 jiffy (HZ 250), which fires at the tick
  // after its expiry: 4-8 ms.
  for (const char* profile : {"ibta", "rxe"}) {
    SCOPED_TRACE(profile);
    Make(0, {}, {}, profile);
    ASSERT_EQ(ToInit(a_), 0);
    ASSERT_EQ(ToInit(b_), 0);
    ASSERT_EQ(ToRtr(a_, b_), 0);
    ASSERT_EQ(ToRtr(b_, a_, 14), 0);
    ASSERT_EQ(ToRts(a_, 14, 7, 1), 0);
    ASSERT_EQ(ToRts(b_), 0);
    ASSERT_EQ(a_.dev->PostSend(a_.qp, {Wr(1, WrOpcode::kSend, {a_.At(0, 8)})}, nullptr), 0);
    EXPECT_EQ(Wait(a_, a_.scq, 1)[0].status, WcStatus::kRnrRetryExcErr);
    if (std::string(profile) == "ibta") {
      EXPECT_GE(be_->NowNs(), 1280000u);
      EXPECT_LT(be_->NowNs(), 1400000u);
    } else {
      EXPECT_GE(be_->NowNs(), 4000000u);
      EXPECT_LT(be_->NowNs(), 8300000u);
    }
  }
}

}  // namespace
}  // namespace qptwin::model::testing
