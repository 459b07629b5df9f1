// A network with contention under the verbs-level model (model/sim/queued_fabric.h): a
// program binds QueuedFabric between the NIC slots instead of the platform's non-blocking
// Fabric (Platform::SetNetBinder). Two NICs then WRITE to a third at once (incast): the
// second message waits at the switch's egress towards the third NIC for the first one's
// serialization, and the completions show it; with the queues off the times are the
// Fabric's.
#include <gtest/gtest.h>

#include <systemc>

#include <iostream>
#include <memory>
#include <vector>

#include "model/model_backend.h"
#include "model/profile.h"
#include "model/sim/platform.h"
#include "model/sim/queued_fabric.h"
#include "model/wire.h"
#include "tests/support/support.h"

namespace {

using qptwin::model::sim::Fabric;
using qptwin::model::sim::NicSlot;
using qptwin::model::sim::Platform;
using qptwin::model::sim::QueuedFabric;

QueuedFabric* the_switch = nullptr;

// Every slot's port on one QueuedFabric; the platform's Fabric stays unbound (and unused).
const bool kBound = Platform::SetNetBinder([](int slot, NicSlot& nic, Fabric&) {
  if (the_switch == nullptr) the_switch = new QueuedFabric("switch", Platform::kSlots);
  nic.net_out.bind(the_switch->in(slot));
  the_switch->out(slot).bind(nic.net_in);
});

constexpr uint32_t kLen = 65536;

// mdev0 and mdev1 each WRITE kLen bytes to mdev2 (or only mdev0 with `both` false), posted
// together: the time until every WRITE has completed.
uint64_t Incast(bool both) {
  using namespace qptwin::testing;
  qptwin::model::ModelOptions o;
  o.profile = "cx6-100g";
  o.devices = 3;
  std::unique_ptr<qptwin::Backend> be = qptwin::model::MakeModelBackend(o);
  SideOptions so;
  so.buf_len = 2 * kLen;
  Side s0 = MakeSide(*be, "mdev0", so), s1 = MakeSide(*be, "mdev1", so);
  Side r0 = MakeSide(*be, "mdev2", so);
  Side r1 = MakeSideOn(r0.dev, so);
  Connect(s0, r0);
  Connect(s1, r1);
  s0.buf[0] = 1;
  s1.buf[0] = 2;
  size_t bad = 0;
  be->Advance(1'000'000);  // the bring-up's verbs are over
  const uint64_t start = be->NowNs();
  EXPECT_EQ(s0.dev->PostSend(s0.qp, {WriteWr(s0, r0, 1, 0, kLen)}, &bad), 0);
  if (both) EXPECT_EQ(s1.dev->PostSend(s1.qp, {WriteWr(s1, r1, 2, 0, kLen)}, &bad), 0);
  for (Side* s : {&s0, &s1}) {
    if (s == &s1 && !both) break;
    auto wc = Wait(*s, s->scq, 1);
    EXPECT_EQ(wc.size(), 1u);
    if (!wc.empty()) EXPECT_EQ(wc[0].status, qptwin::WcStatus::kSuccess);
  }
  EXPECT_EQ(r0.buf[0], 1);
  if (both) EXPECT_EQ(r1.buf[0], 2);
  return be->NowNs() - start;
}

TEST(QueuedFabric, TwoWritesIntoOneNicShareItsCable) {
  ASSERT_TRUE(kBound);
  // The serialization of one kLen-byte WRITE at cx6-100g's rate, headers and all.
  const qptwin::model::Profile* p = qptwin::model::FindProfile("cx6-100g");
  ASSERT_NE(p, nullptr);
  const uint64_t before_queued = 0;
  const uint64_t alone = Incast(false);
  ASSERT_NE(the_switch, nullptr);
  EXPECT_EQ(the_switch->queued(), before_queued) << "one WRITE waited";
  const uint64_t incast = Incast(true);
  EXPECT_EQ(the_switch->queued(), 1u);
  const uint64_t waited_ns = the_switch->waited().value() / sc_core::sc_time(1, sc_core::SC_NS).value();
  // The second WRITE left the switch one serialization after the first: it waited for that
  // less the time its post came later, and completed that much later than one alone.
  const uint64_t wire_ns = qptwin::model::SerializationPs(p->timing.link.gbps, kLen) / 1000;
  EXPECT_GT(waited_ns, wire_ns / 2) << "waited " << waited_ns << " ns, serialization " << wire_ns;
  EXPECT_LT(waited_ns, wire_ns + 1000);
  EXPECT_GE(incast, alone + waited_ns) << "alone " << alone << " ns, incast " << incast;
  EXPECT_LT(incast, alone + waited_ns + 1000) << "alone " << alone << " ns, incast " << incast;
  // Without the queues (the platform's Fabric's timing) the two do not wait for each other.
  the_switch->SetQueueing(false);
  const uint64_t free = Incast(true);
  the_switch->SetQueueing(true);
  EXPECT_EQ(the_switch->queued(), 1u);
  EXPECT_LT(free, alone + wire_ns / 2) << "alone " << alone << " ns, without queues " << free;
  std::cout << "64 KiB WRITEs on cx6-100g: one alone " << alone << " ns; two into one NIC "
            << incast << " ns (the second waited " << waited_ns << " ns; serialization "
            << wire_ns << " ns); without the queues " << free << " ns\n";
  EXPECT_EQ(the_switch->dropped(), 0u);
  EXPECT_EQ(Platform::Get()->fabric().forwarded(), 0u) << "the platform's Fabric is not bound";
}

}  // namespace
