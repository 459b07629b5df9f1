// The host's side of a NIC's MMIO: the send doorbell a post rings (issue 12, "a target socket
// for doorbell/MMIO writes from the host side"). The engine's post is the provider's part
// (checks, the WQE images in the send queue's buffer, send_wqe_image.h); what the NIC does
// starts when the ring reaches it.
//
// Contract:
//  1. A post that rings (Nic::PostSend: WRs accepted, or a refused list where the device
//     rings anyway) calls Ring once, after the provider wrote the images of every WQE the
//     NIC has not fetched yet. Nothing of the NIC's for them happens before the ring arrives:
//     Nic::OnDoorbell fetches those WQEs (one DMA read, or the images the ring carries:
//     BlueFlame) and starts the requester.
//  2. The doorbell word is 8 bytes: the QP number (bits 0-31) and the send queue's producer
//     index (bits 32-63: the number of WRs posted to the QP, wrapping; the next post's
//     index, send_wqe_image.h contracts 3 and 4), as an mlx5 doorbell record holds the SQ's
//     WQE counter. A BlueFlame ring carries the WQE images after it (timing.h
//     wqe_by_mmio). The NIC fetches the WQEs before the producer it has not fetched.
//  3. A ring is synchronous and issued at the engine's current time; the write leaves the
//     host's CPU at host_ns (when the post call's work ends, timing.h contract 2: >= now),
//     so a port delivers it with host_ns - now_ns as its delay so far. `extra_ns` given to
//     Nic::OnDoorbell is when the write reached the NIC, after now: that delay plus what its
//     path added (the annotated delay at the TLM target, model/sim/platform.h contract 8).
//     The NIC's time for it starts there: doorbell_ns until the NIC sees it, then the WQE
//     fetch (timing.h contract 2; its DMA's own delay on the bus, host_bus.h contract 3).
//  4. WRs posted in ERR and flushed at once ring nothing (the flush needs no fetch: a NIC
//     reports a flushed WQE by its index).
//  5. The default port delivers at once (DirectDoorbell): engine unit tests, and a World
//     given no other port.
//  6. A driver of the program's own (examples/systemc/user_memory_test.cc) writes the
//     images itself (send_wqe_image.h: every field, the index at byte 100) into a QP's
//     ring in queue memory (model_backend.h ModelSendRing) and rings with a write that
//     carries no MmioExtension (DoorbellWrite::from_driver; model/sim/platform.h contract
//     8). The NIC makes the WQEs between the provider's producer and the ring's from what
//     it fetches: a slot whose image is not its post's, declares more than its slot holds,
//     whose inline bytes are not its length, or that breaks a posting rule
//     (spec/posting_rules.h: an opcode the QP cannot send, an unknown AH) completes
//     LOC_QP_OP_ERR, as rxe's requester ends a WQE it cannot run, with the wr_id it names
//     (0 where it names none). In RTS and SQD they run as posted WQEs do; in ERR and SQE
//     they are flushed as a post's are then. Below RTS, for a QP whose ring is the
//     process's memory, when they would hold more than max_send_wr WQEs outstanding (the
//     posting rules' room), or when the producer is not past the provider's, the ring is
//     ignored (the WQEs stay unknown: a later ring with a producer past them makes them).
//     DoorbellPort::Attach names the NIC such a ring goes to.
#pragma once

#include <cstddef>
#include <cstdint>

namespace qptwin::model::engine {

class Nic;

struct DoorbellWrite {
  uint32_t qpn = 0;
  uint32_t producer = 0;          // contract 2: the send queue's producer index
  bool from_driver = false;       // contract 6: a write of the program's own driver
  const uint8_t* images = nullptr;  // BlueFlame: the WQE images, else nullptr
  size_t image_bytes = 0;
  uint64_t now_ns = 0;  // the engine's time of the ring (a label, as DmaTag::now_ns)
  uint64_t host_ns = 0;  // contract 3: when the write leaves the host's CPU (>= now_ns)
  // Contract 3: the write's delay from now_ns until it leaves the CPU.
  uint64_t host_lag_ns() const { return host_ns > now_ns ? host_ns - now_ns : 0; }
};

class DoorbellPort {
 public:
  virtual ~DoorbellPort() = default;
  // Contract 1: hand the doorbell to `nic` (Nic::OnDoorbell) along the port's path.
  virtual void Ring(Nic& nic, const DoorbellWrite& db) = 0;
  // Contract 6: `nic` uses this port from now until Detach (the newest one takes the
  // rings of a program's own driver).
  virtual void Attach(Nic* nic) { (void)nic; }
  virtual void Detach(Nic* nic) { (void)nic; }
};

class DirectDoorbell final : public DoorbellPort {
 public:
  void Ring(Nic& nic, const DoorbellWrite& db) override;
  static DirectDoorbell& Instance() {
    static DirectDoorbell port;
    return port;
  }
};

}  // namespace qptwin::model::engine
