// The SystemC platform every model Backend of the process runs on (issue 12, stage 2):
// elaborated once, before the first sc_start; scenarios (Backends) come and go on it.
//
//   qptwin_platform          sc_module
//     nic0 .. nic15          NicSlot: sc_module, dma = tlm_utils::simple_initiator_socket,
//                            mmio = tlm_utils::simple_target_socket (its doorbell register)
//     host                   HostMemory: sc_module, port0 .. port15 = simple_target_socket
//     cpu                    HostCpu: sc_module, mmio0 .. mmio15 = simple_initiator_socket
//     fabric                 Fabric: sc_module, in0 .. in15 = sc_export<NetLinkIf>,
//                            out0 .. out15 = sc_port<NetLinkIf>
//   nicK.dma  ->  host.portK        cpu.mmioK  ->  nicK.mmio
//   nicK.net_out  ->  fabric.inK    fabric.outK  ->  nicK.net_in
//
// Contract:
//  1. Elaboration: kernel.cc elaborates the platform when it starts the kernel (the first
//     sim::Advance, also ScClock's constructor), if SystemC is still elaborating (no
//     sc_start has run). If a program ran sc_start before any model use (a user's sc_main
//     that starts its own simulation first), there is no platform: Get() returns nullptr
//     and MakeModelBackend fails, saying so (model_backend.h contract 1).
//  2. Device k of a model Backend is slot k % kSlots (kSlots = 16, the verbs preload's
//     device limit). Every DMA of that device (engine/host_bus.h) is one
//     tlm_generic_payload through slot k's `dma` socket, b_transport, TLM_READ_COMMAND or
//     TLM_WRITE_COMMAND, the whole length in one transaction, no byte enables, issued at
//     the engine's current time: with delay SC_ZERO_TIME, or, when the engine runs ahead of
//     SystemC's time (sc_clock.h contract 7, temporal decoupling), with that offset as the
//     annotated delay, as an LT initiator with a quantum keeper issues it (the engine's
//     blocks are SC_METHODs that cannot wait, so a target must not call wait()). Backends
//     alive side by side share the slots: a transaction is synchronous, and a slot keeps
//     nothing between transactions but its counters. What the target adds to the delay is
//     its extra time (a target adds to the delay, as TLM-2.0's LT rules have it; one that
//     lowers it adds nothing): the engine adds it where it waits for the transfer (engine/host_bus.h
//     contract 3), so a user's interconnect (7) shows in the model's times.
//  3. HostMemory: a bus address is an address of this process (host_bus.h contract 1; the
//     engine issues only transfers inside registered regions), except a ModelRegMrAt
//     region's (12). Reads and writes copy the
//     bytes and answer TLM_OK_RESPONSE; any other command TLM_COMMAND_ERROR_RESPONSE, byte
//     enables TLM_BYTE_ENABLE_ERROR_RESPONSE, a streaming width below the length
//     TLM_BURST_ERROR_RESPONSE. No DMI: every byte the model moves is a transaction.
//  4. Fault injection (tests, and users who want a PCIe error): after InjectError(addr,
//     len), every transaction touching [addr, addr + len) answers
//     TLM_ADDRESS_ERROR_RESPONSE and moves no byte, until ClearErrors(). The engine turns
//     it into an error completion (host_bus.h contract 2).
//  5. Threading: the kernel's (kernel.h contract 4); everything here runs on it.
//  6. Every transaction carries a DmaExtension: what it is for (engine/host_bus.h
//     DmaKind), the QP, the slot and the engine's time, so a target or a monitor can tell
//     a CQE from payload. An observer (SetObserver) sees each transaction after it
//     completed, with its outcome (the CLI's `qptwin run --dma`).
//  7. A program's own path from the slots to host memory (an interconnect, an IOMMU, a
//     latency or fault model): SetBinder before the first model use; while the platform is
//     elaborated the binder is called once per slot, instead of binding slot.dma to
//     host.portK directly, and may make modules and bind them (e.g. dma -> its module ->
//     memory). Whatever it binds must end at the given memory socket (addresses are this
//     process's, 3), answer without wait(), and may return a delay (2); except the bus
//     addresses of regions the program registered there (model_backend.h ModelRegMrAt),
//     which its own memory model answers (examples/systemc/user_memory_test.cc).
//  8. Doorbells (engine/doorbell_port.h): a post that rings writes the doorbell through
//     cpu.mmioK to nicK.mmio, b_transport, TLM_WRITE_COMMAND at NicSlot::kDoorbellOffset:
//     8 bytes, the QP number (little-endian bits 0-31) and the send queue's producer index
//     (bits 32-63, engine/doorbell_port.h contract 2), followed by the WQE image with
//     BlueFlame. The slot hands it to the engine NIC the write's MmioExtension names (slots
//     are shared by the Backends alive, 2), or, for a write without one (a driver of the
//     program's own, doorbell_port.h contract 6: any initiator on the path may issue it),
//     to the slot's device of the newest model Backend alive, as a model call (kernel.h
//     contract 7; TLM_GENERIC_ERROR_RESPONSE, nothing done, while the engine is on the
//     stack: ModelCall::UnderWay, e.g. a module of the program's answering the NIC's DMA
//     rang); the NIC fetches the WQEs and starts its requester inside the b_transport. The
//     write leaves with the host's time until its post's work ends as its delay (beyond the
//     engine's offset, 2); the delay it carries when it reaches the slot (that, and what the
//     path added on the way in) is when the NIC has the ring (doorbell_port.h contract 3,
//     the NIC's doorbell_ns and WQE fetch after it); a delay added
//     after the slot returned is the CPU's business (the NIC acted on arrival). A driver
//     arms a CQ (engine/cq.h contract 8) with 8 bytes at NicSlot::kCqArmOffset, as mlx5's
//     CQ doorbell: the CQ number (bits 0-31, model_backend.h CqRing::cqn), its consumer
//     index (bits 32-55: the CQEs it took since the ring was placed, modulo 2^24) and
//     solicited-only (bit 56); handed to the NIC as a ring is (a model call), counted as
//     a doorbell. An event queue's arm (engine/command_port.h kCreateEq) is alike: 8 bytes
//     at NicSlot::kEqArmOffset, the queue's number (bits 0-31) and the EQEs the driver took
//     (bits 32-55, modulo 2^24; engine/nic.h OnEqArm). A write elsewhere, a read, or a malformed write answers
//     TLM_ADDRESS_ERROR_RESPONSE / TLM_COMMAND_ERROR_RESPONSE / TLM_GENERIC_ERROR_RESPONSE
//     and does nothing. The observer (6) sees each ring as kind DOORBELL. A program's own
//     path from the CPU to the slots: SetMmioBinder, as SetBinder (7) for the DMA: called
//     once per slot while the platform is elaborated, instead of binding cpu.mmioK to
//     nicK.mmio directly; whatever it binds must end at the slot's socket, keep the
//     payload's extensions, answer without wait(), and may return a delay.
//  9. The network (engine/net_port.h): every message a device sends to a device of its
//     Backend leaves through its slot's `net_out` when its last byte leaves the NIC's port
//     (Transport(NetMessage&), an interface method call: see NetLinkIf for why), crosses
//     the Fabric module (the profile's switches and cables: engine::PathNs, non-blocking)
//     and reaches the far slot's `net_in`, which hands it to the engine
//     (engine::World::Arrive). NetMessage::delay is, as an LT transaction's annotated
//     delay, from SystemC's time to when the last byte reaches the callee; a module on the
//     way adds the time it takes to it (and may hold nothing back: Transport hands the
//     message on before it returns, or drops it, which loses it). Per source, messages
//     must reach net_in in order, their times not decreasing (a FIFO path; the engine
//     raises a time that falls behind). A program's own network (a switch model, a tap,
//     a fault model): SetNetBinder, as SetBinder (7): called once per slot while the
//     platform is elaborated, instead of binding nicK.net_out to fabric.inK and
//     fabric.outK to nicK.net_in. Routing is by NetMessage::dst_slot. An observer
//     (SetNetObserver) sees each message that reaches a net_in (the CLI's `qptwin run
//     --net`).
// 10. Tracing (engine/trace_port.h): slot.Trace(tf, qps), before the first sc_start (sc_trace's
//     rule), adds to the VCD file `tf`, under the slot's name: `link_busy` (the port sends a
//     message's bytes: engine/world.h Transmit's wire time) and, for the first `qps` QPs
//     made on the slot's devices (in the order they were made, by any Backend of the
//     process), `qpI.qpn`, `qpI.state` (ibv_qp_state's value), `qpI.sq` (send WQEs posted,
//     not retired) and `qpI.rq` (receives posted to its own queue, not taken). Each value
//     changes at the engine's time of the change, also when the engine runs ahead of
//     SystemC's time (sc_clock.h contract 7): a process of the slot applies it when the
//     kernel reaches that time (in a Backend's waits, or in the program's own simulation,
//     model_backend.h contract 6). A change made while no simulation runs (between a
//     Backend's waits) shows when the kernel next runs at or after its time. Untraced
//     slots cost nothing (engine/trace_port.h contract 1).
// 11. The provider's CPU (engine/host_bus.h contract 7): its accesses to host memory for
//     slot K's devices (WQE and receive WQE writes, doorbell records, CQE reads at a poll,
//     the CQ's consumer index record, inline data from ModelRegMrAt memory) leave through
//     cpu.memK, bound to host.port(kSlots + K), with a DmaExtension whose tag has by_cpu
//     set. Host memory grants DMI over the whole address space (this process's memory,
//     read and write, no fault of InjectError applies to the CPU), so by default the CPU
//     works on the bytes in place and no transaction is issued; a program's own path
//     (SetCpuBinder, as SetBinder) that does not pass DMI on sees every CPU access as a
//     b_transport (examples/systemc/cpu_memory_test.cc). The CPU's accesses take none of
//     the engine's time: a delay returned is not counted (the host's post and poll costs
//     are the profile's); a failed one is handled as host_bus.h contract 7 says.
// 12. Regions at a program's bus addresses (model_backend.h ModelRegMrAt), and a device's
//     queue memory (ModelQueueMemoryAt: its rings and records), are the program's memory
//     model's to answer, on the DMA path (7) and the CPU's (11: inline data; every ring and
//     record access of the provider for queue memory). Host
//     memory answers their addresses with TLM_ADDRESS_ERROR_RESPONSE (never as this
//     process's bytes), so a region nobody routes elsewhere gives the verbs' error
//     completion (engine/host_bus.h contract 2), not a crash. The engine holds each range
//     on its slot while it may touch it (engine/host_bus.h contract 8: a region until it is
//     deregistered or its device goes, a queue memory window until its last queue goes);
//     host memory keeps the range off until the last hold of it goes, and the DMI it grants
//     the CPU (11) stops short of the ranges held (grants are invalidated when one is added
//     or dropped).
// 13. A driver's commands (engine/command_port.h): the slot's MMIO space holds a command
//     mailbox at [command::kOpOffset, command::kEnd). A write of CMD_OP without an
//     MmioExtension runs the command on the slot's device of the newest model Backend
//     alive (the NIC a driver's doorbells go to, 8; its Nic::command_target()), as a model
//     call inside the b_transport (it may wait: a verb's cost is the host's time); the
//     delay the write carries is not counted (the command's own cost is). CMD_STATUS
//     then reads its errno, CMD_OUT its answers. A write of CMD_OP with no Backend alive,
//     or while the engine is on the stack (8), answers TLM_GENERIC_ERROR_RESPONSE and runs
//     nothing; an access the block does not have answers TLM_ADDRESS_ERROR_RESPONSE (or
//     TLM_BURST_ERROR_RESPONSE for a size other than 4 or 8, one not aligned to it, a
//     streaming width other than the size, or byte enables).
//     The observer (6) does not see the mailbox's accesses.
// 14. A NIC module of a program's own (model/systemc/nic.h, qptwin::sc::Nic; model_backend.h
//     contract 7) is a NicSlot the program makes and binds itself, outside the platform:
//     index k is its device's number in its Backend (messages name it as dst_slot, 9), and
//     it has no host CPU of the platform's. The provider's CPU accesses (11) then leave
//     through the slot's own `dma` socket (own_cpu_path(): tag by_cpu set, no DMI, no
//     delay counted, not in the counters or the observer's records), and a doorbell the
//     provider rings (8) is handed to the slot's MMIO target directly. No host memory
//     keeps ranges (12): every address is the program's memory model's.
// 15. Each slot's blocks are processes of its own (sc_clock.h contract 9): the children
//     port, send_engine, completer, transport_timer, rnr_timer, retry_loop, answer_wait
//     and roce_out (SC_METHODs: "qptwin_platform.nic0.send_engine", or "nic_a.send_engine"
//     for a program's Nic), and the World's own two, cqe_visible and roce_in, children of
//     the platform module (or of a program's first Nic). The newest model Backend on a
//     slot takes them (model_backend places its device k on slot k, blocks(), and the
//     World's own on world_blocks()): each is the process its block's wake-ups notify.
//     The responder and the completer's handling of an answer run where a message arrives
//     (the sending slot's port process, through net_out and the far net_in, as a TLM
//     target runs in its initiator's process); commands and doorbells run in the process
//     that wrote them (mmio's b_transport).
#pragma once

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "model/dma_counters.h"
#include "model/engine/command_port.h"
#include "model/engine/doorbell_port.h"
#include "model/engine/host_bus.h"
#include "model/engine/net_port.h"
#include "model/engine/trace_port.h"
#include "model/sim/kernel.h"
#include "model/sim/sc_clock.h"

namespace qptwin::model::sim {

// Contract 6. Readable by any target: gp.get_extension<DmaExtension>().
struct DmaExtension : tlm::tlm_extension<DmaExtension> {
  engine::DmaTag tag;
  int slot = 0;
  tlm::tlm_extension_base* clone() const override { return new DmaExtension(*this); }
  void copy_from(const tlm::tlm_extension_base& other) override {
    *this = static_cast<const DmaExtension&>(other);
  }
};

// Contract 8: the engine NIC a doorbell write is for.
struct MmioExtension : tlm::tlm_extension<MmioExtension> {
  engine::Nic* nic = nullptr;
  tlm::tlm_extension_base* clone() const override { return new MmioExtension(*this); }
  void copy_from(const tlm::tlm_extension_base& other) override {
    *this = static_cast<const MmioExtension&>(other);
  }
};

// One completed transaction (contract 6).
struct DmaRecord {
  int slot = 0;
  engine::DmaTag tag;
  bool write = false;
  uint64_t addr = 0;
  uint64_t bytes = 0;
  bool ok = true;
};
using DmaObserver = std::function<void(const DmaRecord&)>;

// One message that reached a slot's net_in (contract 9), before the engine has it.
struct NetRecord {
  int src_slot = 0;
  int dst_slot = 0;
  const engine::Packet* pkt = nullptr;  // valid during the call only
  uint64_t leave_ns = 0;   // the engine's time its last byte left the source port
  uint64_t arrive_ns = 0;  // ... and reached this port (the NIC acts rx_latency_ns later)
  uint64_t wire_bytes = 0;
};
using NetObserver = std::function<void(const NetRecord&)>;

// Per slot, since the process started (errors: transactions answered with an error).
using DmaCounters = model::DmaCounters;

class HostMemory : public sc_core::sc_module {
 public:
  using Socket = tlm_utils::simple_target_socket<HostMemory>;

  // Ports [0, dma_ports) for the NICs' DMA, then cpu_ports for the CPU (contract 11).
  HostMemory(sc_core::sc_module_name name, int dma_ports, int cpu_ports);
  Socket& port(int i) { return *ports_[i]; }
  void InjectError(uint64_t addr, uint64_t len) { faults_.emplace_back(addr, len); }
  void ClearErrors() { faults_.clear(); }
  // Contract 12: [addr, addr + len) is not this process's memory (ModelRegMrAt's region,
  // ModelQueueMemoryAt's window): answered TLM_ADDRESS_ERROR_RESPONSE here, on every port,
  // until as many DropBusOnly of the same range as AddBusOnly.
  void AddBusOnly(uint64_t addr, uint64_t len);
  void DropBusOnly(uint64_t addr, uint64_t len);
  // Contract 12: whether some byte of [addr, addr + len) is held off now.
  bool IsBusOnly(uint64_t addr, uint64_t len) const { return BusOnly(addr, len); }

 private:
  void BTransport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay);
  void CpuTransport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay);
  bool GetDmi(tlm::tlm_generic_payload& gp, tlm::tlm_dmi& dmi);
  unsigned int TransportDbg(tlm::tlm_generic_payload& gp);
  bool Faulty(uint64_t addr, uint64_t len) const;
  bool BusOnly(uint64_t addr, uint64_t len) const {  // inline: every DMA asks
    return !bus_only_.empty() && InBusOnly(addr, len);
  }
  bool InBusOnly(uint64_t addr, uint64_t len) const;
  std::vector<std::unique_ptr<Socket>> ports_;
  std::vector<std::pair<uint64_t, uint64_t>> faults_;    // (addr, len)
  std::map<std::pair<uint64_t, uint64_t>, int> bus_only_;  // (addr, len): holds, contract 12
  size_t dma_ports_;
};

// The host CPU: its MMIO writes (contract 8) and its accesses to host memory (contract 11),
// one initiator socket of each per slot.
class HostCpu : public sc_core::sc_module {
 public:
  using Socket = tlm_utils::simple_initiator_socket<HostCpu>;
  HostCpu(sc_core::sc_module_name name, int ports);
  Socket& mmio(int i) { return *mmio_[i]; }
  Socket& mem(int i) { return *mem_[i]->socket; }
  // Slot i's CPU accesses as the engine's bus (engine/host_bus.h contract 7).
  engine::HostBus& bus(int i) { return *mem_[i]; }

 private:
  class MemPort : public engine::HostBus {
   public:
    MemPort(Socket* s, int slot);
    ~MemPort() override;
    bool Read(uint64_t addr, uint8_t* dst, uint64_t len) override;
    bool Write(uint64_t addr, const uint8_t* src, uint64_t len) override;
    uint8_t* DirectMiss(uint64_t addr, uint64_t len) override;
    void Invalidate() {
      dmi_asked_ = false;
      RevokeDirect();
    }
    std::unique_ptr<Socket> socket;

   private:
    bool Transfer(tlm::tlm_command cmd, uint64_t addr, uint8_t* data, uint64_t len);
    tlm::tlm_generic_payload gp_;
    DmaExtension ext_;
    bool dmi_asked_ = false;
  };
  void InvalidateDmi(sc_dt::uint64 start, sc_dt::uint64 end);
  std::vector<std::unique_ptr<Socket>> mmio_;
  std::vector<std::unique_ptr<MemPort>> mem_;
};

// n ns as an sc_time, remembering the last conversion (a stream repeats its offsets and
// delays; the conversion is a library call).
class NsToTime {
 public:
  const sc_core::sc_time& operator()(uint64_t ns) {
    if (ns != ns_) {
      ns_ = ns;
      time_ = Convert(ns);
    }
    return time_;
  }
  static sc_core::sc_time Convert(uint64_t ns);

 private:
  uint64_t ns_ = 0;
  sc_core::sc_time time_ = sc_core::SC_ZERO_TIME;
};

// One message on the network (contract 9). The packet is the engine's (engine/packet.h:
// kind, PSN, payload, ...); a module may read it, and must not keep the pointer.
struct NetMessage {
  engine::World* world = nullptr;  // the Backend's World the message belongs to
  engine::Packet* pkt = nullptr;
  int src_slot = 0;
  int dst_slot = 0;
  // From SystemC's time: when the last byte is at the callee (contract 9; LT's annotated
  // delay, so a sender running ahead of SystemC's time still gives exact times).
  sc_core::sc_time delay;
  uint64_t wire_bytes = 0;  // on the wire, every packet with its headers (model/wire.h)
  // Set by the sending slot: the engine's time the last byte left, and `delay` then (the
  // net_in side turns what the way added to the delay into the engine's time).
  uint64_t leave_ns = 0;
  sc_core::sc_time leave_delay;
};

// The network's interface (contract 9). Why an interface method call (an sc_port bound to
// an sc_export, as TLM-2.0 sockets are) and not a TLM-2.0 socket or an sc_fifo: a message
// is not a memory-mapped read or write, so a generic payload would carry it only in an
// extension, its address and data unused; and a channel costs a process activation per
// hop and message. Here a hop is a call carrying the message with its time, and only the
// receiving NIC's process wakes, once, when it is due.
class NetLinkIf : public virtual sc_core::sc_interface {
 public:
  virtual void Transport(NetMessage& msg) = 0;
};

// The profile's fabric between the slots (contract 9): each message's delay grows by
// engine::PathNs of its World's profile (switch_hops cut-through switches and their
// cables); non-blocking, as the profiles' fabric is (timing.h). Routes by dst_slot;
// anything else is dropped and counted.
class Fabric : public sc_core::sc_module {
 public:
  Fabric(sc_core::sc_module_name name, int ports);
  sc_core::sc_export<NetLinkIf>& in(int i) { return in_[i]; }
  sc_core::sc_port<NetLinkIf>& out(int i) { return out_[i]; }
  uint64_t forwarded() const { return forwarded_; }
  uint64_t dropped() const { return dropped_; }

 private:
  struct Ingress : NetLinkIf {
    Fabric* fabric = nullptr;
    void Transport(NetMessage& msg) override { fabric->Forward(msg); }
  };
  void Forward(NetMessage& msg);
  sc_core::sc_vector<sc_core::sc_export<NetLinkIf>> in_;
  sc_core::sc_vector<sc_core::sc_port<NetLinkIf>> out_;
  Ingress ingress_;
  uint64_t forwarded_ = 0;
  uint64_t dropped_ = 0;
  NsToTime path_;
};

// The SystemC side of one engine NIC: its DMA initiator (the engine's HostBus), its
// doorbell register (an MMIO target; the engine's DoorbellPort rings through the host CPU)
// and its network port (the engine's NetPort, contract 9).
class NicSlot : public sc_core::sc_module,
                public engine::HostBus,
                public engine::DoorbellPort,
                public engine::NetPort,
                public engine::TracePort {
 public:
  static constexpr uint64_t kDoorbellOffset = 0x800;  // in the slot's MMIO space (contract 8)
  static constexpr uint64_t kCqArmOffset = 0x20;      // a driver's CQ arm (contract 8)
  static constexpr uint64_t kEqArmOffset = 0x28;      // a driver's event queue arm (8)

  tlm_utils::simple_initiator_socket<NicSlot> dma;
  tlm_utils::simple_target_socket<NicSlot> mmio;
  sc_core::sc_port<NetLinkIf> net_out;    // contract 9
  sc_core::sc_export<NetLinkIf> net_in;

  // `cpu`: the host CPU's MMIO socket a verbs post's doorbell crosses (contract 8), or
  // nullptr for a NIC module of a program's own (contract 14): its doorbells come from the
  // program's driver, and a ring of the provider's is handed to the slot directly.
  NicSlot(sc_core::sc_module_name name, int index, HostCpu::Socket* cpu);
  ~NicSlot() override;
  // Contract 14: the provider's CPU accesses through this slot's own `dma` socket.
  engine::HostBus& own_cpu_path() { return cpu_path_; }
  int index() const { return ext_.slot; }  // as made: its device k (contracts 2, 14)
  ScClock::BlockProcesses* blocks() { return &blocks_; }  // contract 15
  // Contract 15: the World's own processes for a Backend whose device 0 is this slot
  // (the platform's, or a program's first Nic's); nullptr: pooled ones.
  ScClock::BlockProcesses* world_blocks() const { return world_blocks_; }
  void SetWorldBlocks(ScClock::BlockProcesses* processes) { world_blocks_ = processes; }
  bool Read(uint64_t addr, uint8_t* dst, uint64_t len) override;
  bool Write(uint64_t addr, const uint8_t* src, uint64_t len) override;
  // engine::DoorbellPort: the host CPU's write through cpu.mmioK (contract 8).
  void Ring(engine::Nic& nic, const engine::DoorbellWrite& db) override;
  // engine::DoorbellPort (doorbell_port.h contract 6): the NICs using the slot, the newest
  // last; a write without an MmioExtension (a program's own driver) goes to the newest.
  void Attach(engine::Nic* nic) override { attached_.push_back(nic); }
  void Detach(engine::Nic* nic) override;
  // engine::NetPort: a message leaves through net_out (contract 9).
  void Send(engine::World& world, engine::Packet&& pkt, uint64_t leave_ns,
            uint64_t wire_bytes) override;
  const DmaCounters& counters() const { return counters_; }
  // engine/host_bus.h contract 8: host memory keeps off the range while the handle lives
  // (contract 12).
  std::shared_ptr<void> HoldProgramRange(uint64_t addr, uint64_t len) override;
  // The platform's slots reach this process's memory (host memory answers it); a program's
  // own Nic only its own memory model.
  bool ReachesProcessMemory() const override { return memory_ != nullptr; }
  void SetHostMemory(HostMemory* memory) { memory_ = memory; }
  // Contract 10: before the first sc_start, once.
  void Trace(sc_core::sc_trace_file* tf, int qps);
  // engine::TracePort (contract 10).
  void QpCreated(uint64_t now_ns, uint32_t qpn) override;
  void QpState(uint64_t now_ns, uint32_t qpn, qptwin::QpState state) override;
  void QpQueues(uint64_t now_ns, uint32_t qpn, uint32_t sq, uint32_t rq) override;
  void LinkBusy(uint64_t now_ns, uint64_t from_ns, uint64_t until_ns) override;

 private:
  // Contract 10: traced values change at their kernel time (`due`, in ticks), in order.
  struct TracedQp {
    int qpn = 0, state = 0, sq = 0, rq = 0;
  };
  struct TraceChange {
    uint64_t due = 0;
    uint64_t seq = 0;
    int* field = nullptr;  // or, when null, a link interval's start (+1) or end (-1)
    int value = 0;
    bool operator>(const TraceChange& o) const { return due != o.due ? due > o.due : seq > o.seq; }
  };
  void TraceAt(uint64_t now_ns, uint64_t at_ns, int* field, int value);
  void ApplyTraces();
  TracedQp* TracedOf(uint32_t qpn);
  std::unique_ptr<TracedQp[]> traced_;  // fixed at Trace (sc_trace keeps the addresses)
  int traced_count_ = 0, traced_used_ = 0;
  std::vector<std::pair<uint32_t, int>> traced_by_qpn_;  // the newest QP of a number first
  bool link_busy_ = false;
  int link_intervals_ = 0;  // open intervals: back-to-back messages may overlap by rounding
  std::vector<TraceChange> trace_heap_;  // a min-heap by (due, seq)
  uint64_t trace_seq_ = 0;
  sc_core::sc_event trace_event_;
  struct Arrival : NetLinkIf {
    NicSlot* slot = nullptr;
    void Transport(NetMessage& msg) override { slot->Arrive(msg); }
  };
  void Arrive(NetMessage& msg);
  Arrival arrival_;
  NsToTime send_delay_, dma_offset_, ring_offset_;
  bool Transfer(tlm::tlm_command cmd, uint64_t addr, uint8_t* data, uint64_t len);
  void MmioTransport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay);
  HostCpu::Socket* cpu_;
  // Contract 14.
  class CpuPath : public engine::HostBus {
   public:
    explicit CpuPath(NicSlot* slot) : slot_(slot) {}
    bool Read(uint64_t addr, uint8_t* dst, uint64_t len) override {
      return slot_->CpuTransfer(tlm::TLM_READ_COMMAND, addr, dst, len, tag());
    }
    bool Write(uint64_t addr, const uint8_t* src, uint64_t len) override {
      return slot_->CpuTransfer(tlm::TLM_WRITE_COMMAND, addr, const_cast<uint8_t*>(src), len, tag());
    }

   private:
    NicSlot* slot_;
  };
  bool CpuTransfer(tlm::tlm_command cmd, uint64_t addr, uint8_t* data, uint64_t len,
                   const engine::DmaTag& tag);
  CpuPath cpu_path_{this};
  tlm::tlm_generic_payload cpu_gp_;
  DmaExtension cpu_ext_;
  std::vector<engine::Nic*> attached_;  // Attach
  HostMemory* memory_ = nullptr;  // contract 12's record (the platform's host memory)
  // Contract 8: a driver's write takes its turn (a model call) and goes to the newest NIC
  // of a Backend alive (nullptr: none, or no turn).
  static void TakeDriversTurn(std::optional<ModelCall>* call);
  engine::Nic* DriversNic(const std::optional<ModelCall>& call) const;
  // Contract 13: the command mailbox (engine/command_port.h contract 1).
  void CommandAccess(tlm::tlm_generic_payload& gp);
  uint64_t cmd_in_[engine::command::kWords] = {};
  uint64_t cmd_out_[engine::command::kWords] = {};
  uint32_t cmd_status_ = 0;
  tlm::tlm_generic_payload mmio_gp_;
  MmioExtension mmio_ext_;
  std::vector<uint8_t> mmio_data_;
  tlm::tlm_generic_payload gp_;  // reused: one transaction at a time (contract 2)
  DmaExtension ext_;             // set on gp_ for good (contract 6)
  DmaCounters counters_;
  ScClock::BlockProcesses blocks_;  // contract 15: made with the module, its children
  ScClock::BlockProcesses* world_blocks_ = nullptr;
};

class Platform : public sc_core::sc_module {
 public:
  static constexpr int kSlots = 16;

  // Contract 1: the platform, or nullptr when SystemC started before it could be built.
  static Platform* Get();
  // kernel.cc: builds it if SystemC is still elaborating (once).
  static void Elaborate();

  // Contract 7. False (nothing set) when the platform exists already.
  using Binder = std::function<void(int slot, tlm_utils::simple_initiator_socket<NicSlot>& dma,
                                    HostMemory::Socket& memory)>;
  static bool SetBinder(Binder binder);
  // Contract 8. False (nothing set) when the platform exists already.
  using MmioBinder = std::function<void(int slot, HostCpu::Socket& cpu,
                                        tlm_utils::simple_target_socket<NicSlot>& nic)>;
  static bool SetMmioBinder(MmioBinder binder);
  // Contract 9. False (nothing set) when the platform exists already.
  using NetBinder = std::function<void(int slot, NicSlot& nic, Fabric& fabric)>;
  static bool SetNetBinder(NetBinder binder);
  // Contract 11. False (nothing set) when the platform exists already.
  using CpuBinder = std::function<void(int slot, HostCpu::Socket& cpu, HostMemory::Socket& memory)>;
  static bool SetCpuBinder(CpuBinder binder);

  NicSlot& slot(int device) { return *slots_[device % kSlots]; }
  HostMemory& memory() { return memory_; }
  HostCpu& cpu() { return cpu_; }
  Fabric& fabric() { return fabric_; }
  // Contract 6; an empty function turns it off.
  static void SetObserver(DmaObserver observer);
  static const DmaObserver& observer();
  // Contract 9: every message at a net_in; an empty function turns it off.
  static void SetNetObserver(NetObserver observer);
  static const NetObserver& net_observer();

 private:
  explicit Platform(sc_core::sc_module_name name);
  HostMemory memory_;
  HostCpu cpu_;
  Fabric fabric_;
  // Contract 15: the World's own processes (qptwin_platform.cqe_visible, .roce_in).
  ScClock::BlockProcesses world_blocks_{ScClock::BlockProcesses::Of::kWorld};
  std::vector<std::unique_ptr<NicSlot>> slots_;
};

}  // namespace qptwin::model::sim
