// Profile quirks found by running the same scenarios on real rxe: WITH_IMM on the
// requester's own CQE, and receives posted in ERR that wait for the next move to ERR.
#include <gtest/gtest.h>

#include "tests/support/support.h"

namespace qptwin::model::testing {
namespace {

using namespace ::qptwin::testing;  // tests/support/support.h

SidePair Connected(const std::string& profile) {
  return ConnectedSides(MakeBackendOrSkip(ModelChoice(profile)));
}

int MoveToErr(Side& s) {
  QpAttr a;
  a.qp_state = QpState::kErr;
  return s.dev->ModifyQp(s.qp, a, attr::kState);
}

int PollAll(Side& s, CqHandle cq, std::vector<WorkCompletion>* out) {
  WorkCompletion wc[16];
  int n = s.dev->PollCq(cq, 16, wc);
  if (n > 0) out->insert(out->end(), wc, wc + n);
  return n;
}

// Sends SEND_WITH_IMM and RDMA_WRITE_WITH_IMM and returns the requester's two CQEs.
std::vector<WorkCompletion> ImmRequesterCqes(SidePair& p) {
  size_t bad = 0;
  EXPECT_EQ(p.b.dev->PostRecv(p.b.qp, {Rwr(10, {p.b.At(0, 64)}), Rwr(11, {p.b.At(64, 64)})}, &bad), 0);
  SendWr send = Wr(1, WrOpcode::kSendWithImm, {p.a.At(0, 8)});
  send.imm_data = 0x1234;
  SendWr write = Wr(2, WrOpcode::kRdmaWriteWithImm, {p.a.At(0, 8)});
  write.imm_data = 0x5678;
  write.remote_addr = p.b.Addr(1024);
  write.rkey = p.b.rkey;
  EXPECT_EQ(p.a.dev->PostSend(p.a.qp, {send, write}, &bad), 0);
  Wait(p.b, p.b.rcq, 2);
  return Wait(p.a, p.a.scq, 2);
}

TEST(RxeQuirks, RequesterCqeOfImmOpcodesCarriesWithImmAndZeroImmData) {
  SidePair p = Connected("rxe");
  auto wcs = ImmRequesterCqes(p);
  ASSERT_EQ(wcs.size(), 2u);
  for (const auto& wc : wcs) {
    EXPECT_EQ(wc.status, WcStatus::kSuccess);
    EXPECT_TRUE(wc.wc_flags & wc_flag::kWithImm) << "wr_id " << wc.wr_id;
    EXPECT_EQ(wc.imm_data, 0u);
  }
}

TEST(IbtaQuirks, RequesterCqeOfImmOpcodesHasNoWithImm) {
  SidePair p = Connected("ibta");
  auto wcs = ImmRequesterCqes(p);
  ASSERT_EQ(wcs.size(), 2u);
  for (const auto& wc : wcs) EXPECT_FALSE(wc.wc_flags & wc_flag::kWithImm) << wc.wr_id;
}

TEST(RxeQuirks, PlainSendCqeHasNoWithImm) {
  SidePair p = Connected("rxe");
  size_t bad = 0;
  ASSERT_EQ(p.b.dev->PostRecv(p.b.qp, {Rwr(10, {p.b.At(0, 64)})}, &bad), 0);
  ASSERT_EQ(p.a.dev->PostSend(p.a.qp, {Wr(1, WrOpcode::kSend, {p.a.At(0, 8)})}, &bad), 0);
  auto wcs = Wait(p.a, p.a.scq, 1);
  ASSERT_EQ(wcs.size(), 1u);
  EXPECT_EQ(wcs[0].wc_flags, 0u);
}

TEST(RxeQuirks, RecvPostedInErrWaitsUntilTheNextModifyToErr) {
  SidePair p = Connected("rxe");
  ASSERT_EQ(MoveToErr(p.b), 0);
  size_t bad = 0;
  ASSERT_EQ(p.b.dev->PostRecv(p.b.qp, {Rwr(7, {p.b.At(0, 64)}), Rwr(8, {p.b.At(64, 64)})}, &bad), 0);
  std::vector<WorkCompletion> wcs;
  p.be->Advance(1'000'000);
  EXPECT_EQ(PollAll(p.b, p.b.rcq, &wcs), 0) << "rxe has no receive doorbell";
  ASSERT_EQ(MoveToErr(p.b), 0) << "ERR -> ERR is legal";
  wcs = Wait(p.b, p.b.rcq, 2);
  ASSERT_EQ(wcs.size(), 2u);
  EXPECT_EQ(wcs[0].wr_id, 7u);
  EXPECT_EQ(wcs[1].wr_id, 8u);
  for (const auto& wc : wcs) EXPECT_EQ(wc.status, WcStatus::kWrFlushErr);
}

TEST(RxeQuirks, RecvPostedInErrWaitsThroughAnArrivingRequest) {
  SidePair p = Connected("rxe");
  ASSERT_EQ(MoveToErr(p.b), 0);
  size_t bad = 0;
  ASSERT_EQ(p.b.dev->PostRecv(p.b.qp, {Rwr(7, {p.b.At(0, 64)})}, &bad), 0);
  // a is still in RTS: its SEND reaches b, where rxe_recv.c check_type_state drops it before
  // the responder (measured in tools/rxe-vm: examples/fidelity/18), so b's receive still waits.
  ASSERT_EQ(p.a.dev->PostSend(p.a.qp, {Wr(1, WrOpcode::kSend, {p.a.At(0, 8)})}, &bad), 0);
  p.be->Advance(50 * 1000 * 1000);  // 50 ms: a gives up (RETRY_EXC_ERR) meanwhile
  WorkCompletion wc;
  EXPECT_EQ(p.b.dev->PollCq(p.b.rcq, 1, &wc), 0);
  ASSERT_EQ(MoveToErr(p.b), 0);  // the next move to ERR flushes it
  auto wcs = Wait(p.b, p.b.rcq, 1);
  ASSERT_EQ(wcs.size(), 1u);
  EXPECT_EQ(wcs[0].wr_id, 7u);
  EXPECT_EQ(wcs[0].status, WcStatus::kWrFlushErr);
}

TEST(IbtaQuirks, RecvPostedInErrIsFlushedAtOnce) {
  SidePair p = Connected("ibta");
  ASSERT_EQ(MoveToErr(p.b), 0);
  size_t bad = 0;
  ASSERT_EQ(p.b.dev->PostRecv(p.b.qp, {Rwr(7, {p.b.At(0, 64)})}, &bad), 0);
  auto wcs = Wait(p.b, p.b.rcq, 1);
  ASSERT_EQ(wcs.size(), 1u);
  EXPECT_EQ(wcs[0].wr_id, 7u);
  EXPECT_EQ(wcs[0].status, WcStatus::kWrFlushErr);
}

TEST(Quirks, ErrToErrFlushesEverythingQueuedInEveryProfile) {
  for (const char* profile : {"rxe", "ibta"}) {
    SCOPED_TRACE(profile);
    SidePair p = Connected(profile);
    size_t bad = 0;
    // b has no receives and retries RNR forever: a's SENDs stay queued.
    ASSERT_EQ(p.a.dev->PostSend(p.a.qp, {Wr(1, WrOpcode::kSend, {p.a.At(0, 8)}),
                                         Wr(2, WrOpcode::kSend, {p.a.At(0, 8)}, 0)}, &bad), 0);
    ASSERT_EQ(p.a.dev->PostRecv(p.a.qp, {Rwr(3, {p.a.At(0, 64)})}, &bad), 0);
    p.be->Advance(100'000);
    ASSERT_EQ(MoveToErr(p.a), 0);
    ASSERT_EQ(MoveToErr(p.a), 0);
    auto s = Wait(p.a, p.a.scq, 2);
    auto r = Wait(p.a, p.a.rcq, 1);
    ASSERT_EQ(s.size(), 2u);
    EXPECT_EQ(s[0].wr_id, 1u);
    EXPECT_EQ(s[1].wr_id, 2u) << "an unsignaled WR is flushed too";
    ASSERT_EQ(r.size(), 1u);
    EXPECT_EQ(r[0].wr_id, 3u);
    std::vector<WorkCompletion> more;
    p.be->Advance(1'000'000);
    EXPECT_EQ(PollAll(p.a, p.a.scq, &more) + PollAll(p.a, p.a.rcq, &more), 0)
        << "each WR completes exactly once";
  }
}

}  // namespace
}  // namespace qptwin::model::testing
