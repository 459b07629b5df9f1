// qptwin::sc::Nic: the model's RDMA NIC as a SystemC module for a program's own virtual
// platform (issue 12). It is the engine's NIC (model/engine: every profile's behaviour and
// timing, the same the suites compare with real rxe) on sockets the program binds:
//
//   your CPU / bus  --mmio (TLM target)-->  Nic  --dma (TLM initiator)-->  your memory
//                                            |  net_out (sc_port<NetLinkIf>)  --> Fabric in(k)
//                                            |  net_in  (sc_export<NetLinkIf>) <-- Fabric out(k)
//
//   qptwin::sc::Nic nic_a("nic_a"), nic_b("nic_b");   // cx6-100g unless NicConfig says
//   qptwin::sc::Fabric fabric("fabric", 2);            // the profile's switches and cables
//   bus_a.to_nic.bind(nic_a.mmio);  nic_a.dma.bind(dram.port);
//   nic_a.net_out.bind(fabric.in(nic_a.index()));  fabric.out(nic_a.index()).bind(nic_a.net_in);
//   nic_a.Trace(tf, 1);                                // link_busy, qp0.{qpn,state,sq,rq}
//
// Contract:
//  1. Elaboration. Every Nic of the process is made before the first sc_start (SystemC's
//     rule); the k-th made has index() k (at most Fabric's 16, model::sim::Platform::kSlots),
//     its fabric port. In the first Nic's before_end_of_elaboration, one model Backend is
//     made for all of them (model_backend.h contract 7: Nic k is its device k, "mdevK",
//     on the one profile they all name); a different profile, an unknown one, a time
//     resolution coarser than 1 ns, a Nic destroyed before elaboration, or a Nic made after
//     it are SystemC errors (SC_REPORT_ERROR). The Backend lives until the
//     first Nic is destroyed (a Nic outlives its device: destroy them together, e.g. at the
//     end of sc_main).
//  2. The host side is register-level, as a driver sees a NIC (no verbs library in the
//     process): mmio holds the command mailbox (model/engine/command_port.h: create, modify,
//     destroy, register; the NIC assigns the numbers and answers where it put each ring in
//     the window QUEUE_MEMORY named), the send doorbell (kDoorbellOffset: QP number and
//     producer index, model/engine/doorbell_port.h contract 2) and the CQ arm
//     (kCqArmOffset, model/engine/cq.h contract 8). The rings' and CQEs' layouts:
//     model/engine/send_wqe_image.h, recv_queue.h, cq.h. model/sim/platform.h contracts 8
//     and 13 give each access's answer; commands and doorbells are model calls, made from
//     the program's thread processes (model_backend.h contract 6): a thread's access waits
//     for its turn, also behind a verbs call sc_main made on a Backend of its own (whose
//     sc_start runs the thread: the access is answered after that call returned, in the
//     program's next sc_start); one from inside the engine's own work (a module answering
//     the NIC's DMA) is refused with TLM_GENERIC_ERROR_RESPONSE.
//  3. Every byte the NIC moves (WQE fetches, payloads, CQEs, records, interrupts) is one
//     tlm_generic_payload through dma, b_transport, labelled by a sim::DmaExtension (what
//     it is for, the QP, the engine's time), issued at the engine's time (its lead on
//     SystemC's time, temporal decoupling within tlm::tlm_global_quantum, or 1 us while
//     that is zero: model/sim/sc_clock.h contract 7, as the annotated delay); what the target adds
//     to the delay is time the NIC waits (model/sim/platform.h contract 2). A failed
//     response is the verbs' error completion, never a crash. Accesses the driver's CPU
//     would make for a verb (a queue record zeroed at its create, a resized CQ's entries
//     moved) cross dma too, with by_cpu set (platform.h contract 14).
//  4. The network: each message leaves net_out when its last byte leaves the port, with
//     its time as an LT-style delay, and is the far Nic's when it reaches its net_in
//     (platform.h contract 9). Fabric routes by the far Nic's index and adds the profile's
//     switches and cables; a module of the program's may sit between (a tap, a switch with
//     contention, loss), adding time or dropping a message.
//  5. Trace(tf, qps) before the first sc_start: link_busy and, for the first qps QPs made
//     on this Nic, their number, state, send and receive occupancy (platform.h contract
//     10), at the engine's times.
//  6. The verbs on these Nics: backend() is the Backend of contract 1 (null before
//     elaboration, after a refusal, and once the first Nic is gone). The program's thread
//     processes make verbs calls on it as on MakeModelBackend's (model_backend.h contract
//     6: a wait is SystemC's wait), beside its own drivers' commands and doorbells; its
//     device "mdevK" is Nic K. Such a Nic reaches only the memory its dma is bound to, so
//     the verbs' queues and regions go there: ModelQueueMemoryAt before the first queue
//     (a CQ, SRQ or QP created without a window is EINVAL), ModelRegMrAt for each region
//     (bus addresses of the program's memory). A post's WQE
//     images and a poll's CQE reads cross dma with by_cpu set (contract 3); the doorbell
//     goes to the Nic directly, as the platform's CPU rings its slots. Devices opened on
//     it may outlive the Nics (destroyed after sc_main returns): once the first Nic is
//     gone, what they would move fails (model_backend.h contract 7), nothing crashes.
//     examples/systemc/verbs_on_own_nics.cc.
//  7. Processes: each block of the NIC is an SC_METHOD of the module, its child, named
//     after the block: port, send_engine, completer, transport_timer, rnr_timer,
//     retry_loop, answer_wait, roce_out ("nic_a.send_engine"), each woken by its own
//     event ("nic_a.send_engine_wake") at its block's wake-ups (model/sim/platform.h
//     contract 15, model/sim/sc_clock.h contract 9: the first process woken at a time
//     runs every wake-up due then in one order, and one that runs ahead within the
//     quantum runs the other blocks' wake-ups it reaches, as an LT initiator does). The
//     responder runs where a message arrives (the sending Nic's port process, through
//     net_out and this Nic's net_in); commands and doorbells in the process that wrote
//     mmio. The first Nic made also has the World's own two (cqe_visible: the times CQEs
//     become visible; roce_in: datagrams from outside the simulation).
#pragma once

#include <systemc>

#include <memory>
#include <string>

#include "model/sim/platform.h"
#include "spec/backend.h"

namespace qptwin::sc {

using model::sim::DmaExtension;  // on every transaction of dma (contract 3)
using model::sim::Fabric;         // contract 4
using model::sim::NetLinkIf;
using model::sim::NetMessage;

struct NicConfig {
  std::string profile = "cx6-100g";  // model::ProfileNames(); every Nic of a process alike
};

class Nic : public model::sim::NicSlot {
 public:
  explicit Nic(sc_core::sc_module_name name, const NicConfig& config = {});
  ~Nic() override;
  Nic(const Nic&) = delete;
  Nic& operator=(const Nic&) = delete;

  // index(), NicSlot's: contract 1, its Fabric port, its device mdevK.
  const std::string& profile() const { return config_.profile; }
  // Contract 6: the one Backend of every Nic of the process (not owned by the caller).
  Backend* backend() const;

 private:
  struct Board;
  void before_end_of_elaboration() override;
  const NicConfig config_;
  std::shared_ptr<Board> board_;
  // Contract 7: the first Nic's children cqe_visible and roce_in, the World's own.
  std::unique_ptr<model::sim::ScClock::BlockProcesses> world_blocks_;
};

}  // namespace qptwin::sc
