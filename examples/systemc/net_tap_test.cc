// A SystemC user's own module on the verbs-level model's network (model/sim/platform.h
// contract 9): every message between two NICs of a model Backend leaves through its slot's
// `net_out`; here it crosses a tap of ours before the platform's Fabric. The tap sees each
// message (the engine's packet: kind, PSN, size on the wire), adds a latency of its own,
// and can drop one; the model's completion times move by exactly that latency, and a drop
// is a lost packet, which RC's transport timer recovers.
#include <gtest/gtest.h>

#include <systemc>

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "model/engine/packet.h"
#include "model/model_backend.h"
#include "model/sim/platform.h"
#include "tests/support/support.h"

namespace {

using qptwin::model::engine::PacketKind;
using qptwin::model::sim::Fabric;
using qptwin::model::sim::NetLinkIf;
using qptwin::model::sim::NetMessage;
using qptwin::model::sim::NicSlot;
using qptwin::model::sim::Platform;

// Between one slot's net_out and the fabric.
class NetTap : public sc_core::sc_module, public NetLinkIf {
 public:
  sc_core::sc_export<NetLinkIf> in;
  sc_core::sc_port<NetLinkIf> out;
  static sc_core::sc_time latency;
  static int drop_next_writes;                 // drops this many WRITE requests
  static std::map<std::string, int> seen;      // messages by kind
  static uint64_t wire_bytes;
  // SystemC's time plus the message's delay, less the engine's time its last byte left:
  // the Backend's epoch, the same for every message however far the engine runs ahead.
  static std::set<sc_core::sc_time> epochs;

  explicit NetTap(sc_core::sc_module_name name) : sc_module(name), in("in"), out("out") {
    in.bind(*this);
  }

  void Transport(NetMessage& msg) override {
    ++seen[std::string(qptwin::model::engine::ToName(msg.pkt->kind))];
    epochs.insert(sc_core::sc_time_stamp() + msg.delay -
                  sc_core::sc_time(static_cast<double>(msg.leave_ns), sc_core::SC_NS));
    wire_bytes += msg.wire_bytes;
    if (msg.pkt->kind == PacketKind::kWrite && drop_next_writes > 0) {
      --drop_next_writes;
      return;  // contract 9: dropped, so lost
    }
    msg.delay += latency;
    out->Transport(msg);
  }
};
sc_core::sc_time NetTap::latency = sc_core::SC_ZERO_TIME;
int NetTap::drop_next_writes = 0;
std::map<std::string, int> NetTap::seen;
uint64_t NetTap::wire_bytes = 0;
std::set<sc_core::sc_time> NetTap::epochs;

std::vector<std::unique_ptr<NetTap>>& Taps() {
  static auto* taps = new std::vector<std::unique_ptr<NetTap>>;
  return *taps;
}

// Binds each slot's way out through a tap; runs before the first model use of this binary.
const bool kBound = Platform::SetNetBinder([](int slot, NicSlot& nic, Fabric& fabric) {
  Taps().push_back(std::make_unique<NetTap>(("tap" + std::to_string(slot)).c_str()));
  nic.net_out.bind(Taps().back()->in);
  Taps().back()->out.bind(fabric.in(slot));
  fabric.out(slot).bind(nic.net_in);
});

struct Outcome {
  uint64_t ns = 0;
  qptwin::WcStatus status = qptwin::WcStatus::kGeneralErr;
};

// One signaled 8-byte RDMA WRITE (or READ) from mdev0 to mdev1 on cx6-100g: how long until
// its CQE is seen, and its status.
Outcome RunOne(sc_core::sc_time latency, qptwin::WrOpcode op) {
  using namespace qptwin::testing;
  NetTap::latency = latency;
  NetTap::seen.clear();
  NetTap::epochs.clear();
  qptwin::model::ModelOptions o;
  o.profile = "cx6-100g";
  auto [be, a, b] = ConnectedSides(qptwin::model::MakeModelBackend(o));
  a.buf[0] = 42;
  b.buf[64] = 43;
  size_t bad = 0;
  const uint64_t start = be->NowNs();
  const qptwin::SendWr wr = op == qptwin::WrOpcode::kRdmaWrite
                                ? WriteWr(a, b, 1, 0, 8)
                                : RemoteWr(1, op, a.At(64, 8), b, 64);
  EXPECT_EQ(a.dev->PostSend(a.qp, {wr}, &bad), 0);
  auto wc = Wait(a, a.scq, 1);
  EXPECT_EQ(wc.size(), 1u);
  EXPECT_EQ(b.buf[0], op == qptwin::WrOpcode::kRdmaWrite ? 42 : 0);
  EXPECT_EQ(a.buf[64], op == qptwin::WrOpcode::kRdmaRead ? 43 : 0);
  EXPECT_EQ(NetTap::epochs.size(), 1u) << "a message's delay is not its engine time";
  Outcome out;
  out.ns = be->NowNs() - start;
  if (!wc.empty()) out.status = wc[0].status;
  return out;
}

TEST(NetTap, EveryMessageCrossesTheUsersModuleAndItsLatencyShowsInTheModelsTimes) {
  ASSERT_TRUE(kBound);
  using qptwin::WrOpcode;
  const Outcome plain = RunOne(sc_core::SC_ZERO_TIME, WrOpcode::kRdmaWrite);
  ASSERT_NE(sc_core::sc_find_object("qptwin_platform.tap0"), nullptr);
  EXPECT_EQ(plain.status, qptwin::WcStatus::kSuccess);
  EXPECT_EQ(NetTap::seen["WRITE"], 1);
  EXPECT_EQ(NetTap::seen["ACK"], 1);
  EXPECT_EQ(NetTap::seen.size(), 2u);
  EXPECT_GT(NetTap::wire_bytes, 8u);  // headers and all
  const sc_core::sc_time us(1, sc_core::SC_US);
  // The WRITE crosses slot 0's tap, its ACK slot 1's: 1 us each.
  const Outcome slow = RunOne(us, WrOpcode::kRdmaWrite);
  EXPECT_EQ(slow.ns - plain.ns, 2000u) << "plain " << plain.ns << " ns, with 1 us per hop "
                                       << slow.ns;
  // A READ: the request and its response.
  const Outcome read_plain = RunOne(sc_core::SC_ZERO_TIME, WrOpcode::kRdmaRead);
  EXPECT_EQ(NetTap::seen["READ_REQ"], 1);
  EXPECT_EQ(NetTap::seen["READ_RESP"], 1);
  const Outcome read_slow = RunOne(us, WrOpcode::kRdmaRead);
  EXPECT_EQ(read_slow.ns - read_plain.ns, 2000u) << read_plain.ns << " ns vs " << read_slow.ns;
  // The platform's own Fabric carried every message the taps passed on.
  EXPECT_GE(Platform::Get()->fabric().forwarded(), 8u);
  EXPECT_EQ(Platform::Get()->fabric().dropped(), 0u);
  // Each slot counts what left through its net_out and reached its net_in (the model's
  // DMA counters, ModelDmaCounters).
  EXPECT_EQ(Platform::Get()->slot(0).counters().messages_out,
            Platform::Get()->slot(1).counters().messages_in);
  EXPECT_EQ(Platform::Get()->slot(1).counters().messages_out,
            Platform::Get()->slot(0).counters().messages_in);
  EXPECT_GE(Platform::Get()->slot(0).counters().messages_out, 4u);
}

TEST(NetTap, ADroppedMessageIsLostAndTheTransportTimerResendsIt) {
  ASSERT_TRUE(kBound);
  using qptwin::WrOpcode;
  const Outcome plain = RunOne(sc_core::SC_ZERO_TIME, WrOpcode::kRdmaWrite);
  NetTap::drop_next_writes = 1;
  const Outcome lost = RunOne(sc_core::SC_ZERO_TIME, WrOpcode::kRdmaWrite);
  EXPECT_EQ(NetTap::drop_next_writes, 0);
  EXPECT_EQ(lost.status, qptwin::WcStatus::kSuccess);
  EXPECT_EQ(NetTap::seen["WRITE"], 2);  // the first, dropped, and the retry
  EXPECT_EQ(NetTap::seen["ACK"], 1);
  // support.h's QPs have timeout 14: 4.096 us * 2^14, about 67 ms, before the retry.
  EXPECT_GT(lost.ns, plain.ns + 60'000'000u) << plain.ns << " ns vs " << lost.ns;
}

// Temporal decoupling (model/sim/sc_clock.h contract 7): a message sent while the engine
// runs ahead of SystemC's time carries that offset in its delay, so every message's
// SystemC time plus delay is its engine time less the Backend's epoch.
TEST(NetTap, EveryMessageCarriesTheEnginesTime) {
  ASSERT_TRUE(kBound);
  using namespace qptwin::testing;
  NetTap::latency = sc_core::SC_ZERO_TIME;
  // ibta: no host costs, so nothing brings the kernel up to the engine between waits.
  for (const char* profile : {"ibta", "cx6-100g", "rxe"}) {
    qptwin::model::ModelOptions o;
    o.profile = profile;
    auto [be, a, b] = ConnectedSides(qptwin::model::MakeModelBackend(o));
    NetTap::epochs.clear();
    NetTap::seen.clear();
    for (uint32_t len : {8u, 512u, 2000u, 4000u, 64u}) {
      size_t bad = 0;
      ASSERT_EQ(a.dev->PostSend(a.qp, {WriteWr(a, b, 1, 0, len)}, &bad), 0);
      ASSERT_EQ(a.dev->PostSend(a.qp, {WriteWr(a, b, 2, 0, len)}, &bad), 0);
      ASSERT_EQ(Wait(a, a.scq, 1).size(), 1u);  // ends after the first: the engine may be ahead
      ASSERT_EQ(a.dev->PostSend(a.qp, {WriteWr(a, b, 3, 0, len)}, &bad), 0);
      ASSERT_EQ(Wait(a, a.scq, 2).size(), 2u);
    }
    EXPECT_GE(NetTap::seen["WRITE"], 15) << profile;
    EXPECT_EQ(NetTap::epochs.size(), 1u) << profile << ": a message's delay is not its engine "
                                            "time (the difference is the World's epoch)";
  }
}

}  // namespace
