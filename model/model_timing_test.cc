// The timing model through the public interface: control verbs and host work cost
// simulated time (ControlTiming, HostTiming), CQEs and events arrive late by their costs,
// and everything is deterministic.
#include <gtest/gtest.h>

#include "model/profile.h"
#include "tests/support/support.h"

namespace qptwin::model::testing {
namespace {

using namespace ::qptwin::testing;  // tests/support/support.h

std::unique_ptr<Backend> Cx6(const std::string& name = "cx6-100g") {
  ModelOptions o;
  o.profile = name;
  return MakeModelBackend(o);
}

const Timing& T(const std::string& name = "cx6-100g") { return FindProfile(name)->timing; }

// Lets the device's host finish what it was charged; returns the time then.
uint64_t Settle(Backend& be, Device& d, CqHandle cq) {
  std::vector<WorkCompletion> none;
  EXPECT_EQ(d.WaitForCompletions(cq, 0, 0, &none), 0);
  return be.NowNs();
}

TEST(Timing, ControlVerbsOccupyTheHostForTheirProfileCost) {
  auto be = Cx6();
  Side a = MakeSide(*be, "mdev0");
  uint64_t t0 = Settle(*be, *a.dev, a.scq);
  QpInitAttr init;
  init.pd = a.pd;
  init.send_cq = init.recv_cq = a.scq;
  init.cap = QpCap{16, 16, 1, 1, 0};
  QpHandle qp;
  ASSERT_EQ(a.dev->CreateQp(init, &qp, nullptr), 0);
  EXPECT_EQ(be->NowNs(), t0) << "the clock moves only inside waits";
  uint64_t t1 = Settle(*be, *a.dev, a.scq);
  EXPECT_EQ(t1 - t0, T().control.create_qp_ns);
  ASSERT_EQ(ToInit(a), 0);
  EXPECT_EQ(Settle(*be, *a.dev, a.scq) - t1, T().control.modify_qp_ns);
  uint64_t t2 = be->NowNs();
  MrHandle mr;
  uint8_t* buf;
  uint32_t lkey, rkey;
  ASSERT_EQ(a.dev->RegMr(a.pd, 10 * 4096, access::kLocalWrite, &mr, &buf, &lkey, &rkey), 0);
  EXPECT_EQ(Settle(*be, *a.dev, a.scq) - t2,
            T().control.reg_mr_ns + 10 * T().control.reg_mr_page_ns);
}

TEST(Timing, EachHostThreadHasItsOwnClock) {
  // timing.h contract 4: posts made by two simulated host threads overlap; by one, queue.
  auto be = Cx6();
  Side a = MakeSide(*be, "mdev0");
  ASSERT_EQ(ToInit(a), 0);
  const uint64_t t0 = Settle(*be, *a.dev, a.scq);
  uint64_t free0 = 0, free1 = 0;
  ASSERT_EQ(a.dev->UseHostThread(0, &free0), 0);
  EXPECT_EQ(free0, t0);
  // A QP below RTS refuses the post but the call still costs its time (posting rules).
  const uint64_t post = T().host.post_call_ns + T().host.post_wr_ns;
  SendWr w = Wr(1, WrOpcode::kRdmaWrite, {a.At(0, 8)}, send_flag::kSignaled);
  (void)a.dev->PostSend(a.qp, {w}, nullptr);
  ASSERT_EQ(a.dev->UseHostThread(0, &free0), 0);
  ASSERT_EQ(a.dev->UseHostThread(1, &free1), 0);
  EXPECT_EQ(free1, t0) << "a thread not used yet is idle";
  (void)a.dev->PostSend(a.qp, {w}, nullptr);
  ASSERT_EQ(a.dev->UseHostThread(1, &free1), 0);
  EXPECT_EQ(free1 - t0, free0 - t0);
  ASSERT_EQ(a.dev->UseHostThread(0, nullptr), 0);
  (void)a.dev->PostSend(a.qp, {w}, nullptr);
  ASSERT_EQ(a.dev->UseHostThread(0, &free0), 0);
  EXPECT_EQ(free0 - t0, 2 * (free1 - t0)) << "thread 0's second post queues behind its first";
  EXPECT_GE(free1 - t0, post);
  EXPECT_EQ(a.dev->UseHostThread(-1, nullptr), EINVAL);
  EXPECT_EQ(a.dev->UseHostThread(4096, nullptr), EINVAL);
}

TEST(Timing, AFailedModifyCostsNothing) {
  auto be = Cx6();
  Side a = MakeSide(*be, "mdev0");
  uint64_t t0 = Settle(*be, *a.dev, a.scq);
  QpAttr at;
  at.qp_state = QpState::kRts;  // RESET -> RTS is illegal
  EXPECT_EQ(a.dev->ModifyQp(a.qp, at, attr::kState), EINVAL);
  EXPECT_EQ(Settle(*be, *a.dev, a.scq), t0);
}

// Post one signaled 8-byte inline WRITE on a connected cx6 pair; the time to its CQE.
uint64_t InlineWriteRoundTrip(const std::string& profile, bool inl) {
  auto [be, a, b] = ConnectedSides(Cx6(profile));
  Settle(*be, *b.dev, b.scq);
  uint64_t t0 = Settle(*be, *a.dev, a.scq);
  SendWr w = Wr(1, WrOpcode::kRdmaWrite, {a.At(0, 8)},
                send_flag::kSignaled | (inl ? send_flag::kInline : 0));
  w.remote_addr = b.Addr(0);
  w.rkey = b.rkey;
  EXPECT_EQ(a.dev->PostSend(a.qp, {w}, nullptr), 0);
  Wait(a, a.scq, 1);
  return be->NowNs() - t0;
}

TEST(Timing, WriteRoundTripIsTheSumOfItsParts) {
  const Timing& t = T();
  // host post + doorbell + tx + wire(106 B) + cable + rx + ACK + wire(86 B) + cable + rx +
  // CQE write + the host consuming the CQE. Serializations round up to whole ns.
  uint64_t expect = t.host.post_call_ns + t.host.post_wr_ns + t.nic.doorbell_ns +
                    t.nic.tx_latency_ns + 9 + t.link.propagation_ns + t.nic.rx_latency_ns +
                    t.nic.ack_ns + 7 + t.link.propagation_ns + t.nic.rx_latency_ns +
                    t.nic.cqe_ns + t.host.poll_cqe_ns;
  EXPECT_NEAR(static_cast<double>(InlineWriteRoundTrip("cx6-100g", true)),
              static_cast<double>(expect), 2.0);
}

TEST(Timing, InlineSkipsTheWqeAndPayloadFetches) {
  uint64_t with = InlineWriteRoundTrip("cx6-100g", true);
  uint64_t without = InlineWriteRoundTrip("cx6-100g", false);
  // Two PCIe read round trips (WQE, payload) plus 64 + 8 bytes at the PCIe rate.
  EXPECT_NEAR(static_cast<double>(without - with), 2.0 * T().nic.pcie_read_ns, 5.0);
}

// A list of three WRITEs whose third is refused (`bad_third`: more SGEs than any device
// grants), or three valid ones: the time to the first CQE.
uint64_t FirstOfThreeWrites(bool bad_third) {
  auto [be, a, b] = ConnectedSides(Cx6());
  Settle(*be, *b.dev, b.scq);
  uint64_t t0 = Settle(*be, *a.dev, a.scq);
  std::vector<SendWr> wrs;
  for (uint64_t i = 0; i < 3; ++i) {
    SendWr w = Wr(i, WrOpcode::kRdmaWrite, {a.At(0, 8)}, send_flag::kSignaled);
    for (int k = 0; i == 2 && bad_third && k < 1000; ++k) w.sg_list.push_back(a.At(8, 8));
    w.remote_addr = b.Addr(0);
    w.rkey = b.rkey;
    wrs.push_back(w);
  }
  size_t bad = 0;
  EXPECT_EQ(a.dev->PostSend(a.qp, wrs, &bad), bad_third ? EINVAL : 0);
  if (bad_third) EXPECT_EQ(bad, 2u);
  Wait(a, a.scq, 1);
  return be->NowNs() - t0;
}

TEST(Timing, TheNicFetchesTheWqesAPostQueuedNotEveryWrItWasGiven) {
  // timing.h contract 2, engine/doorbell_port.h contract 3: the host is charged for the
  // three WRs it was handed either way; the NIC's fetch after the ring reads the WQEs the
  // ring made known (two, then three): one 64-byte WQE less at the PCIe rate.
  const uint64_t two = FirstOfThreeWrites(true);
  const uint64_t three = FirstOfThreeWrites(false);
  const double one_wqe_ns = 64.0 * 8 / T().nic.pcie_gbps;
  EXPECT_NEAR(static_cast<double>(three - two), one_wqe_ns, 1.0);
}

// An inline 8-byte WRITE and a second WRITE (refused when `bad_second`: more SGEs than any
// device grants): the time to the first CQE.
uint64_t InlineFirstOfTwo(bool bad_second) {
  auto [be, a, b] = ConnectedSides(Cx6());
  Settle(*be, *b.dev, b.scq);
  uint64_t t0 = Settle(*be, *a.dev, a.scq);
  SendWr first = Wr(1, WrOpcode::kRdmaWrite, {a.At(0, 8)}, send_flag::kSignaled | send_flag::kInline);
  SendWr second = Wr(2, WrOpcode::kRdmaWrite, {a.At(8, 8)}, send_flag::kSignaled);
  for (int k = 0; bad_second && k < 1000; ++k) second.sg_list.push_back(a.At(8, 8));
  for (SendWr* w : {&first, &second}) {
    w->remote_addr = b.Addr(0);
    w->rkey = b.rkey;
  }
  size_t bad = 0;
  EXPECT_EQ(a.dev->PostSend(a.qp, {first, second}, &bad), bad_second ? EINVAL : 0);
  Wait(a, a.scq, 1);
  return be->NowNs() - t0;
}

TEST(Timing, ASingleQueuedInlineWqeRidesTheDoorbell) {
  // BlueFlame (timing.h wqe_by_mmio) as mlx5 decides it: by the WQEs the post queued (one,
  // inline), not the WRs it was handed (two). The list of two valid WRs is fetched instead.
  const uint64_t pushed = InlineFirstOfTwo(true);
  const uint64_t fetched = InlineFirstOfTwo(false);
  const NicTiming& n = T().nic;
  EXPECT_NEAR(static_cast<double>(fetched - pushed), n.pcie_read_ns + 2 * 64.0 * 8 / n.pcie_gbps,
              1.0);
}

TEST(Timing, SwitchHopsAddTheirLatencyBothWays) {
  const LinkTiming& dc = T("cx6-dc").link;
  const LinkTiming& b2b = T().link;
  double extra = 2.0 * (dc.switch_hops * dc.switch_ns +
                        (dc.switch_hops + 1) * dc.propagation_ns - b2b.propagation_ns);
  EXPECT_NEAR(static_cast<double>(InlineWriteRoundTrip("cx6-dc", true) -
                                  InlineWriteRoundTrip("cx6-100g", true)),
              extra, 2.0);
}

TEST(Timing, CompletionEventsCostTheWakeUp) {
  auto be = Cx6();
  SideOptions so;
  Side a = MakeSide(*be, "mdev0", so);
  Side b = MakeSide(*be, "mdev1", so);
  Connect(a, b);
  ChannelHandle ch;
  ASSERT_EQ(a.dev->CreateCompChannel(&ch), 0);
  CqHandle cq;
  ASSERT_EQ(a.dev->CreateCq(16, ch, &cq, nullptr), 0);
  ASSERT_EQ(a.dev->ReqNotifyCq(cq, false), 0);
  QpInitAttr init;
  init.pd = a.pd;
  init.send_cq = init.recv_cq = cq;
  init.cap = QpCap{4, 4, 1, 1, 0};
  QpHandle qp;
  ASSERT_EQ(a.dev->CreateQp(init, &qp, nullptr), 0);
  QpAttr to_init;
  to_init.qp_state = QpState::kInit;
  to_init.port_num = 1;
  ASSERT_EQ(a.dev->ModifyQp(qp, to_init, attr::kState | attr::kPkeyIndex | attr::kPort |
                                             attr::kAccessFlags), 0);
  uint64_t t0 = Settle(*be, *a.dev, a.scq);
  QpAttr err;
  err.qp_state = QpState::kErr;
  ASSERT_EQ(a.dev->PostRecv(qp, {Rwr(1, {a.At(0, 8)})}, nullptr), 0);
  ASSERT_EQ(a.dev->ModifyQp(qp, err, attr::kState), 0);  // RESET -> ERR flushes the receive
  CqHandle got;
  ASSERT_EQ(a.dev->GetCqEvent(ch, 1'000'000, &got), 0);
  // The thread first finishes its own verbs (post_recv, the modify command); the flush CQE
  // is long written by then; the event still costs the CQE write + the wake-up.
  EXPECT_EQ(be->NowNs() - t0, T().host.post_call_ns + T().host.post_wr_ns +
                                  T().control.modify_qp_ns + T().nic.cqe_ns +
                                  T().host.event_wakeup_ns);
  a.dev->AckCqEvents(got, 1);
}

TEST(Timing, SameScenarioSameTimes) {
  EXPECT_EQ(InlineWriteRoundTrip("cx6-dc", false), InlineWriteRoundTrip("cx6-dc", false));
}

}  // namespace
}  // namespace qptwin::model::testing
