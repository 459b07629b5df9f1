// Temporal decoupling seen from a user's interconnect (model/sim/sc_clock.h contract 7,
// platform.h contract 2): the engine runs up to a quantum ahead of SystemC's time and a wait
// may end there, so a transaction goes out at a kernel time behind the engine's, annotated
// with the offset. A monitor between the NIC slots and host memory checks that every
// transaction's SystemC time plus its delay is the engine's time of its DmaExtension (less
// the World's fixed epoch), for the DMA a Step issues and for the WQE fetch a post issues
// between waits alike.
#include <gtest/gtest.h>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>

#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "model/model_backend.h"
#include "model/sim/platform.h"
#include "tests/support/support.h"

namespace {

using qptwin::model::sim::DmaExtension;
using qptwin::model::sim::HostMemory;
using qptwin::model::sim::NicSlot;
using qptwin::model::sim::Platform;

// Forwards every transaction; records (SystemC time + delay) - engine time, and the delay.
class SkewMonitor : public sc_core::sc_module {
 public:
  tlm_utils::simple_target_socket<SkewMonitor> in;
  tlm_utils::simple_initiator_socket<SkewMonitor> out;
  static std::vector<int64_t> skews;
  static uint64_t annotated;  // transactions that carried a non-zero offset

  explicit SkewMonitor(sc_core::sc_module_name name) : sc_module(name), in("in"), out("out") {
    in.register_b_transport(this, &SkewMonitor::BTransport);
  }

 private:
  void BTransport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay) {
    if (const auto* ext = gp.get_extension<DmaExtension>()) {
      const auto at_ns = static_cast<int64_t>(
          (sc_core::sc_time_stamp() + delay).to_seconds() * 1e9 + 0.5);
      skews.push_back(at_ns - static_cast<int64_t>(ext->tag.now_ns));
      if (delay != sc_core::SC_ZERO_TIME) ++annotated;
    }
    out->b_transport(gp, delay);
  }
};
std::vector<int64_t> SkewMonitor::skews;
uint64_t SkewMonitor::annotated = 0;

std::vector<std::unique_ptr<SkewMonitor>> monitors;
const bool kBound = Platform::SetBinder(
    [](int slot, tlm_utils::simple_initiator_socket<NicSlot>& dma, HostMemory::Socket& memory) {
      monitors.push_back(std::make_unique<SkewMonitor>(("skew" + std::to_string(slot)).c_str()));
      dma.bind(monitors.back()->in);
      monitors.back()->out.bind(memory);
    });

TEST(DecoupledDma, EveryTransactionCarriesTheEnginesTime) {
  ASSERT_TRUE(kBound);
  using namespace qptwin::testing;
  // ibta: no host costs, so nothing brings the kernel up to the engine between waits.
  for (const char* profile : {"ibta", "cx6-100g", "rxe"}) {
    qptwin::model::ModelOptions o;
    o.profile = profile;
    auto [be, a, b] = ConnectedSides(qptwin::model::MakeModelBackend(o));
    SkewMonitor::skews.clear();
    SkewMonitor::annotated = 0;
    for (uint32_t len : {8u, 512u, 2000u, 4000u, 64u}) {
      size_t bad = 0;
      ASSERT_EQ(a.dev->PostSend(a.qp, {WriteWr(a, b, 1, 0, len)}, &bad), 0);
      ASSERT_EQ(a.dev->PostSend(a.qp, {WriteWr(a, b, 2, 0, len)}, &bad), 0);
      ASSERT_EQ(Wait(a, a.scq, 1).size(), 1u);  // ends after the first: the engine may be ahead
      ASSERT_EQ(a.dev->PostSend(a.qp, {WriteWr(a, b, 3, 0, len)}, &bad), 0);
      ASSERT_EQ(Wait(a, a.scq, 2).size(), 2u);
    }
    ASSERT_FALSE(SkewMonitor::skews.empty());
    const std::set<int64_t> distinct(SkewMonitor::skews.begin(), SkewMonitor::skews.end());
    EXPECT_EQ(distinct.size(), 1u) << profile << ": a transaction went out at another time "
                                      "than its engine's (the skew is the World's epoch)";
    if (std::string(profile) == "ibta") {
      EXPECT_GT(SkewMonitor::annotated, 0u) << "the engine never ran ahead: nothing tested";
    }
  }
}

}  // namespace
