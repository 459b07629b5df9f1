// A SystemC user's own interconnect between the verbs-level model's NICs and host memory
// (model/sim/platform.h contract 7): every DMA of a model Backend crosses this module,
// which sees what each transaction is for (DmaExtension) and adds a latency of its own,
// and the model's completion times move by exactly that latency where the NIC waits for
// the transfer (model/engine/host_bus.h contract 3). The same bridge sits between the host
// CPU and each NIC's doorbell register (contract 8): a ring's latency delays the NIC's
// WQEs as well.
#include <gtest/gtest.h>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "model/model_backend.h"
#include "model/sim/platform.h"
#include "tests/support/support.h"

namespace {

using qptwin::model::sim::DmaExtension;
using qptwin::model::sim::HostCpu;
using qptwin::model::sim::HostMemory;
using qptwin::model::sim::NicSlot;
using qptwin::model::sim::Platform;

// A bridge per NIC slot: forwards every transaction to host memory, adds `latency`.
class LatencyBridge : public sc_core::sc_module {
 public:
  tlm_utils::simple_target_socket<LatencyBridge> in;
  tlm_utils::simple_initiator_socket<LatencyBridge> out;
  static sc_core::sc_time latency;
  static std::map<std::string, int> seen;  // transactions by DmaKind name

  explicit LatencyBridge(sc_core::sc_module_name name) : sc_module(name), in("in"), out("out") {
    in.register_b_transport(this, &LatencyBridge::BTransport);
  }

 private:
  void BTransport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay) {
    if (const auto* ext = gp.get_extension<DmaExtension>()) {
      ++seen[qptwin::model::engine::ToName(ext->tag.kind)];
    }
    // The latency before the target: a doorbell acts when it arrives (the NIC runs inside
    // the write); a DMA's whole returned delay counts (host_bus.h contract 3).
    delay += latency;
    out->b_transport(gp, delay);
  }
};
sc_core::sc_time LatencyBridge::latency = sc_core::SC_ZERO_TIME;
std::map<std::string, int> LatencyBridge::seen;

std::vector<std::unique_ptr<LatencyBridge>>& Bridges() {
  static auto* bridges = new std::vector<std::unique_ptr<LatencyBridge>>;
  return *bridges;
}

// Binds the platform through the bridges; runs before the first model use of this binary.
const bool kBound = Platform::SetBinder(
    [](int slot, tlm_utils::simple_initiator_socket<NicSlot>& dma, HostMemory::Socket& memory) {
      Bridges().push_back(
          std::make_unique<LatencyBridge>(("bridge" + std::to_string(slot)).c_str()));
      dma.bind(Bridges().back()->in);
      Bridges().back()->out.bind(memory);
    });

// The doorbells: the CPU's MMIO writes to each NIC through a bridge of their own.
const bool kMmioBound = Platform::SetMmioBinder(
    [](int slot, HostCpu::Socket& cpu, tlm_utils::simple_target_socket<NicSlot>& nic) {
      Bridges().push_back(
          std::make_unique<LatencyBridge>(("mmio_bridge" + std::to_string(slot)).c_str()));
      cpu.bind(Bridges().back()->in);
      Bridges().back()->out.bind(nic);
    });

// A connected RC pair, mdev0 and mdev1 on cx6-100g, with `latency` on every bridge.
auto Cx6Pair(sc_core::sc_time latency) {
  LatencyBridge::latency = latency;
  qptwin::model::ModelOptions o;
  o.profile = "cx6-100g";
  return qptwin::testing::ConnectedSides(qptwin::model::MakeModelBackend(o));
}

// One signaled 8-byte RDMA WRITE (or READ) from mdev0 to mdev1: how long until its CQE is
// seen.
uint64_t CompletesAfter(sc_core::sc_time latency, qptwin::WrOpcode op) {
  using namespace qptwin::testing;
  auto [be, a, b] = Cx6Pair(latency);
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
  return be->NowNs() - start;
}

// One signaled 8-byte SEND from mdev0 to mdev1 into a receive posted before: how long
// until the sender's CQE, and until the receive's.
std::pair<uint64_t, uint64_t> SendCompletesAfter(sc_core::sc_time latency) {
  using namespace qptwin::testing;
  auto [be, a, b] = Cx6Pair(latency);
  a.buf[0] = 44;
  size_t bad = 0;
  EXPECT_EQ(b.dev->PostRecv(b.qp, {Rwr(7, {b.At(128, 64)})}, &bad), 0);
  const uint64_t start = be->NowNs();
  EXPECT_EQ(a.dev->PostSend(a.qp, {Wr(1, qptwin::WrOpcode::kSend, {a.At(0, 8)})}, &bad), 0);
  auto rwc = Wait(b, b.rcq, 1);
  EXPECT_EQ(rwc.size(), 1u);
  const uint64_t received = be->NowNs() - start;
  auto wc = Wait(a, a.scq, 1);
  EXPECT_EQ(wc.size(), 1u);
  EXPECT_EQ(b.buf[128], 44);
  return {be->NowNs() - start, received};
}

TEST(DmaInterconnect, EveryDmaCrossesTheUsersModuleAndItsLatencyShowsInTheModelsTimes) {
  ASSERT_TRUE(kBound);
  ASSERT_TRUE(kMmioBound);
  using qptwin::WrOpcode;
  const uint64_t plain = CompletesAfter(sc_core::SC_ZERO_TIME, WrOpcode::kRdmaWrite);
  EXPECT_EQ(LatencyBridge::seen["DOORBELL"], 1);
  EXPECT_EQ(LatencyBridge::seen["SEND_WQE"], 1);
  EXPECT_EQ(LatencyBridge::seen["PAYLOAD_READ"], 1);
  EXPECT_EQ(LatencyBridge::seen["WRITE_DATA"], 1);
  EXPECT_EQ(LatencyBridge::seen["CQE"], 1);
  ASSERT_NE(sc_core::sc_find_object("qptwin_platform.bridge0"), nullptr);
  const sc_core::sc_time us(1, sc_core::SC_US);
  const uint64_t slow = CompletesAfter(us, WrOpcode::kRdmaWrite);
  // On the WRITE's critical path: the doorbell, the WQE fetch, the payload read, the
  // responder's write (before its ACK) and the CQE write: five transfers, each 1 us later.
  EXPECT_EQ(slow - plain, 5000u) << "plain " << plain << " ns, with 1 us per transfer " << slow;
  // A READ's: the doorbell, the WQE fetch, the responder's read (before its response), the
  // requester's write of the data (before its CQE) and the CQE write.
  const uint64_t read_plain = CompletesAfter(sc_core::SC_ZERO_TIME, WrOpcode::kRdmaRead);
  const uint64_t read_slow = CompletesAfter(us, WrOpcode::kRdmaRead);
  EXPECT_EQ(read_slow - read_plain, 5000u) << read_plain << " ns vs " << read_slow;
}

// One signaled 8-byte SEND from mdev0 to mdev1 with no receive yet: RNR-NAKed; the receive
// is posted 8 us later (after the NAK, before the RNR timer of min_rnr_timer 1, 10 us,
// expires, with or without 1 us per transfer), and the RNR retry delivers it. How long
// until the sender's CQE.
uint64_t RnrRetriedSendCompletesAfter(sc_core::sc_time latency) {
  using namespace qptwin::testing;
  auto [be, a, b] = Cx6Pair(latency);
  a.buf[0] = 45;
  size_t bad = 0;
  std::vector<qptwin::WorkCompletion> none;  // the hosts finish their set-up verbs first
  EXPECT_EQ(a.dev->WaitForCompletions(a.scq, 0, 0, &none), 0);
  EXPECT_EQ(b.dev->WaitForCompletions(b.scq, 0, 0, &none), 0);
  const uint64_t start = be->NowNs();
  EXPECT_EQ(a.dev->PostSend(a.qp, {Wr(1, qptwin::WrOpcode::kSend, {a.At(0, 8)})}, &bad), 0);
  be->Advance(8 * 1000);
  EXPECT_EQ(LatencyBridge::seen["RECV_DBREC"] % 2, 1) << "one RNR round so far";
  EXPECT_EQ(b.dev->PostRecv(b.qp, {Rwr(7, {b.At(128, 64)})}, &bad), 0);
  auto wc = Wait(a, a.scq, 1);
  EXPECT_EQ(wc.size(), 1u);
  EXPECT_EQ(wc.at(0).status, qptwin::WcStatus::kSuccess);
  EXPECT_EQ(b.buf[128], 45);
  return be->NowNs() - start;
}

TEST(DmaInterconnect, AResendWaitsForItsWqeReadAgainAndItsPayload) {
  ASSERT_TRUE(kBound);
  LatencyBridge::seen.clear();
  const uint64_t plain = RnrRetriedSendCompletesAfter(sc_core::SC_ZERO_TIME);
  // The NIC keeps no copy of the WQE (model/engine/send_wqe_image.h contract 3): the
  // retry reads it from its ring slot again, and the payload too.
  EXPECT_EQ(LatencyBridge::seen["SEND_WQE"], 2);
  EXPECT_EQ(LatencyBridge::seen["PAYLOAD_READ"], 2);
  const uint64_t slow = RnrRetriedSendCompletesAfter(sc_core::sc_time(1, sc_core::SC_US));
  // The first try: the doorbell, the WQE fetch, the payload read, the responder's record
  // read (no receive: the RNR NAK), so the RNR timer starts 4 us later. The retry: the WQE
  // read again and the payload, the responder's record, receive WQE, data and CQE before
  // its ACK, then the sender's CQE: 7 more.
  EXPECT_EQ(slow - plain, 11000u) << plain << " ns vs " << slow;
}

TEST(DmaInterconnect, ASendWaitsForTheReceiveQueuesDoorbellRecord) {
  ASSERT_TRUE(kBound);
  LatencyBridge::seen.clear();
  const auto [sent, received] = SendCompletesAfter(sc_core::SC_ZERO_TIME);
  // The receive queue has no MMIO doorbell: the NIC reads its doorbell record (knowing of
  // no receive yet), then the receive WQE (model/engine/recv_queue.h contract 5).
  EXPECT_EQ(LatencyBridge::seen["RECV_DBREC"], 1);
  EXPECT_EQ(LatencyBridge::seen["RECV_WQE"], 1);
  EXPECT_EQ(LatencyBridge::seen["RECV_DATA"], 1);
  EXPECT_EQ(LatencyBridge::seen["CQE"], 2);
  const sc_core::sc_time us(1, sc_core::SC_US);
  const auto [sent_slow, received_slow] = SendCompletesAfter(us);
  // The receive's CQE waits for the receive's transfers: the doorbell, the WQE fetch and
  // the payload read at the sender, the record, the receive WQE and the data at the
  // responder, then the CQE write: seven transfers.
  EXPECT_EQ(received_slow - received, 7000u) << received << " ns vs " << received_slow;
  // The sender's: the same three, the responder's four before its ACK (the receive's CQE
  // write is one of them), then its own CQE write.
  EXPECT_EQ(sent_slow - sent, 8000u) << sent << " ns vs " << sent_slow;
}

}  // namespace
