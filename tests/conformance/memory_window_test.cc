// Memory windows on every backend (spec/backend.h, Memory windows; issue 11): alloc and
// dealloc of both types, a type 1 bind by ibv_bind_mw and a type 2 bind by a BIND_MW WR,
// remote READ/WRITE through a window's rkey (inside its range and rights, and outside),
// invalidation by LOCAL_INV and SEND_WITH_INV, and what a bound window does to dealloc and
// dereg. The expectations are what rxe does (measured in tools/rxe-vm, Linux 6.1).
//
// Every test binds on QP `a` and reaches the window from its peer `b`: a remote request
// through the window arrives at `a`, the QP a type 2 window belongs to (rxe_lookup_mw).
#include <cerrno>
#include <cstring>
#include <utility>
#include <vector>

#include "spec/device_description.h"
#include "tests/conformance/fixture.h"

namespace qptwin::testing {
namespace {

using access::kLocalWrite;
using access::kMwBind;
using access::kRemoteRead;
using access::kRemoteWrite;

constexpr uint32_t kKeyByte = 0xff;

uint32_t NextKey(uint32_t rkey) { return (rkey & ~kKeyByte) | ((rkey + 1) & kKeyByte); }

class MemoryWindow : public Conformance {
 protected:
  void SetUp() override {
    Conformance::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    std::tie(a_, b_) = ConnectedPair(QpType::kRc);
    target_ = Reg(8192, kLocalWrite | kRemoteWrite | kRemoteRead | kMwBind);
    src_ = Reg(8192, access::kAll);
  }

  MwHandle Alloc(MwType type, uint32_t* rkey) {
    MwHandle mw;
    EXPECT_EQ(dev_->AllocMw(pd_, type, &mw, rkey), 0) << ToName(type);
    return mw;
  }

  // The window [target_ + 1024, + 1024) with `rights`.
  MwBindInfo Window(AccessFlags rights = kRemoteWrite | kRemoteRead) const {
    MwBindInfo info;
    info.mr = target_.mr;
    info.addr = target_.Addr(1024);
    info.length = 1024;
    info.mw_access_flags = rights;
    return info;
  }

  // A type 1 bind on `a`; returns the new rkey after its completion succeeded.
  uint32_t Bind1(MwHandle mw, const MwBindInfo& info) {
    MwBind bind;
    bind.wr_id = 77;
    bind.send_flags = send_flag::kSignaled;
    bind.bind_info = info;
    uint32_t rkey = 0;
    EXPECT_EQ(dev_->BindMw(a_, mw, bind, &rkey), 0);
    const WorkCompletion wc = OneWc(cq_, 77, WcStatus::kSuccess);
    EXPECT_EQ(wc.opcode, WcOpcode::kBindMw);
    return rkey;
  }

  // A signaled type 1 bind (wr_id 5) of the window's range in `plain`, a region registered
  // without MW_BIND: the bind fails when the requester runs it.
  MwBind BindToRegionWithoutMwBind(const Buffer& plain) const {
    MwBind bind;
    bind.wr_id = 5;
    bind.send_flags = send_flag::kSignaled;
    bind.bind_info = Window();
    bind.bind_info.mr = plain.mr;
    bind.bind_info.addr = plain.Addr(0);
    return bind;
  }

  static SendWr BindWr(MwHandle mw, uint32_t new_rkey, const MwBindInfo& info) {
    SendWr wr = Send(78, {});
    wr.opcode = WrOpcode::kBindMw;
    wr.mw = mw;
    wr.rkey = new_rkey;
    wr.bind_info = info;
    return wr;
  }

  // Exactly two completions, these (wr_id, status) in this order.
  static void ExpectTwo(const std::vector<WorkCompletion>& wcs,
                        std::pair<uint64_t, WcStatus> first, std::pair<uint64_t, WcStatus> second) {
    ASSERT_EQ(wcs.size(), 2u);
    EXPECT_EQ(wcs[0].wr_id, first.first);
    EXPECT_EQ(wcs[0].status, first.second) << ToName(wcs[0].status);
    EXPECT_EQ(wcs[1].wr_id, second.first);
    EXPECT_EQ(wcs[1].status, second.second) << ToName(wcs[1].status);
  }

  // Posts `wr` on `qp` and waits for its one completion.
  WorkCompletion PostOne(QpHandle qp, const SendWr& wr) {
    size_t bad = 0;
    EXPECT_EQ(dev_->PostSend(qp, {wr}, &bad), 0) << ToName(wr.opcode);
    auto wcs = WaitWc(cq_, 1);
    return wcs.empty() ? WorkCompletion{} : wcs[0];
  }

  // A LOCAL_INV of `rkey` (libibverbs passes it in the imm_data union).
  static SendWr InvWr(uint64_t wr_id, uint32_t rkey) {
    SendWr wr = Send(wr_id, {});
    wr.opcode = WrOpcode::kLocalInv;
    wr.imm_data = rkey;
    return wr;
  }

  // A new type 2 window bound on `a` to Window() with its next key (*rkey; 0 if it failed).
  MwHandle BoundType2(uint32_t* rkey) {
    uint32_t r0 = 0;
    MwHandle mw = Alloc(MwType::kType2, &r0);
    *rkey = NextKey(r0);
    const WorkCompletion wc = Bind2(mw, *rkey, Window());
    EXPECT_EQ(wc.status, WcStatus::kSuccess) << ToName(wc.status);
    if (wc.status != WcStatus::kSuccess) *rkey = 0;
    return mw;
  }

  // b sends 32 bytes WITH_INV of `rkey` into a receive posted on a; both completions.
  bool SendWithInv(uint32_t rkey, WorkCompletion* recv, WorkCompletion* sent) {
    size_t bad = 0;
    EXPECT_EQ(dev_->PostRecv(a_, {Recv(60, {target_.At(0, 512)})}, &bad), 0);
    SendWr send = Send(61, {src_.At(0, 32)});
    send.opcode = WrOpcode::kSendWithInv;
    send.imm_data = rkey;
    EXPECT_EQ(dev_->PostSend(b_, {send}, &bad), 0);
    auto wcs = WaitWc(cq_, 2);
    EXPECT_EQ(wcs.size(), 2u);
    if (wcs.size() != 2) return false;
    *recv = wcs[0].wr_id == 60 ? wcs[0] : wcs[1];
    *sent = wcs[0].wr_id == 60 ? wcs[1] : wcs[0];
    return true;
  }

  // A type 2 bind on `a` to `new_rkey`; returns its completion.
  WorkCompletion Bind2(MwHandle mw, uint32_t new_rkey, const MwBindInfo& info) {
    return PostOne(a_, BindWr(mw, new_rkey, info));
  }

  // An RDMA op of `len` bytes from `b` to `addr` through `rkey`; returns the completion.
  WorkCompletion Remote(WrOpcode op, uint64_t addr, uint32_t rkey, uint32_t len = 64) {
    SendWr wr = Send(90, {src_.At(0, len)});
    wr.opcode = op;
    wr.remote_addr = addr;
    wr.rkey = rkey;
    return PostOne(b_, wr);
  }

  QpHandle a_, b_;
  Buffer target_, src_;
};

TEST_P(MemoryWindow, AllocAndDeallocBothTypes) {
  uint32_t r1 = 0, r2 = 0;
  MwHandle m1 = Alloc(MwType::kType1, &r1);
  MwHandle m2 = Alloc(MwType::kType2, &r2);
  EXPECT_NE(r1, 0u);
  EXPECT_NE(r2, 0u);
  EXPECT_NE(r1 >> 8, r2 >> 8) << "each window has its own index";
  EXPECT_NE(r1 >> 8, target_.rkey >> 8) << "a window's index is no region's";
  EXPECT_EQ(dev_->DeallocPd(pd_), EBUSY) << "the windows use the PD";
  EXPECT_EQ(dev_->DeallocMw(m1), 0);
  EXPECT_EQ(dev_->DeallocMw(m2), 0);
  EXPECT_EQ(dev_->DeallocMw(m2), EINVAL) << "already deallocated";
  MwHandle none;
  EXPECT_EQ(dev_->AllocMw(PdHandle{}, MwType::kType1, &none, nullptr), EINVAL);
}

TEST_P(MemoryWindow, UnknownTypeIsRefused) {
  MwHandle mw;
  uint32_t rkey = 0;
  EXPECT_EQ(dev_->AllocMw(pd_, static_cast<MwType>(3), &mw, &rkey), EINVAL);
}

TEST_P(MemoryWindow, Type1BindGivesTheNextKeyAndOpensTheWindow) {
  uint32_t r0 = 0;
  MwHandle mw = Alloc(MwType::kType1, &r0);
  const uint32_t rkey = Bind1(mw, Window());
  EXPECT_EQ(rkey, NextKey(r0)) << "ibv_inc_rkey: same index, key byte + 1";
  std::memset(src_.buf, 0x3c, 64);
  WorkCompletion wc = Remote(WrOpcode::kRdmaWrite, target_.Addr(1024), rkey);
  EXPECT_EQ(wc.status, WcStatus::kSuccess) << ToName(wc.status);
  EXPECT_EQ(target_.buf[1024], 0x3c);
  EXPECT_EQ(target_.buf[1087], 0x3c);
  target_.buf[2047] = 0x5d;
  wc = Remote(WrOpcode::kRdmaRead, target_.Addr(2047), rkey, 1);
  EXPECT_EQ(wc.status, WcStatus::kSuccess) << ToName(wc.status);
  EXPECT_EQ(src_.buf[0], 0x5d);
  // Rebinding (type 1 may be rebound while bound) moves the key on again.
  EXPECT_EQ(Bind1(mw, Window()), NextKey(rkey));
  EXPECT_EQ(dev_->DeallocMw(mw), 0);
}

TEST_P(MemoryWindow, AccessPastTheWindowIsCheckedAsTheDeviceDoes) {
  uint32_t r0 = 0;
  MwHandle mw = Alloc(MwType::kType1, &r0);
  const uint32_t rkey = Bind1(mw, Window());
  std::memset(src_.buf, 0x2b, 64);
  // Inside the region, but 8 bytes past the window's end.
  WorkCompletion wc = Remote(WrOpcode::kRdmaWrite, target_.Addr(2040), rkey, 16);
  if (GetParam().behaviour.mw_range_checked_against_mr) {
    // rxe: only the region's bounds count; bytes below the window are reachable as well.
    EXPECT_EQ(wc.status, WcStatus::kSuccess) << ToName(wc.status);
    EXPECT_EQ(target_.buf[2055], 0x2b);
    wc = Remote(WrOpcode::kRdmaWrite, target_.Addr(0), rkey, 16);
    EXPECT_EQ(wc.status, WcStatus::kSuccess) << ToName(wc.status);
    EXPECT_EQ(target_.buf[0], 0x2b);
    EXPECT_EQ(StateOf(a_), QpState::kRts);
  } else {
    EXPECT_EQ(wc.status, WcStatus::kRemAccessErr) << ToName(wc.status);
    EXPECT_EQ(target_.buf[2040], 0) << "nothing written";
    EXPECT_EQ(StateOf(b_), QpState::kErr);
    EXPECT_EQ(StateOf(a_), QpState::kErr) << "the responder NAKed and went to ERR";
  }
  EXPECT_EQ(dev_->DeallocMw(mw), 0);
}

TEST_P(MemoryWindow, AccessPastTheRegionIsARemoteAccessError) {
  uint32_t r0 = 0;
  MwHandle mw = Alloc(MwType::kType2, &r0);
  ASSERT_EQ(Bind2(mw, NextKey(r0), Window()).status, WcStatus::kSuccess);
  WorkCompletion wc = Remote(WrOpcode::kRdmaWrite, target_.Addr(8190), NextKey(r0), 16);
  EXPECT_EQ(wc.status, WcStatus::kRemAccessErr) << ToName(wc.status);
  EXPECT_EQ(StateOf(b_), QpState::kErr);
  EXPECT_EQ(StateOf(a_), QpState::kErr) << "the responder NAKed and went to ERR";
  EXPECT_EQ(dev_->DeallocMw(mw), 0);
}

TEST_P(MemoryWindow, AccessBeyondTheWindowsRightsIsARemoteAccessError) {
  uint32_t r0 = 0;
  MwHandle mw = Alloc(MwType::kType1, &r0);
  const uint32_t rkey = Bind1(mw, Window(kRemoteRead));
  WorkCompletion wc = Remote(WrOpcode::kRdmaWrite, target_.Addr(1024), rkey);
  EXPECT_EQ(wc.status, WcStatus::kRemAccessErr) << ToName(wc.status);
  EXPECT_EQ(dev_->DeallocMw(mw), 0);
}

TEST_P(MemoryWindow, AtomicWithoutTheWindowsAtomicRightIsARemoteAccessError) {
  uint32_t r0 = 0;
  MwHandle mw = Alloc(MwType::kType1, &r0);
  const uint32_t rkey = Bind1(mw, Window());  // READ and WRITE, no ATOMIC
  WorkCompletion wc = Remote(WrOpcode::kAtomicFetchAndAdd, target_.Addr(1024), rkey, 8);
  EXPECT_EQ(wc.status, WcStatus::kRemAccessErr) << ToName(wc.status);
  EXPECT_EQ(dev_->DeallocMw(mw), 0);
}

TEST_P(MemoryWindow, Type1BindChecksAtThePost) {
  uint32_t r1 = 0, r2 = 0;
  MwHandle t1 = Alloc(MwType::kType1, &r1);
  MwHandle t2 = Alloc(MwType::kType2, &r2);
  MwBind bind;
  bind.send_flags = send_flag::kSignaled;
  bind.bind_info = Window();
  uint32_t rkey = 0;
  EXPECT_EQ(dev_->BindMw(a_, t2, bind, &rkey), EINVAL) << "ibv_bind_mw is for type 1";
  bind.bind_info.mw_access_flags |= access::kZeroBased;
  EXPECT_EQ(dev_->BindMw(a_, t1, bind, &rkey), EINVAL) << "rxe: no zero-based type 1";
  bind.bind_info = Window();
  bind.bind_info.mr = MrHandle{};
  EXPECT_EQ(dev_->BindMw(a_, t1, bind, &rkey), EINVAL) << "no region";
  PdHandle pd2;
  Buffer other = RegInOtherPd(4096, kLocalWrite | kMwBind, &pd2);
  if (HasFailure()) return;
  bind.bind_info.mr = other.mr;
  bind.bind_info.addr = other.Addr(0);
  EXPECT_EQ(dev_->BindMw(a_, t1, bind, &rkey), EPERM) << "libibverbs: the MR of another PD";
  bind.bind_info = Window();
  QpHandle ud = Qp(QpType::kUd);
  Drive(QpType::kUd, ud, QpState::kRts);
  EXPECT_EQ(dev_->BindMw(ud, t1, bind, &rkey), EINVAL) << "providers/rxe: RC and UC only";
  EXPECT_TRUE(Drain(cq_).empty()) << "nothing was posted";
  EXPECT_EQ(dev_->DeregMr(other.mr), 0);
  EXPECT_EQ(dev_->DeallocPd(pd2), 0);
  EXPECT_EQ(dev_->DeallocMw(t1), 0);
  EXPECT_EQ(dev_->DeallocMw(t2), 0);
}

TEST_P(MemoryWindow, BindToARegionWithoutMwBindCompletesWithBindError) {
  uint32_t r0 = 0;
  MwHandle mw = Alloc(MwType::kType1, &r0);
  Buffer plain = Reg(4096, kLocalWrite | kRemoteWrite);
  MwBind bind = BindToRegionWithoutMwBind(plain);
  uint32_t rkey = 0;
  ASSERT_EQ(dev_->BindMw(a_, mw, bind, &rkey), 0) << "checked when the WR runs";
  OneWc(cq_, 5, WcStatus::kMwBindErr);
  EXPECT_EQ(StateOf(a_), QpState::kErr);
  // The window kept its rkey but the program's copy moved on at the post (ibv_bind_mw(3):
  // "fix the mw structure if the subsequent CQE ... indicates a failure"): the next bind
  // names a key the window does not have and fails too.
  EXPECT_EQ(rkey, NextKey(r0));
  auto [c, d] = ConnectedPair(QpType::kRc);
  (void)d;
  bind.bind_info = Window();
  ASSERT_EQ(dev_->BindMw(c, mw, bind, &rkey), 0);
  auto wcs = WaitWc(cq_, 1);
  ASSERT_EQ(wcs.size(), 1u);
  EXPECT_EQ(wcs[0].status, WcStatus::kMwBindErr) << ToName(wcs[0].status);
  EXPECT_EQ(dev_->DeallocMw(mw), 0);
}

TEST_P(MemoryWindow, FailingBindHasMovedTheQpToErrWhenThePostReturnsWhereTheDeviceRunsItThere) {
  // Differential seed 20261206 sequences 620, 872. rxe (Behaviour::post_runs_requester) runs
  // the requester inside ibv_post_send: the failing bind has moved the QP to ERR before the
  // next verb, so a receive posted right after it is posted in ERR, where rxe keeps it until
  // the next move to ERR (Behaviour::recv_in_err_waits). Elsewhere the receive is posted in
  // RTS and flushed when the bind fails.
  const Behaviour& b = GetParam().behaviour;
  uint32_t r0 = 0;
  MwHandle mw = Alloc(MwType::kType1, &r0);
  Buffer plain = Reg(4096, kLocalWrite | kRemoteWrite);
  MwBind bind = BindToRegionWithoutMwBind(plain);
  uint32_t rkey = 0;
  ASSERT_EQ(dev_->BindMw(a_, mw, bind, &rkey), 0);
  size_t bad = 99;
  ASSERT_EQ(dev_->PostRecv(a_, {Recv(10, {src_.At(0, 64)})}, &bad), 0);
  auto wcs = Drain(cq_, kSecond / 5);
  ASSERT_GE(wcs.size(), 1u);
  EXPECT_EQ(wcs[0].status, WcStatus::kMwBindErr) << ToName(wcs[0].status);
  const bool waits = b.post_runs_requester && b.recv_in_err_waits;
  if (waits) {
    EXPECT_EQ(wcs.size(), 1u) << "the receive posted in ERR was flushed";
    ASSERT_EQ(dev_->ModifyQp(a_, StateOnly(QpState::kErr), attr::kState), 0);
    wcs = WaitWc(cq_, 1);
    ASSERT_EQ(wcs.size(), 1u);
  } else {
    ASSERT_EQ(wcs.size(), 2u);
    wcs.erase(wcs.begin());
  }
  EXPECT_EQ(wcs[0].wr_id, 10u);
  EXPECT_EQ(wcs[0].status, WcStatus::kWrFlushErr);
  EXPECT_EQ(dev_->DeallocMw(mw), 0);
}

TEST_P(MemoryWindow, BindBehindANakedWriteOfOnePostIsFlushedUnexecutedWhereTheDeviceAnswersFirst) {
  // Differential seed 20261207 sequence 1176. One post: an RDMA WRITE past the end of the
  // peer's region (NAK remote access), then a type 2 bind. rxe (Behaviour::
  // post_answers_each_message) runs the requester in the post and receives each request in
  // the sender's context (rxe_loopback, or the softirq at the transmit's local_bh_enable):
  // the NAK has moved the QP to ERR before the requester reaches the bind, which is flushed
  // and never executed, so the region has no window bound and can be deregistered.
  // Elsewhere the bind may have run before the NAK came back; its completion is flushed.
  const Behaviour& b = GetParam().behaviour;
  uint32_t r0 = 0;
  MwHandle mw = Alloc(MwType::kType2, &r0);
  SendWr write = RdmaTo(1, WrOpcode::kRdmaWrite, {src_.At(0, 8)}, target_, 8192);
  write.send_flags |= send_flag::kSignaled;
  SendWr bind = BindWr(mw, NextKey(r0), Window());
  bind.send_flags |= send_flag::kSignaled;
  size_t bad = 99;
  ASSERT_EQ(dev_->PostSend(a_, {write, bind}, &bad), 0);
  ExpectTwo(WaitWc(cq_, 2), {1, WcStatus::kRemAccessErr}, {78, WcStatus::kWrFlushErr});
  EXPECT_EQ(StateOf(a_), QpState::kErr);
  if (b.post_answers_each_message) {
    EXPECT_EQ(dev_->DeregMr(target_.mr), 0) << "the bind never ran: no window is bound";
  }
  EXPECT_EQ(dev_->DeallocMw(mw), 0);
}

TEST_P(MemoryWindow, BindPastTheRegionCompletesWithBindError) {
  uint32_t r0 = 0;
  MwHandle mw = Alloc(MwType::kType2, &r0);
  MwBindInfo info = Window();
  info.addr = target_.Addr(8192 - 512);  // 1024 bytes from here run 512 past the region
  WorkCompletion wc = Bind2(mw, NextKey(r0), info);
  EXPECT_EQ(wc.status, WcStatus::kMwBindErr) << ToName(wc.status);
  EXPECT_EQ(StateOf(a_), QpState::kErr);
  EXPECT_EQ(dev_->DeallocMw(mw), 0);
}

TEST_P(MemoryWindow, Type2BindOfLengthZeroOrOfABoundWindowFails) {
  uint32_t r0 = 0;
  MwHandle mw = Alloc(MwType::kType2, &r0);
  MwBindInfo empty = Window();
  empty.length = 0;
  EXPECT_EQ(Bind2(mw, NextKey(r0), empty).status, WcStatus::kMwBindErr) << "o10-37.2.40";
  // The backend moved the window's rkey on at the post, as ibv_bind_mw does for type 1
  // (hw/verbs_device_mw.cc): after the failure it names a key the window does not have.
  auto [c, d] = ConnectedPair(QpType::kRc);
  (void)d;
  EXPECT_EQ(PostOne(c, BindWr(mw, NextKey(NextKey(r0)), Window())).status,
            WcStatus::kMwBindErr);
  auto [e, f] = ConnectedPair(QpType::kRc);
  (void)f;
  uint32_t r1 = 0;
  MwHandle bound = Alloc(MwType::kType2, &r1);
  ASSERT_EQ(PostOne(e, BindWr(bound, NextKey(r1), Window())).status, WcStatus::kSuccess);
  WorkCompletion wc = PostOne(e, BindWr(bound, NextKey(NextKey(r1)), Window()));
  EXPECT_EQ(wc.status, WcStatus::kMwBindErr) << "o10-37.2.30: a bound type 2 window";
  EXPECT_EQ(StateOf(e), QpState::kErr);
  EXPECT_EQ(dev_->DeallocMw(mw), 0);
  EXPECT_EQ(dev_->DeallocMw(bound), 0);
}

TEST_P(MemoryWindow, Type2WindowIsFreeUntilBound) {
  uint32_t r0 = 0;
  MwHandle mw = Alloc(MwType::kType2, &r0);
  WorkCompletion wc = Remote(WrOpcode::kRdmaWrite, target_.Addr(1024), r0);
  EXPECT_EQ(wc.status, WcStatus::kRemAccessErr) << "a type 2 window is free until bound";
  EXPECT_EQ(dev_->DeallocMw(mw), 0);
}

TEST_P(MemoryWindow, Type2BoundWindowTakesRemoteWrites) {
  uint32_t r0 = 0;
  MwHandle mw = Alloc(MwType::kType2, &r0);
  const uint32_t rkey = NextKey(r0);
  WorkCompletion wc = Bind2(mw, rkey, Window());
  EXPECT_EQ(wc.status, WcStatus::kSuccess) << ToName(wc.status);
  EXPECT_EQ(wc.opcode, WcOpcode::kBindMw);
  std::memset(src_.buf, 0x71, 64);
  wc = Remote(WrOpcode::kRdmaWrite, target_.Addr(1100), rkey);
  EXPECT_EQ(wc.status, WcStatus::kSuccess) << ToName(wc.status);
  EXPECT_EQ(target_.buf[1100], 0x71);
  wc = Remote(WrOpcode::kRdmaWrite, target_.Addr(1100), r0);
  EXPECT_EQ(wc.status, WcStatus::kRemAccessErr) << "the key before the bind is gone";
  EXPECT_EQ(dev_->DeallocMw(mw), 0);
}

TEST_P(MemoryWindow, Type2BindTakesOnlyTheKeyByteOfTheNewRkey) {
  uint32_t r0 = 0;
  MwHandle mw = Alloc(MwType::kType2, &r0);
  ASSERT_EQ(Bind2(mw, 0x12345600u | 0x42, Window()).status, WcStatus::kSuccess);
  WorkCompletion wc = Remote(WrOpcode::kRdmaWrite, target_.Addr(1024), (r0 & ~kKeyByte) | 0x42);
  EXPECT_EQ(wc.status, WcStatus::kSuccess) << "rxe_do_bind_mw: the index stays";
  EXPECT_EQ(dev_->DeallocMw(mw), 0);
}

TEST_P(MemoryWindow, Type2WindowAnswersOnlyOnTheQpThatBoundIt) {
  auto [c, d] = ConnectedPair(QpType::kRc);
  uint32_t rkey = 0;
  MwHandle mw = BoundType2(&rkey);
  ASSERT_NE(rkey, 0u) << "the type 2 bind failed";
  SendWr wr = Send(91, {src_.At(0, 64)});
  wr.opcode = WrOpcode::kRdmaWrite;
  wr.remote_addr = target_.Addr(1024);
  wr.rkey = rkey;
  WorkCompletion wc = PostOne(d, wr);  // arrives at c, not at a
  EXPECT_EQ(wc.status, WcStatus::kRemAccessErr) << ToName(wc.status);
  EXPECT_EQ(StateOf(c), QpState::kErr);
  EXPECT_EQ(StateOf(a_), QpState::kRts);
  wc = Remote(WrOpcode::kRdmaWrite, target_.Addr(1024), rkey);
  EXPECT_EQ(wc.status, WcStatus::kSuccess) << "through a it still works";
  EXPECT_EQ(dev_->DeallocMw(mw), 0);
}

TEST_P(MemoryWindow, ZeroBasedType2WindowTakesOffsets) {
  uint32_t r0 = 0;
  MwHandle mw = Alloc(MwType::kType2, &r0);
  MwBindInfo info = Window();
  info.mw_access_flags |= access::kZeroBased;
  ASSERT_EQ(Bind2(mw, NextKey(r0), info).status, WcStatus::kSuccess);
  std::memset(src_.buf, 0x44, 64);
  WorkCompletion wc = Remote(WrOpcode::kRdmaWrite, 16, NextKey(r0), 8);
  EXPECT_EQ(wc.status, WcStatus::kSuccess) << ToName(wc.status);
  EXPECT_EQ(target_.buf[1024 + 16], 0x44) << "offset 16 from the window's start";
  EXPECT_EQ(dev_->DeallocMw(mw), 0);
}

TEST_P(MemoryWindow, LocalInvalidateFreesAType2WindowForARebind) {
  uint32_t rkey = 0;
  MwHandle mw = BoundType2(&rkey);
  ASSERT_NE(rkey, 0u) << "the type 2 bind failed";
  SendWr inv = InvWr(40, rkey);
  WorkCompletion wc = PostOne(a_, inv);
  EXPECT_EQ(wc.status, WcStatus::kSuccess) << ToName(wc.status);
  EXPECT_EQ(wc.opcode, WcOpcode::kLocalInv);
  // Free again: bound anew with the next key, it opens again.
  const uint32_t rkey2 = NextKey(rkey);
  EXPECT_EQ(Bind2(mw, rkey2, Window()).status, WcStatus::kSuccess);
  wc = Remote(WrOpcode::kRdmaWrite, target_.Addr(1024), rkey2);
  EXPECT_EQ(wc.status, WcStatus::kSuccess) << ToName(wc.status);
  EXPECT_EQ(dev_->DeallocMw(mw), 0);
}

// rxe_bind_mw (kernel) finds the window by the rkey the program names (ibv_mw.rkey,
// passed by providers/rxe as mw_rkey) and fails unless it is the window's current one:
// measured on rxe0 (tools/exec/verbs_mw.c, "rebind naming the allocation's rkey").
TEST_P(MemoryWindow, Type2RebindNamingAStaleRkeyCompletesWithBindError) {
  uint32_t r0 = 0;
  MwHandle mw = Alloc(MwType::kType2, &r0);
  const uint32_t rkey = NextKey(r0);
  SendWr bind = BindWr(mw, rkey, Window());
  bind.mw_rkey = r0;  // what ibv_mw.rkey holds after ibv_alloc_mw
  ASSERT_EQ(PostOne(a_, bind).status, WcStatus::kSuccess);
  ASSERT_EQ(PostOne(a_, InvWr(40, rkey)).status, WcStatus::kSuccess);
  // The program did not store `rkey` in its ibv_mw: it still names the window by r0.
  SendWr rebind = BindWr(mw, NextKey(rkey), Window());
  rebind.mw_rkey = r0;
  const WorkCompletion wc = PostOne(a_, rebind);
  EXPECT_EQ(wc.status, WcStatus::kMwBindErr) << ToName(wc.status);
  EXPECT_EQ(StateOf(a_), QpState::kErr);
  EXPECT_EQ(dev_->DeallocMw(mw), 0);
}

TEST_P(MemoryWindow, Type2RebindNamingTheCurrentRkeySucceeds) {
  uint32_t r0 = 0;
  MwHandle mw = Alloc(MwType::kType2, &r0);
  const uint32_t rkey = NextKey(r0);
  SendWr bind = BindWr(mw, rkey, Window());
  bind.mw_rkey = r0;
  ASSERT_EQ(PostOne(a_, bind).status, WcStatus::kSuccess);
  ASSERT_EQ(PostOne(a_, InvWr(40, rkey)).status, WcStatus::kSuccess);
  SendWr rebind = BindWr(mw, NextKey(rkey), Window());
  rebind.mw_rkey = rkey;  // the program stored the first bind's rkey, as ibv_bind_mw(3) asks
  EXPECT_EQ(PostOne(a_, rebind).status, WcStatus::kSuccess);
  const WorkCompletion wc = Remote(WrOpcode::kRdmaWrite, target_.Addr(1024), NextKey(rkey));
  EXPECT_EQ(wc.status, WcStatus::kSuccess) << ToName(wc.status);
  EXPECT_EQ(dev_->DeallocMw(mw), 0);
}

TEST_P(MemoryWindow, LocalInvalidateThenRemoteUseIsARemoteAccessError) {
  uint32_t rkey = 0;
  MwHandle mw = BoundType2(&rkey);
  ASSERT_NE(rkey, 0u) << "the type 2 bind failed";
  SendWr inv = InvWr(40, rkey);
  ASSERT_EQ(PostOne(a_, inv).status, WcStatus::kSuccess);
  WorkCompletion wc = Remote(WrOpcode::kRdmaWrite, target_.Addr(1024), rkey);
  EXPECT_EQ(wc.status, WcStatus::kRemAccessErr) << ToName(wc.status);
  EXPECT_EQ(dev_->DeallocMw(mw), 0);
}

TEST_P(MemoryWindow, LocalInvalidateOfAType1WindowFails) {
  uint32_t r0 = 0;
  MwHandle mw = Alloc(MwType::kType1, &r0);
  const uint32_t rkey = Bind1(mw, Window());
  SendWr inv = InvWr(41, rkey);
  WorkCompletion wc = PostOne(a_, inv);
  EXPECT_EQ(wc.status, WcStatus::kLocQpOpErr) << ToName(wc.status);
  EXPECT_EQ(StateOf(a_), QpState::kErr);
  EXPECT_EQ(dev_->DeallocMw(mw), 0);
}

TEST_P(MemoryWindow, LocalInvalidateOfARegionOrAStaleKeyFails) {
  auto [c, d] = ConnectedPair(QpType::kRc);
  (void)d;
  SendWr inv = Send(42, {});
  inv.opcode = WrOpcode::kLocalInv;
  inv.imm_data = target_.rkey;  // a region from RegMr
  WorkCompletion wc = PostOne(c, inv);
  EXPECT_EQ(wc.status, WcStatus::kLocQpOpErr) << ToName(wc.status);
  EXPECT_EQ(StateOf(c), QpState::kErr);
  uint32_t r0 = 0;
  MwHandle mw = Alloc(MwType::kType2, &r0);
  ASSERT_EQ(Bind2(mw, NextKey(r0), Window()).status, WcStatus::kSuccess);
  inv.imm_data = r0;  // the key before the bind
  wc = PostOne(a_, inv);
  EXPECT_EQ(wc.status, WcStatus::kLocQpOpErr) << ToName(wc.status);
  EXPECT_EQ(StateOf(a_), QpState::kErr);
  EXPECT_EQ(dev_->DeallocMw(mw), 0);
}

TEST_P(MemoryWindow, SendWithInvalidateReportsTheKeyAndClosesTheWindow) {
  uint32_t rkey = 0;
  MwHandle mw = BoundType2(&rkey);
  ASSERT_NE(rkey, 0u) << "the type 2 bind failed";
  WorkCompletion recv, sent;
  ASSERT_TRUE(SendWithInv(rkey, &recv, &sent));
  EXPECT_EQ(sent.status, WcStatus::kSuccess) << ToName(sent.status);
  EXPECT_EQ(sent.opcode, WcOpcode::kSend);
  EXPECT_EQ(recv.status, WcStatus::kSuccess) << ToName(recv.status);
  EXPECT_EQ(recv.opcode, WcOpcode::kRecv);
  EXPECT_EQ(recv.byte_len, 32u);
  if (GetParam().behaviour.recv_inv_flag_as_ip_csum_ok) {
    EXPECT_EQ(recv.wc_flags & (wc_flag::kWithInv | wc_flag::kIpCsumOk), wc_flag::kIpCsumOk)
        << FormatWcFlags(recv.wc_flags);
  } else {
    EXPECT_TRUE(recv.wc_flags & wc_flag::kWithInv) << FormatWcFlags(recv.wc_flags);
    EXPECT_EQ(recv.imm_data, rkey) << "the invalidated rkey (ibv_wc.invalidated_rkey)";
  }
  WorkCompletion wc = Remote(WrOpcode::kRdmaWrite, target_.Addr(1024), rkey);
  EXPECT_EQ(wc.status, WcStatus::kRemAccessErr) << ToName(wc.status);
  EXPECT_EQ(dev_->DeallocMw(mw), 0);
}

TEST_P(MemoryWindow, SendWithInvalidateOfAType1WindowFailsAtTheReceiver) {
  uint32_t r0 = 0;
  MwHandle mw = Alloc(MwType::kType1, &r0);
  const uint32_t rkey = Bind1(mw, Window());
  QpAttr before, after;
  QpInitAttr init;
  ASSERT_EQ(dev_->QueryQp(a_, &before, &init), 0);
  WorkCompletion recv, sent;
  ASSERT_TRUE(SendWithInv(rkey, &recv, &sent));
  EXPECT_EQ(recv.status, WcStatus::kRemInvReqErr) << "o10-37.2.26 (class J)";
  EXPECT_EQ(sent.status, WcStatus::kSuccess) << "rxe ACKs the SEND";
  EXPECT_EQ(StateOf(a_), QpState::kErr);
  // Differential seed 20261207 sequence 1361 (Behaviour::failed_invalidate_keeps_psn): rxe
  // fails the request before it moves the expected PSN past it.
  ASSERT_EQ(dev_->QueryQp(a_, &after, &init), 0);
  const bool keeps = GetParam().behaviour.failed_invalidate_keeps_psn;
  EXPECT_EQ(after.rq_psn, keeps ? before.rq_psn : (before.rq_psn + 1) & 0xffffff);
  EXPECT_EQ(StateOf(b_), QpState::kRts);
  EXPECT_EQ(dev_->DeallocMw(mw), 0);
}

TEST_P(MemoryWindow, Type1BindOfLengthZeroUnbinds) {
  uint32_t r0 = 0;
  MwHandle mw = Alloc(MwType::kType1, &r0);
  uint32_t rkey = Bind1(mw, Window());
  EXPECT_EQ(dev_->DeregMr(target_.mr), GetParam().behaviour.dereg_mr_bound_mw_errno);
  MwBindInfo none = Window();
  none.length = 0;
  rkey = Bind1(mw, none);
  WorkCompletion wc = Remote(WrOpcode::kRdmaWrite, target_.Addr(1024), rkey);
  EXPECT_EQ(wc.status, WcStatus::kRemAccessErr) << ToName(wc.status);
  EXPECT_EQ(dev_->DeallocMw(mw), 0);
}

TEST_P(MemoryWindow, UnsignaledBindCompletesSilently) {
  uint32_t r0 = 0;
  MwHandle mw = Alloc(MwType::kType1, &r0);
  MwBind bind;
  bind.bind_info = Window();
  uint32_t rkey = 0;
  ASSERT_EQ(dev_->BindMw(a_, mw, bind, &rkey), 0);
  std::memset(src_.buf, 0x19, 64);
  WorkCompletion wc = Remote(WrOpcode::kRdmaWrite, target_.Addr(1024), rkey);
  EXPECT_EQ(wc.status, WcStatus::kSuccess) << ToName(wc.status);
  EXPECT_EQ(wc.wr_id, 90u) << "no completion of the bind came first";
  EXPECT_EQ(target_.buf[1024], 0x19);
  EXPECT_EQ(dev_->DeallocMw(mw), 0);
}

TEST_P(MemoryWindow, DeallocOfABoundWindowClosesIt) {
  uint32_t rkey = 0;
  MwHandle mw = BoundType2(&rkey);
  ASSERT_NE(rkey, 0u) << "the type 2 bind failed";
  const Behaviour& b = GetParam().behaviour;
  EXPECT_EQ(dev_->DeregMr(target_.mr), b.dereg_mr_bound_mw_errno)
      << "a window is bound to the region";
  // Nor is it re-registered (where the device re-registers at all: rxe has no rereg).
  uint8_t* buf = nullptr;
  uint32_t lkey = 0, rkey2 = 0;
  EXPECT_EQ(dev_->ReregMr(target_.mr, rereg_flag::kChangeAccess, {}, 0, kLocalWrite | kMwBind,
                          &buf, &lkey, &rkey2),
            b.rereg_mr_errno ? b.rereg_mr_errno : b.dereg_mr_bound_mw_errno);
  EXPECT_EQ(dev_->DeallocMw(mw), 0) << "a bound window can be deallocated";
  WorkCompletion wc = Remote(WrOpcode::kRdmaWrite, target_.Addr(1024), rkey);
  EXPECT_EQ(wc.status, WcStatus::kRemAccessErr) << ToName(wc.status);
  EXPECT_EQ(dev_->DeregMr(target_.mr), 0) << "no window is bound any more";
}

// A BIND_MW behind a SEND still waiting for its ACK completes in order: when the QP enters
// ERR first, both are flushed (rxe_comp.c flush_send_queue: WR_FLUSH_ERR for every WQE left,
// also one the requester already ran), not the bind SUCCESS. Differential seed 1101, 52.
TEST_P(MemoryWindow, BindBehindAnUnacknowledgedSendIsFlushedWithIt) {
  uint32_t r0 = 0;
  MwHandle mw = Alloc(MwType::kType2, &r0);
  size_t bad = 0;
  // b has no receive: a's SEND meets RNR NAKs and retries (rnr_retry 7) until the modify.
  ASSERT_EQ(dev_->PostSend(a_, {Send(70, {src_.At(0, 32)}), BindWr(mw, NextKey(r0), Window())},
                           &bad),
            0);
  EXPECT_TRUE(Drain(cq_, kSecond / 20).empty()) << "the SEND is not acknowledged";
  ASSERT_EQ(dev_->ModifyQp(a_, StateOnly(QpState::kErr), attr::kState), 0);
  ExpectTwo(WaitWc(cq_, 2), {70, WcStatus::kWrFlushErr}, {78, WcStatus::kWrFlushErr});
  EXPECT_EQ(dev_->DeallocMw(mw), 0);
}

// A LOCAL_INV waits behind a WRITE to a silent peer (rxe: the local invalidate fence,
// Behaviour::local_inv_waits_for_all), on a CQ the QP's receive shares. The WRITE's transport
// timer runs out (retry_cnt 0): rxe_comp.c do_complete retires it and runs the fenced
// requester before COMPST_ERROR's rxe_qp_error, so the LOCAL_INV executes (the window is
// free again) and the completer is scheduled ahead of the responder: the send queue is
// flushed first, the LOCAL_INV WR_FLUSH_ERR too. A failed LOCAL_INV (a type 1 window) gives
// the same order: differential seed 20261249 sequence 604, rxe 3 of 3. A BIND_MW between the
// two keeps the LOCAL_INV fenced (do_complete moves the consumer index to the bind only).
// Behind a LOCAL_INV that ran, the requester goes on before the flush: a WRITE behind it is
// sent (sq_psn moves past it; probes fenced-inv-*, rxe 2 of 2 each), and flushed after it.
TEST_P(MemoryWindow, AnInvalidateFencedBehindATimedOutWriteRunsBeforeTheFlush) {
  BringUpParams p;
  p.timeout = 11;  // 8.4 ms
  p.retry_cnt = 0;
  const QpHandle qa = RcTowardsPeerInErr(cq_, p);
  const QpHandle silent = Qp(QpType::kRc, 16, 16, 2, false, cq_);  // stays in RESET
  if (HasFailure()) return;
  uint32_t r0 = 0, r1 = 0, r3 = 0;
  MwHandle mw2 = Alloc(MwType::kType2, &r0);
  MwHandle mw1 = Alloc(MwType::kType1, &r1);
  MwHandle mw3 = Alloc(MwType::kType2, &r3);
  const uint32_t rkey = NextKey(r0);
  ASSERT_EQ(PostOne(qa, BindWr(mw2, rkey, Window())).status, WcStatus::kSuccess);
  const Behaviour& b = GetParam().behaviour;
  struct Case {
    const char* what;
    uint32_t key;
    bool bind_between;  // a BIND_MW (wr 3) between the WRITE and the LOCAL_INV
    bool write_behind = false;  // a WRITE (wr 4) behind the LOCAL_INV
  };
  std::vector<Case> cases = {{"a bound type 2 window, a WRITE behind", rkey, false, true}};
  // Where a LOCAL_INV is not fenced, it runs at the post: one of a type 1 window fails then.
  if (b.local_inv_waits_for_all) {
    cases.push_back({"a type 1 window (fails)", r1, false});
    // The bind runs at once but retires only after the WRITE: the consumer index stops at it,
    // so the LOCAL_INV stays fenced, nothing runs, and the QP's usual flush order holds.
    cases.push_back({"a type 1 window behind a bind", r1, true});
  }
  size_t bad = 0;
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    ASSERT_EQ(dev_->PostRecv(qa, {Recv(10, {target_.At(0, 64)})}, &bad), 0);
    SendWr write = Send(1, {src_.At(0, 8)});
    write.opcode = WrOpcode::kRdmaWrite;
    write.remote_addr = target_.Addr(0);
    write.rkey = target_.rkey;
    std::vector<SendWr> wrs = {write};
    if (c.bind_between) {
      SendWr bind = BindWr(mw3, NextKey(r3), Window());
      bind.wr_id = 3;
      wrs.push_back(bind);
    }
    wrs.push_back(InvWr(2, c.key));
    if (c.write_behind) {
      wrs.push_back(write);
      wrs.back().wr_id = 4;
    }
    ASSERT_EQ(dev_->PostSend(qa, wrs, &bad), 0);
    std::vector<std::pair<uint64_t, WcStatus>> want = {{1, WcStatus::kRetryExcErr}};
    if (c.bind_between) {
      if (b.rc_flushes_rq_first) want.push_back({10, WcStatus::kWrFlushErr});
      want.push_back({3, WcStatus::kWrFlushErr});
      want.push_back({2, WcStatus::kWrFlushErr});
      if (!b.rc_flushes_rq_first) want.push_back({10, WcStatus::kWrFlushErr});
    } else {
      want.push_back({2, WcStatus::kWrFlushErr});
      if (c.write_behind) want.push_back({4, WcStatus::kWrFlushErr});
      want.push_back({10, WcStatus::kWrFlushErr});
    }
    const auto wcs = WaitWc(cq_, static_cast<int>(want.size()));
    ASSERT_EQ(wcs.size(), want.size());
    for (size_t i = 0; i < want.size(); ++i) {
      EXPECT_EQ(wcs[i].wr_id, want[i].first) << i;
      EXPECT_EQ(wcs[i].status, want[i].second) << i << " " << ToName(wcs[i].status);
    }
    EXPECT_TRUE(Drain(cq_).empty());
    if (c.write_behind) {
      QpAttr attr;
      QpInitAttr init;
      ASSERT_EQ(dev_->QueryQp(qa, &attr, &init), 0);
      EXPECT_EQ(attr.sq_psn, (p.sq_psn + 2) & 0xffffff) << "the WRITE behind was sent";
    }
    ASSERT_EQ(dev_->ModifyQp(qa, StateOnly(QpState::kReset), attr::kState), 0);
    ASSERT_EQ(ToRtsWith(*dev_, p, qa, silent), 0);  // a QP in RESET drops every request
  }
  // The type 2 window was invalidated by the LOCAL_INV that was flushed: it binds again.
  EXPECT_EQ(PostOne(qa, BindWr(mw2, NextKey(rkey), Window())).status, WcStatus::kSuccess)
      << "the window is still bound: the LOCAL_INV did not run";
  EXPECT_EQ(dev_->DeallocMw(mw1), 0);
  EXPECT_EQ(dev_->DeallocMw(mw2), 0);
  EXPECT_EQ(dev_->DeallocMw(mw3), 0);
}

// As above, with the QP moved to SQD while the WRITE is outstanding. rxe_comp.c do_complete
// runs the fenced requester in DRAIN: rxe_req.c req_next_wqe finds the consumer index at the
// LOCAL_INV, which never started, marks the send queue drained and raises SQ_DRAINED, and
// runs nothing: the window stays bound (its region cannot be deregistered), and the flush
// keeps the QP's usual order. Probes fenced-inv-sqd and fenced-inv-sqd-nonotify, rxe 2 of 2.
TEST_P(MemoryWindow, AnInvalidateFencedBehindATimedOutWriteInSqdStaysUnrun) {
  const Behaviour& b = GetParam().behaviour;
  if (!b.local_inv_waits_for_all) {
    GTEST_SKIP() << "a LOCAL_INV is not fenced behind a WRITE on this device";
  }
  BringUpParams p;
  p.timeout = 11;  // 8.4 ms
  p.retry_cnt = 0;
  const QpHandle qa = RcTowardsPeerInErr(cq_, p);
  if (HasFailure()) return;
  uint32_t r0 = 0;
  MwHandle mw2 = Alloc(MwType::kType2, &r0);
  const uint32_t rkey = NextKey(r0);
  ASSERT_EQ(PostOne(qa, BindWr(mw2, rkey, Window())).status, WcStatus::kSuccess);
  SendWr write = Send(1, {src_.At(0, 8)});
  write.opcode = WrOpcode::kRdmaWrite;
  write.remote_addr = target_.Addr(0);
  write.rkey = target_.rkey;
  size_t bad = 0;
  ASSERT_EQ(dev_->PostSend(qa, {write, InvWr(2, rkey)}, &bad), 0);
  QpAttr sqd = StateOnly(QpState::kSqd);
  sqd.en_sqd_async_notify = true;
  ASSERT_EQ(dev_->ModifyQp(qa, sqd, attr::kState | attr::kEnSqdAsyncNotify), 0);
  EXPECT_EQ(dev_->WaitForAsyncEvent(EventType::kSqDrained, qa, kSecond), 0);
  ExpectTwo(WaitWc(cq_, 2), {1, WcStatus::kRetryExcErr}, {2, WcStatus::kWrFlushErr});
  EXPECT_EQ(StateOf(qa), QpState::kErr);
  // The LOCAL_INV never ran: the window is still bound, so its region cannot go.
  EXPECT_NE(dev_->DeregMr(target_.mr), 0) << "the window was invalidated";
  EXPECT_EQ(dev_->DeallocMw(mw2), 0);
}

// rxe_wqe_is_fenced decides a LOCAL_INV by the local invalidate fence alone, whatever its
// send flags: a FENCE-flagged LOCAL_INV runs although a READ's credit was never returned (a
// READ failed REM_ACCESS_ERR, then ERR -> RTS claiming RTS keeps max_rd_atomic's count short).
// Measured on rxe 2 of 2 (probe fence-inv): the LOCAL_INV of a type 1 window runs and fails.
TEST_P(MemoryWindow, AFenceFlagDoesNotHoldALocalInvalidate) {
  if (!GetParam().behaviour.local_inv_waits_for_all) {
    GTEST_SKIP() << "the device's LOCAL_INV is not under the invalidate fence";
  }
  uint32_t r1 = 0;
  MwHandle mw1 = Alloc(MwType::kType1, &r1);
  Buffer plain = Reg(64, kLocalWrite);  // no remote rights: a READ of it fails
  size_t bad = 0;
  ASSERT_EQ(dev_->PostSend(a_, {RdmaTo(1, WrOpcode::kRdmaRead, {src_.At(0, 8)}, plain, 0)}, &bad),
            0);
  auto wcs = WaitWc(cq_, 1);
  ASSERT_EQ(wcs.size(), 1u);
  ASSERT_EQ(wcs[0].status, WcStatus::kRemAccessErr) << ToName(wcs[0].status);
  ASSERT_EQ(ModifyToRtsClaimingRts(a_), 0);
  SendWr inv = InvWr(2, r1);
  inv.send_flags |= send_flag::kFence;
  ASSERT_EQ(dev_->PostSend(a_, {inv}, &bad), 0);
  OneWc(cq_, 2, WcStatus::kLocQpOpErr);  // none if the FENCE flag held the LOCAL_INV
  EXPECT_EQ(StateOf(a_), QpState::kErr);
  EXPECT_EQ(dev_->DeallocMw(mw1), 0);
}

// SEND_WITH_INV has packet opcodes for RC and XRC only (IBTA Table 38), none for UC: rxe
// accepts the post and its requester completes the WR with LOC_QP_OP_ERR (rxe_req.c
// next_opcode_uc; Behaviour::opcode_checked_by_requester), moving the QP to ERR; a device
// that checks at the post refuses it (EINVAL). Differential seed 1101, sequences 35, 59, 372.
TEST_P(MemoryWindow, SendWithInvalidateOnUcIsRefusedAtPostOrFailsWithLocQpOpErr) {
  auto [qa, qb] = ConnectedPair(QpType::kUc);
  size_t bad = 0;
  ASSERT_EQ(dev_->PostRecv(qb, {Recv(60, {target_.At(0, 512)})}, &bad), 0);
  SendWr send = Send(61, {src_.At(0, 32)});
  send.opcode = WrOpcode::kSendWithInv;
  send.imm_data = target_.rkey;
  if (!GetParam().behaviour.opcode_checked_by_requester) {
    EXPECT_EQ(dev_->PostSend(qa, {send}, &bad), EINVAL);
    EXPECT_TRUE(Drain(cq_).empty());
    return;
  }
  ASSERT_EQ(dev_->PostSend(qa, {send}, &bad), 0);
  OneWc(cq_, 61, WcStatus::kLocQpOpErr);
  EXPECT_EQ(StateOf(qa), QpState::kErr);
  EXPECT_TRUE(Drain(cq_).empty()) << "nothing reached the receive";
}

INSTANTIATE_TEST_SUITE_P(Backends, MemoryWindow, ::testing::ValuesIn(BackendsUnderTest()),
                         [](const ::testing::TestParamInfo<BackendCase>& info) {
                           return info.param.name;
                         });

}  // namespace
}  // namespace qptwin::testing
