// The SystemC model of an RDMA NIC behind spec/backend.h.
//
// Contract:
//  1. MakeModelBackend() fails only for an unknown profile (ProfileNames() lists the known
//     ones: "rxe", "ibta", "cx6-100g", "cx6-dc"), on a thread that may not use the
//     model (5), when the program started SystemC's simulation before the first model
//     Backend (3), or when the program set SystemC's time resolution coarser than 1 ns:
//     nullptr, with the reason in *why when given.
//  2. Devices are named "mdev0", "mdev1", ... (ModelOptions.devices of them), one port each,
//     all connected by one fabric; QPs on the same or different devices talk to each other
//     (and, through an attached RoceBridge, to other backends' or processes' devices).
//  3. SystemC's scheduler is the model's clock (model/sim/sc_clock.h): every block of the
//     engine a SystemC process. The devices sit on a SystemC platform elaborated once per
//     process before the first sc_start (model/sim/platform.h): every payload byte a device
//     moves to or from host memory, every WQE it fetches and every CQE it writes is a
//     TLM-2.0 transaction through its slot's initiator socket (ModelDmaCounters,
//     ModelInjectDmaError, SetModelDmaObserver below). Simulated time runs only inside Backend::Advance, FlushRoce
//     and the Device's Wait*/GetCqEvent calls (each at most 2^50 ns, about 13 simulated days; longer ones are cut there),
//     in a PostSend that runs to completion (Behaviour::post_send_runs_to_completion), in a DestroyQp
//     that waits (ControlTiming::destroy_qp_bound_mw_wait_ns), and in a verb called while the
//     host is stalled (engine::World::StallHost: the program runs only when that ends).
//     Same scenario + same ModelOptions (seed) -> same results and times, every run.
//  4. Many Backends may exist in one process, one after another or side by side; each has
//     its own clock starting at 0 (NowNs()).
//  5. Threading: spec/backend.h, contract 5 (all model Backends of a process belong to the
//     thread that made the first one; calls from other threads fail with EPERM), except
//     that a front end serializing every call itself may hand them to another thread and
//     back (MoveModelThread).
//  6. Inside a simulation the program runs itself (a SystemC user's sc_main that calls
//     sc_start): make the Backend before sc_start (it elaborates the platform, 3), then
//     make the model calls from a thread process (SC_THREAD) of the program. A call that
//     waits (WaitForCompletions, Wait*, Advance, a PostSend that runs to completion) waits
//     with SystemC's wait(), so the program's other processes run meanwhile, and returns
//     with sc_time_stamp() at the model's time (model/sim/sc_clock.h contract 8); between
//     calls the devices go on by themselves as SystemC's time passes. Several threads may
//     make calls (a driver per host, on one Backend or several): their calls take turns,
//     a call never runs inside another, and a waiting call lets the others in
//     (model/sim/kernel.h contract 7). From a method process no time passes in such a
//     call, and it fails (EPERM) while a thread's call is under way.
//     examples/systemc/verbs_in_simulation.cc; model/model_in_simulation_test.cc.
//  7. MakeModelBackendOn: the devices on NIC modules a program made itself (model/systemc/
//     nic.h, qptwin::sc::Nic: each is a sim::NicSlot) instead of the platform's slots; the
//     platform is not needed, so it may be made while SystemC elaborates (a module's
//     before_end_of_elaboration). Everything else is as for MakeModelBackend's devices,
//     but for what is the platform's own: ModelDmaCounters and ModelInjectDmaError are the
//     platform's slots' (a Nic has counters() of its own, and faults are its memory
//     model's), and the observers (SetModelDmaObserver, SetModelNetObserver) see the
//     devices' transfers with their Nic's index as the slot, beside the platform's. When
//     such a Backend goes (on the kernel's thread), its devices' NICs leave the program's
//     modules: a Device that lives on (it keeps the engine) moves nothing more through
//     them (every transfer fails, an error completion), so the modules may go first.
//
// main(): nothing special is needed. A binary with its own main() (the CLI) just links
// //model:model_backend; the SystemC kernel starts lazily on first use (sc_start from any
// main). libsystemc.so exports a main() of its own that calls sc_main(): the model provides
// a weak sc_main so such binaries link, and test binaries link //model/sim:test_main
// (a strong sc_main running GoogleTest) instead of gtest_main. RunWithSystemC() silences
// SystemC's banner and calls fn(argc, argv); using it is optional.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "model/dma_counters.h"
#include "spec/backend.h"

namespace qptwin::model {

namespace sim {
class NicSlot;
}
namespace engine {
class HostBus;
}

// A retry from behind a WQE's first PSN makes a software device step through about 2^24
// packets (rxe: NicTiming::retry_skip_ps_per_packet, ~0.9 s in tools/rxe-vm). What the
// host's program does meanwhile is the host's scheduling, not the device's; measured on rxe
// (docs/differences.md rows 127 and 136), each of these happens to the same program:
enum class RetrySkip {
  kUntimed,  // the loop takes no time (what a program whose waits outlast it sees)
  kStalled,  // it runs on the program's CPU: the program waits for it (World::StallHost)
  kBeside,   // it runs on another CPU: the program goes on; the QP's requester and its
             // flush wait for the loop
  kJoins,    // beside, until the program's K-th wake-up after the loop starts (a sleep's
             // end or a wait's: the scheduler may place it on the CPU the softirq holds,
             // which looks idle); from there stalled (ModelOptions::retry_skip_joins_at)
};
const char* ToName(RetrySkip r);  // "untimed", "stalled", "beside", "joins"
struct ModelOptions;
// Sets opts->retry_skip, retry_skip_joins_at and retry_skip_wakes_late_us from "untimed",
// "stalled", "stalled:D" (1 <= D <= 100000 microseconds), "beside" or "joins:K"
// (1 <= K <= 64); false (opts unchanged) for anything else.
bool ParseRetrySkip(const std::string& name, ModelOptions* opts);

struct ModelOptions {
  std::string profile = "rxe";
  int devices = 2;  // device names "mdev0", "mdev1", ...
  double loss_rate = 0;  // probability that one packet is lost on the wire (0..1)
  uint64_t seed = 1;     // for loss injection; deterministic
  // false: the profile's NIC context caches are off (timing.h contract 5; `qptwin bench
  // --cache off`); true keeps what the profile says (cx6-*: on; rxe, ibta: none).
  bool context_cache = true;
  // Per device (host byte order; empty or 0: the default GIDs): the address of its RoCE
  // port when packets may leave the process (RoceBridge below): GID 0 becomes
  // ::ffff:<ip>, GID 1 fe80::<ip>, and on an IB profile the LID the address's low 16 bits.
  std::vector<uint32_t> ipv4;
  // Where the host kernel's ticks fall (a profile with NicTiming::timer_tick_ns, e.g. rxe),
  // as a fraction of a tick in [0, 1): timer_tick_phase_ns = tick_phase * timer_tick_ns. A
  // program on a real host starts at an arbitrary point of the tick; 0 is the model's default.
  double tick_phase = 0;
  RetrySkip retry_skip = RetrySkip::kUntimed;  // the host during a retry's skip loop
  int retry_skip_joins_at = 0;                  // RetrySkip::kJoins: its K (>= 1)
  // RetrySkip::kStalled, kJoins: the program runs again this long after the loop's end, not
  // at once (the CPU the softirq held first works off what it kept waiting: "stalled:D").
  uint64_t retry_skip_wakes_late_us = 0;
};

std::unique_ptr<Backend> MakeModelBackend(const ModelOptions& opts, std::string* why = nullptr);

// Contract 7: where one device sits when its NIC is a module of the program's own.
struct SlotPorts {
  sim::NicSlot* slot = nullptr;     // its DMA, MMIO (doorbells, commands), network, traces
  engine::HostBus* cpu = nullptr;   // the provider's CPU accesses (engine/host_bus.h 7)
};
// Contract 7: a Backend whose device k is on slots[k] instead of the platform's slot k
// (opts.devices is not used). nullptr, with the reason in *why, as MakeModelBackend, or
// for no slot or a null one.
std::unique_ptr<Backend> MakeModelBackendOn(const ModelOptions& opts,
                                            const std::vector<SlotPorts>& slots,
                                            std::string* why = nullptr);

// "rxe", "ibta", ...
std::vector<std::string> ProfileNames();

// The context-cache counters of model device `device` of `backend` (timing.h contract 5),
// one per kind (QPC, MPT, MTT, WQE) with the kind's capacity in entries; empty when
// `backend` is not a model backend, the device does not exist or its cache is off.
struct CacheCounter {
  std::string kind;
  uint32_t entries = 0;
  uint64_t hits = 0;
  uint64_t misses = 0;
};
std::vector<CacheCounter> ModelCacheCounters(Backend* backend, int device);

// SystemC's own speed in this process, now (model/sim/kernel.h contract 6): `activations`
// of a trivial SC_METHOD and of a trivial SC_THREAD, per wall second; the yardstick of
// `qptwin bench --vs-systemc`. {0, 0} off the SystemC kernel's thread.
struct SystemCRates {
  double method_per_s = 0;  // per wall second
  double thread_per_s = 0;
  double method_per_cpu_s = 0;  // per second of the process's CPU time
  double thread_per_cpu_s = 0;
};
SystemCRates MeasureSystemCRates(uint64_t activations);

// The model's DMA (contract 3; model/sim/platform.h): device k of every Backend
// MakeModelBackend made is the platform's slot k % 16 (not a program's own Nic: contract 7). Counters since the process started, zero for a bad slot.
DmaCounters ModelDmaCounters(int slot);
// A PCIe error for tests: every model DMA touching [addr, addr + len) fails (the host
// memory answers TLM_ADDRESS_ERROR_RESPONSE, no byte moves) until ModelClearDmaErrors().
// The device completes with an error instead (model/engine/host_bus.h contract 2). False
// off the kernel's thread or without a platform.
bool ModelInjectDmaError(const void* addr, uint64_t len);
void ModelClearDmaErrors();
// A memory region at a bus address of the platform (model/engine/memory.h contract 4), for
// a SystemC program whose own memory model holds those bytes (Platform::SetBinder routes
// the NIC slots' DMA to it): ibv_reg_mr's checks, keys and cost on `device` (a Device of a
// model Backend), but no buffer in this process; every byte of the region moves as a TLM
// transaction at [addr, addr + length), a WRITE's data, a READ's source, a SEND's payload,
// a receive's data, an atomic. Deregister it with the Device's DeregMr. The post's CPU
// copy of inline data from it is the CPU's read through the platform (platform.h contract
// 11: "INLINE_READ"; an error answer refuses the WR with EFAULT). Addresses nobody of the
// program's answers are host memory's address errors (platform.h contract 12): error
// completions, never this process's bytes. A ReregMr with a new translation is EINVAL (it
// could not name an address: register again). EINVAL: not a model device, a zero length
// or one that wraps the address space, and RegMr's own; ENOMEM beyond RegMr's 64 GiB;
// EPERM off the kernel's thread.
int ModelRegMrAt(Device* device, PdHandle pd, uint64_t addr, size_t length,
                 AccessFlags access, MrHandle* out, uint32_t* lkey, uint32_t* rkey);
// Queue memory at bus addresses of the platform (model/engine/queue_memory.h), for a
// SystemC program whose own memory model holds it (Platform::SetBinder and SetCpuBinder
// route the NIC's DMA and the provider's CPU to it): from this call on, every CQ, QP and
// SRQ made on `device` keeps its ring and its doorbell record in [addr, addr + length),
// each queue one block of its whole depth, first fit, given back when the queue is
// destroyed. The NIC's WQE fetches, CQE writes and record reads, and the provider's WQE
// writes, CQE reads and record writes, are then TLM transactions at those addresses; no
// byte of a queue is in this process. A create that finds no room fails with ENOMEM (a
// resize likewise, the queue as it was). Length 0: later queues are this process's memory
// again (queues made before keep their blocks). Addresses nobody of the program's answers
// are host memory's address errors (platform.h contract 12). The same window again (also one
// set before whose queues still hold blocks) takes it back. The window is the device's: it
// stays across a close and a new OpenDevice of it. EBUSY: the window overlaps another
// device's window, or one whose queues still hold blocks there (of any device of this
// Backend); windows of two Backends are not checked against each other. EINVAL:
// not a model device, or a range that wraps the address space; EPERM off the kernel's thread.
int ModelQueueMemoryAt(Device* device, uint64_t addr, size_t length);
// The send ring of a QP whose queues are in queue memory (ModelQueueMemoryAt), for a driver
// of the program's own that posts without this library (engine/doorbell_port.h contract 6):
// it writes the WQE with index n (the producer before it, wrapping) as
// model/engine/send_wqe_image.h lays one out (n + 1 at header byte 100) into slot
// n mod `slots` at `addr` + slot * `stride`, then writes the doorbell (8 bytes at
// sim::NicSlot::kDoorbellOffset of its slot's MMIO: `qpn`, then the new producer) through
// any initiator on the path to the slot's `mmio` socket. `producer` is the index the next
// WQE takes. ENOENT: no such QP; EINVAL: not a model device, or the QP's ring is this
// process's memory; EPERM off the kernel's thread.
struct SendRing {
  uint64_t addr = 0;
  uint32_t slots = 0;
  uint32_t stride = 0;
  uint32_t producer = 0;
  uint32_t qpn = 0;
};
int ModelSendRing(Device* device, QpHandle qp, SendRing* out);
// The receive ring of a QP in queue memory (not one on an SRQ), for the same driver: it
// writes receive n (model/engine/recv_queue.h contract 2: u32 SGE count, u64 wr_id at byte
// 8, the SGEs from byte 16) into slot n mod `slots` at `addr` + slot * `stride`, then the
// new producer (u32) at `record`; the NIC reads the record when it needs a receive (contract
// 5) and at a flush. A queue takes its receives from the driver or from ibv_post_recv, not
// both (each writes its own producer into the record). `producer`: the record's value as
// the provider last wrote it. Errors as ModelSendRing's (EINVAL also for a QP on an SRQ).
struct RecvRing {
  uint64_t addr = 0;
  uint64_t record = 0;
  uint32_t slots = 0;
  uint32_t stride = 0;
  uint32_t producer = 0;
};
int ModelRecvRing(Device* device, QpHandle qp, RecvRing* out);
// The same for an SRQ in queue memory: the driver writes its receives there as into a QP's
// ring, and every QP on the SRQ takes them. Its SRQ limit (ibv_modify_srq srq_limit)
// counts the receives the NIC knows of: the record's value it read last (it reads the
// record when that value shows none left), less those taken; receives posted since that
// read are not counted, so the event may come early, never late. A resize (max_wr) moves
// the receives not taken, the driver's too (up to the record's producer), to the new
// ring's front and refuses (EINVAL) a ring too small for them; take the ring again after
// it (the producer goes on). ENOENT: no such SRQ; EINVAL: not a
// model device, or the ring is this process's memory; EPERM off the kernel's thread.
int ModelSrqRing(Device* device, SrqHandle srq, RecvRing* out);
// A CQ's ring in queue memory, for the same driver's own poll: `slots` CQEs of 64 bytes
// from `addr` (model/engine/cq.h contract 5: the layout; byte 63 the owner, 1 on the
// ring's first pass, 0 on the second, ...), and the consumer record (u32: the CQEs the
// driver took) the NIC reads when it sees the ring full (contract 6). A CQ takes its polls
// from the driver or from ibv_poll_cq, not both. A resize (ibv_resize_cq) places the ring
// anew (contract 7): the CQEs the driver has not taken (by the record) move to its front,
// and the owner byte, the record and the arm's index count from 0 again; take the ring
// again after it. ENOENT: no such CQ; EINVAL: not a model
// device, or the ring is this process's memory; EPERM off the kernel's thread.
struct CqRing {
  uint64_t addr = 0;
  uint64_t record = 0;
  uint32_t slots = 0;
  uint32_t cqn = 0;  // the CQ's number, for the arm (ModelCqEvent)
};
int ModelCqRing(Device* device, CqHandle cq, CqRing* out);
// Interrupts for the same driver (model/engine/cq.h contract 8): once set, an arm the driver
// writes through its slot's MMIO (8 bytes at sim::NicSlot::kCqArmOffset: `cqn`, bits 0-31;
// the CQEs it took from the ring since it was placed, modulo 2^24, bits 32-55; bit 56 for
// solicited and error CQEs only) makes the NIC write the 4 bytes `data` (little-endian) to
// bus address `addr` through its DMA socket (kind "CQ_EVENT"), as an MSI-X write: at the
// next CQE written after the arm, right after that CQE's write, or at once when the ring
// already holds CQEs the driver has not taken (an arm without bit 56). One event per arm.
// An arm of a CQ with no event set, or of no CQ, is ignored. ENOENT: no such CQ; EINVAL:
// not a model device, or the ring is this process's memory; EPERM off the kernel's thread.
int ModelCqEvent(Device* device, CqHandle cq, uint64_t addr, uint32_t data);
// Every model DMA of the process as it completes (a TLM transaction; platform.h contract 6):
// the slot (device index), what it was for ("PAYLOAD_READ", "WRITE_DATA", "READ_SOURCE",
// "ATOMIC", "RECV_DATA", "RESPONSE_DATA", "CQE", "RECV_WQE", "SEND_WQE", "RECV_DBREC",
// "CQ_DBREC", "CQ_EVENT"; "DOORBELL" is the MMIO write), the QP number, the
// Backend's time (NowNs) when the engine issued it, direction, the bus address (a pointer of
// this process, or a ModelRegMrAt region's address), bytes and outcome. The provider's CPU
// accesses (platform.h contract 11) are not DMA and not listed. An empty function turns it off. Claims the kernel
// and elaborates the platform like MakeModelBackend; false on another thread or when
// SystemC's simulation started first (contract 1).
struct DmaTransfer {
  int slot = 0;
  const char* kind = "";
  uint32_t qpn = 0;
  uint64_t time_ns = 0;
  bool write = false;
  uint64_t addr = 0;
  uint64_t bytes = 0;
  bool ok = true;
};
bool SetModelDmaObserver(std::function<void(const DmaTransfer&)> fn);

// Every message between two devices of a model backend as it reaches the far device's
// network port on the platform (model/sim/platform.h contract 9): times in the backend's ns.
// Same rules as SetModelDmaObserver.
struct NetTransfer {
  int src_slot = 0;
  int dst_slot = 0;
  std::string_view kind;  // SEND, WRITE, READ_REQ, ATOMIC, ACK, NAK, READ_RESP, ATOMIC_RESP
  uint32_t src_qpn = 0;
  uint32_t dst_qpn = 0;
  uint32_t psn = 0;
  uint32_t packets = 0;
  uint64_t payload_bytes = 0;
  uint64_t wire_bytes = 0;
  uint64_t leave_ns = 0;
  uint64_t arrive_ns = 0;
};
bool SetModelNetObserver(std::function<void(const NetTransfer&)> fn);

// Whether the buffers of deregistered small regions are kept for reuse (default: yes, every
// backend of the process; model/engine/memory.h). A program that maps pages of its own over
// region buffers (the verbs preload) turns it off before it makes a backend.
void KeepRegionMappings(bool on);

// RoCE v2 between processes (issue 13; engine/world.h contract 5, engine/roce_codec.h).
// Attached to a model backend, a GID (or IB LID) no device of the backend has is a port
// outside: messages to it leave as RoCE v2 datagrams through Send (at the simulated time
// their last byte leaves), and datagrams given to InjectRoceDatagram enter the device they
// were addressed to. The bridge owns sockets and the pacing of time; the model owns the
// codec and the reassembly. Everything runs on the model's thread (contract 5).
class RoceBridge {
 public:
  virtual ~RoceBridge() = default;
  // The first address outside the backend was resolved: traffic may leave from now on.
  virtual void Activate() = 0;
  // One datagram (UDP payload: BTH .. ICRC) from `device`'s address to dst_ip:4791.
  virtual void Send(int device, uint32_t dst_ip, const uint8_t* data, size_t len) = 0;
  // Where the model finds [va, va + len) of region `rkey` of `device` (a request from
  // outside names the peer program's addresses); return va when it is not known.
  virtual uint64_t TranslateRemote(int device, uint32_t rkey, uint64_t va, uint64_t len) = 0;
};
// False when `backend` is not a model backend. nullptr detaches.
bool AttachRoceBridge(Backend* backend, RoceBridge* bridge);
// A datagram that arrived for `device` from src_ip:src_port (host order). 0: taken (kept
// as part of a message, or the message was delivered); EINVAL: rejected (malformed, bad
// ICRC, out of sequence: as lost on the wire); ENODEV: no such device or no bridge.
int InjectRoceDatagram(Backend* backend, int device, uint32_t src_ip, uint16_t src_port,
                       const uint8_t* data, size_t len);
struct RoceCounters {
  uint64_t datagrams_sent = 0, datagrams_received = 0, datagrams_rejected = 0;
  uint64_t messages_sent = 0, messages_received = 0, unroutable = 0;  // to a non-IPv4 GID
};
RoceCounters ModelRoceCounters(Backend* backend);
// Runs simulated time until no message is on its way out of the backend (Send has been
// called for everything transmitted so far), at most `max_ns`. False when some is left.
bool FlushRoce(Backend* backend, uint64_t max_ns);

// Contract 5: every model Backend of the process now belongs to thread `to` when it belonged
// to `from` (false, nothing changed, otherwise). The caller guarantees that `from` makes no
// model call until they are handed back (e.g. it holds a lock `from` takes around each
// call): tools/exec's progress thread runs the model between the program's calls.
bool MoveModelThread(std::thread::id from, std::thread::id to);

int RunWithSystemC(int argc, char** argv, const std::function<int(int, char**)>& fn);

}  // namespace qptwin::model
