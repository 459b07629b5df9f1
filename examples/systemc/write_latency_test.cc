// The model's NIC (model/engine on the platform's slots, the NIC of qptwin::sc::Nic too)
// against the one description of a NIC's latency (model/wire.h contract 4): one signaled
// 8-byte RC WRITE, from the doorbell's arrival at the NIC's MMIO socket to its CQE's write through the NIC's DMA socket, both
// seen by a module of the user's on those sockets (SystemC's time plus the annotated delay
// of each transaction: the engine's time, sc_clock.h contract 7). The engine issues the
// CQE's write when the WQE completes, and the host sees the CQE cqe_ns later
// (model/engine/cq.h contract 5).
//
// The engine counts whole nanoseconds: each of its serializations (the WQE fetch, the
// payload read, the WRITE and the ACK on the wire) rounds up to the next ns, so it may be up
// to 4 ns later than the exact sum in ps, never earlier.
#include <gtest/gtest.h>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>

#include <memory>
#include <string>
#include <vector>

#include "model/model_backend.h"
#include "model/profile.h"
#include "model/sim/platform.h"
#include "model/wire.h"
#include "tests/support/support.h"

namespace {

using qptwin::model::engine::DmaKind;
using qptwin::model::sim::DmaExtension;
using qptwin::model::sim::HostCpu;
using qptwin::model::sim::HostMemory;
using qptwin::model::sim::NicSlot;
using qptwin::model::sim::Platform;

// A pass-through probe: the time (SystemC's + the annotated delay, in ps) at which the last
// transaction of each kind reached it, and how many.
class Probe : public sc_core::sc_module {
 public:
  tlm_utils::simple_target_socket<Probe> in;
  tlm_utils::simple_initiator_socket<Probe> out;
  static uint64_t at_ps[qptwin::model::engine::kNumDmaKinds];
  static int count[qptwin::model::engine::kNumDmaKinds];

  explicit Probe(sc_core::sc_module_name name) : sc_module(name), in("in"), out("out") {
    in.register_b_transport(this, &Probe::BTransport);
  }
  static void Clear() {
    for (int k = 0; k < qptwin::model::engine::kNumDmaKinds; ++k) at_ps[k] = count[k] = 0;
  }

 private:
  void BTransport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay) {
    if (const auto* ext = gp.get_extension<DmaExtension>()) {
      const int k = static_cast<int>(ext->tag.kind);
      at_ps[k] = static_cast<uint64_t>((sc_core::sc_time_stamp() + delay).to_seconds() * 1e12 + 0.5);
      ++count[k];
    }
    out->b_transport(gp, delay);
  }
};
uint64_t Probe::at_ps[qptwin::model::engine::kNumDmaKinds];
int Probe::count[qptwin::model::engine::kNumDmaKinds];

std::vector<std::unique_ptr<Probe>>& Probes() {
  static auto* probes = new std::vector<std::unique_ptr<Probe>>;
  return *probes;
}

const bool kBound = Platform::SetBinder(
    [](int slot, tlm_utils::simple_initiator_socket<NicSlot>& dma, HostMemory::Socket& memory) {
      Probes().push_back(std::make_unique<Probe>(("dma_probe" + std::to_string(slot)).c_str()));
      dma.bind(Probes().back()->in);
      Probes().back()->out.bind(memory);
    });
const bool kMmioBound = Platform::SetMmioBinder(
    [](int slot, HostCpu::Socket& cpu, tlm_utils::simple_target_socket<NicSlot>& nic) {
      Probes().push_back(std::make_unique<Probe>(("mmio_probe" + std::to_string(slot)).c_str()));
      cpu.bind(Probes().back()->in);
      Probes().back()->out.bind(nic);
    });

uint64_t At(DmaKind k) { return Probe::at_ps[static_cast<int>(k)]; }
int Count(DmaKind k) { return Probe::count[static_cast<int>(k)]; }

// One signaled 8-byte RC WRITE between two devices of `profile` (path MTU 1024, rxe's and
// ConnectedSides' default, so one packet): the doorbell's arrival -> the CQE visible, ps.
uint64_t DoorbellToCqePs(const std::string& profile) {
  using namespace qptwin::testing;
  qptwin::model::ModelOptions o;
  o.profile = profile;
  auto [be, a, b] = ConnectedSides(qptwin::model::MakeModelBackend(o));
  a.buf[0] = 42;
  Probe::Clear();
  size_t bad = 0;
  EXPECT_EQ(a.dev->PostSend(a.qp, {WriteWr(a, b, 1, 0, 8)}, &bad), 0);
  const auto wc = Wait(a, a.scq, 1);
  EXPECT_EQ(wc.size(), 1u);
  EXPECT_EQ(b.buf[0], 42);
  EXPECT_EQ(Count(DmaKind::kDoorbell), 1);
  EXPECT_EQ(Count(DmaKind::kCqe), 1);
  const uint64_t cqe_ns = qptwin::model::FindProfile(profile)->timing.nic.cqe_ns;
  return At(DmaKind::kCqe) + cqe_ns * 1000 - At(DmaKind::kDoorbell);  // cq.h contract 5
}

TEST(WriteLatency, TheEnginesDoorbellToCqeIsTheDescribedSum) {
  ASSERT_TRUE(kBound);
  ASSERT_TRUE(kMmioBound);
  for (const char* profile : {"cx6-100g", "cx6-dc"}) {
    const qptwin::model::Timing& t = qptwin::model::FindProfile(profile)->timing;
    const uint64_t described = qptwin::model::WriteDoorbellToCqePs(t, 8, 1024, t.link.switch_hops);
    const uint64_t measured = DoorbellToCqePs(profile);
    EXPECT_GE(measured, described) << profile;
    EXPECT_LE(measured, described + 4000) << profile << ": " << measured << " ps against "
                                          << described << " ps";
  }
}

}  // namespace
