// A NIC's DMA port to host memory: every payload byte the engine moves between a message and
// a registered region, every send and receive WQE it fetches (send_wqe_image.h,
// recv_queue.h), every doorbell or consumer index record it reads (recv_queue.h contract 5,
// cq.h contract 6) and every CQE it writes (cq.h contract 5) crosses it (issue 12,
// ARCHITECTURE.md's "DMA (initiator socket to host memory)").
//
// Contract:
//  1. Addresses are the host's bus addresses of the bytes; in model_backend the region
//     buffers' own addresses (memory.h contract 1: a region is [buf, buf + length)), or a
//     bus address of the platform's for a region registered there (memory.h contract 4,
//     model_backend.h ModelRegMrAt: a SystemC user's memory model) and for the rings and
//     records of a device with queue memory (queue_memory.h, ModelQueueMemoryAt).
//  2. The engine checks keys, PDs, rights and bounds (memory.h, window.h) before it issues a
//     transfer: a transfer names only bytes of a region that allows it. A transfer that
//     still fails (false: the target answered with an error, e.g. an injected PCIe error)
//     becomes an error completion, never a crash: the requester's payload read
//     kLocProtErr; a READ response's or atomic result's write into the requester's SGEs
//     kLocProtErr; a receive's write the receive's local error (responder.cc); the
//     responder's WRITE, READ source or atomic access a NAK remote operational error
//     (the requester's kRemOpErr), rxe's answer to a responder-side copy that fails; a
//     CQE's write a CQ error like an overrun (cq.h contract 5); a receive WQE's fetch
//     LOC_QP_OP_ERR on that receive, as a malformed WQE (responder.cc ReceiveSendLike); a
//     send WQE's fetch LOC_QP_OP_ERR on each WQE of that post (requester.cc); a receive
//     queue's doorbell record read no receive seen (RNR NAK or drop, recv_queue.h 5); a
//     CQ's consumer index record read a full CQ, an overrun (cq.h 6). (The CPU's accesses:
//     contract 7.)
//  3. Time: a transfer is issued at the engine's current time and its cost is the
//     profile's (timing.h: pcie_read_ns, pcie_gbps, the responder's figures), already in
//     the engine's arithmetic. A bus may report extra time its target took (delay_total():
//     the sum of every transfer's, in ns; model/sim/platform.h: the delay a TLM target
//     returns), and the engine adds it where it waits for the transfer: a send WQE fetch
//     to when the NIC has the post's WQEs, a payload read to when the message can leave,
//     a responder's transfers to when its ACK/NAK/response can leave and its receive's CQE
//     can be written, a CQE's write to when the CQE is visible, and the requester's write
//     of READ data or an atomic result to when that WQE's CQE can be written; a receive
//     queue's doorbell record read (recv_queue.h contract 5) counts as the responder's, a
//     CQ's consumer index record read (cq.h contract 6) as that CQE's write. The default
//     bus reports 0.
//  4. Not DMA, so not here: the provider's CPU work (copying inline data into the WQE,
//     writing WQEs into their queues and their doorbell records, reading CQEs at a poll
//     and writing the CQ's consumer index record) and BlueFlame (a single
//     inline WQE that comes with the doorbell's MMIO write, timing.h wqe_by_mmio).
//     The CPU's accesses cross a bus of their own: contract 7.
//  5. An atomic is a read and a write of the same 8 bytes with nothing between them (the
//     engine is single-threaded, sim::ScClock contract 5).
//  6. Before its transfers the engine tells the bus what they are (Tag: the kind, the QP
//     and the engine's time), so a bus can label and trace them (model/sim/platform.h puts
//     it in a TLM extension); a bus may ignore it.
//  7. The provider's CPU has a bus of its own (Nic::SetCpuBus; the same interface, tags
//     with by_cpu set): its writes of send WQE images (kSendWqe), receive WQEs (kRecvWqe)
//     and receive doorbell records (kRecvDbRec), its reads of CQEs at a poll (kCqe) and
//     its write of the CQ's consumer index record (kCqDbRec), and its read of inline data
//     from a region at a bus address (kInlineRead). Where Direct(addr, len) gives a
//     pointer (TLM's DMI: the default bus, or the platform's host memory) the CPU works on
//     the bytes in place, as a CPU model with a DMI pointer does; otherwise each access is
//     a Read or Write. The CPU's accesses take no time of the engine's (the host's post
//     and poll costs are the profile's, timing.h), and a delay the bus reports is not
//     counted. A failed CPU access: a send WQE image's write makes that WQE malformed, the
//     NIC completes it with LOC_QP_OP_ERR as a failed fetch (its slot holds another
//     image); a receive WQE's or a record's write leaves the bytes as they were (the NIC
//     fetches what memory holds, checked as any receive's SGEs are); a CQE read returns
//     the CQE as the engine wrote it; an inline read refuses the WR with EFAULT
//     (Nic::PostSend).
//  8. Ranges of the program's (model_backend.h ModelRegMrAt's regions, ModelQueueMemoryAt's
//     windows): the engine holds such a range on its NIC's bus for as long as it may touch
//     it (HoldProgramRange: the region until it is deregistered or its device goes, the
//     window until it is replaced, or its device goes, and its last queue goes), so the
//     bus can keep its own memory off those
//     addresses (model/sim/platform.h contract 12). The default bus keeps no record.
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>

namespace qptwin::model::engine {

// What a transfer is for (contract 6).
enum class DmaKind : uint8_t {
  kPayloadRead,   // the requester reads a SEND/WRITE's payload
  kWriteData,     // the responder writes an RDMA WRITE's data
  kReadSource,    // the responder reads an RDMA READ's data
  kAtomic,        // the responder's read and write of an atomic's 8 bytes
  kReceiveData,   // the responder writes a SEND into a receive's SGEs
  kResponseData,  // the requester writes READ data or an atomic's result into its SGEs
  kCqe,           // a CQE into its CQ's ring (cq.h contract 5)
  kRecvWqe,       // the responder fetches a receive WQE (recv_queue.h contract 3)
  kSendWqe,       // the NIC fetches a post's send WQEs (send_wqe_image.h)
  kRecvDbRec,     // the responder reads a receive queue's doorbell record (recv_queue.h 5)
  kCqDbRec,       // the NIC reads a CQ's consumer index record (cq.h contract 6)
  kDoorbell,      // not DMA: the host's MMIO doorbell write to the NIC (doorbell_port.h),
                  // labelled alike on the platform (model/sim/platform.h contract 8)
  kInlineRead,    // not DMA: the provider's CPU reads a post's inline data from a region
                  // at a bus address (memory.h contract 4), through its own bus (7)
  kCqEvent,       // the NIC's interrupt write for a driver's armed CQ (cq.h contract 8)
  kEqe,           // an asynchronous event into a driver's event queue (nic.h CreateEq)
  kEqEvent,       // the NIC's interrupt write for a driver's armed event queue
};
inline constexpr int kNumDmaKinds = 16;
const char* ToName(DmaKind k);

struct DmaTag {
  DmaKind kind = DmaKind::kPayloadRead;
  uint32_t qpn = 0;     // the QP the transfer works for (a CQE: its qp_num)
  uint64_t now_ns = 0;  // the engine's time (World::events().Now())
  bool by_cpu = false;  // contract 7: the provider's CPU, not the NIC
};

// The bus address of a byte of this process (contract 1, model_backend's regions).
inline uint64_t Addr(const void* p) { return reinterpret_cast<uint64_t>(p); }

class HostBus {
 public:
  virtual ~HostBus() = default;
  // `len` bytes at `addr` into `dst`; false when the transfer failed.
  virtual bool Read(uint64_t addr, uint8_t* dst, uint64_t len) = 0;
  // `len` bytes from `src` to `addr`; false when the transfer failed.
  virtual bool Write(uint64_t addr, const uint8_t* src, uint64_t len) = 0;
  // Contract 7: the bytes [addr, addr + len) to read and write in place, or nullptr.
  // Inline (every WQE image and CQE asks): the range granted last, else DirectMiss.
  uint8_t* Direct(uint64_t addr, uint64_t len) {
    if (direct_ && len != 0 && addr >= direct_lo_ && addr <= direct_hi_ &&
        len - 1 <= direct_hi_ - addr) {
      return reinterpret_cast<uint8_t*>(direct_base_ + (addr - direct_lo_));
    }
    return DirectMiss(addr, len);
  }
  // Contract 6: what the transfers that follow are (a bus reads tag() in Read/Write).
  void Tag(const DmaTag& tag) { tag_ = tag; }
  const DmaTag& tag() const { return tag_; }
  // Contract 3: extra target time of every transfer so far, ns.
  uint64_t delay_total() const { return delay_total_; }
  // Contract 8: [addr, addr + len) is the program's while the handle lives (null: no record).
  virtual std::shared_ptr<void> HoldProgramRange(uint64_t /*addr*/, uint64_t /*len*/) {
    return nullptr;
  }
  // Whether this process's memory is on the bus (its addresses answered): false for a
  // program's own NIC module, whose queues must then be in queue memory (nic.h CreateCq).
  virtual bool ReachesProcessMemory() const { return true; }

 protected:
  void AddDelay(uint64_t ns) { delay_total_ += ns; }
  // Direct's range: [lo, hi] at the pointer `base` (integer: a base of 0 is address 0).
  void GrantDirect(uint64_t lo, uint64_t hi, uintptr_t base) {
    direct_ = true;
    direct_lo_ = lo;
    direct_hi_ = hi;
    direct_base_ = base;
  }
  void RevokeDirect() { direct_ = false; }
  // Outside the range granted (or none yet): a pointer, or nullptr; may GrantDirect.
  virtual uint8_t* DirectMiss(uint64_t /*addr*/, uint64_t /*len*/) { return nullptr; }

 private:
  DmaTag tag_;
  uint64_t delay_total_ = 0;
  bool direct_ = false;
  uint64_t direct_lo_ = 0, direct_hi_ = 0;
  uintptr_t direct_base_ = 0;
};

// Addresses are pointers of this process: a memcpy (engine unit tests, and a World that was
// given no other bus).
inline const char* ToName(DmaKind k) {
  switch (k) {
    case DmaKind::kPayloadRead: return "PAYLOAD_READ";
    case DmaKind::kWriteData: return "WRITE_DATA";
    case DmaKind::kReadSource: return "READ_SOURCE";
    case DmaKind::kAtomic: return "ATOMIC";
    case DmaKind::kReceiveData: return "RECV_DATA";
    case DmaKind::kResponseData: return "RESPONSE_DATA";
    case DmaKind::kCqe: return "CQE";
    case DmaKind::kRecvWqe: return "RECV_WQE";
    case DmaKind::kSendWqe: return "SEND_WQE";
    case DmaKind::kRecvDbRec: return "RECV_DBREC";
    case DmaKind::kCqDbRec: return "CQ_DBREC";
    case DmaKind::kDoorbell: return "DOORBELL";
    case DmaKind::kInlineRead: return "INLINE_READ";
    case DmaKind::kCqEvent: return "CQ_EVENT";
    case DmaKind::kEqe: return "EQE";
    case DmaKind::kEqEvent: return "EQ_EVENT";
  }
  return "?";
}

// Contract 7: the CPU writes the `len` bytes `make(dst)` builds at `addr` of `cpu`, in
// place when the bus gives a pointer, else built in `scratch` (len bytes) and written;
// false when that write failed (memory keeps what it held).
template <class Make>
bool CpuPut(HostBus& cpu, uint64_t addr, uint64_t len, uint8_t* scratch, Make make) {
  if (uint8_t* p = cpu.Direct(addr, len)) {
    make(p);
    return true;
  }
  make(scratch);
  return cpu.Write(addr, scratch, len);
}

// A record's u32 (a doorbell or consumer index record, little-endian) written by the
// provider's CPU, tagged `kind` for that write (contract 7); false when it failed.
bool CpuPutRecord(HostBus& cpu, DmaKind kind, uint64_t addr, uint32_t value);

// Contracts 6 and 7: the transfers in this scope are `kind` (a record read or written
// beside the access the bus was tagged for); the tag is restored after.
class RetagAs {
 public:
  RetagAs(HostBus& bus, DmaKind kind) : bus_(bus), saved_(bus.tag()) {
    DmaTag t = saved_;
    t.kind = kind;
    bus_.Tag(t);
  }
  ~RetagAs() { bus_.Tag(saved_); }
  RetagAs(const RetagAs&) = delete;
  RetagAs& operator=(const RetagAs&) = delete;

 private:
  HostBus& bus_;
  DmaTag saved_;
};

inline bool CpuPutRecord(HostBus& cpu, DmaKind kind, uint64_t addr, uint32_t value) {
  const RetagAs record(cpu, kind);
  uint8_t word[4];
  return CpuPut(cpu, addr, sizeof word, word, [&](uint8_t* w) {
    for (int i = 0; i < 4; ++i) w[i] = static_cast<uint8_t>(value >> (8 * i));
  });
}

class DirectBus final : public HostBus {
 public:
  bool Read(uint64_t addr, uint8_t* dst, uint64_t len) override {
    if (len) std::memcpy(dst, reinterpret_cast<const uint8_t*>(addr), len);
    return true;
  }
  bool Write(uint64_t addr, const uint8_t* src, uint64_t len) override {
    if (len) std::memcpy(reinterpret_cast<uint8_t*>(addr), src, len);
    return true;
  }
  DirectBus() { GrantDirect(0, ~uint64_t{0}, 0); }  // addresses are pointers
  static DirectBus& Instance() {
    static DirectBus bus;
    return bus;
  }
};

// A bus to nothing: every transfer fails (the engine's error completion). A NIC whose
// slot went before it (a program's own NIC module destroyed while a Device keeps the World,
// model_backend.h contract 7) is left on it.
class UnboundBus final : public HostBus {
 public:
  bool Read(uint64_t, uint8_t*, uint64_t) override { return false; }
  bool Write(uint64_t, const uint8_t*, uint64_t) override { return false; }
  bool ReachesProcessMemory() const override { return false; }
  static UnboundBus& Instance() {
    static UnboundBus bus;
    return bus;
  }
};

}  // namespace qptwin::model::engine
