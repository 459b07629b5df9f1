// A NIC's DMA port to host memory: every payload byte the engine moves between a message and
// a registered region crosses it (issue 12, ARCHITECTURE.md's "DMA (initiator socket to host
// memory)").
//
// Contract:
//  1. Addresses are the host's bus addresses of the bytes; in model_backend the region
//     buffers' own addresses (memory.h contract 1: a region is [buf, buf + length)).
//  2. The engine checks keys, PDs, rights and bounds (memory.h, window.h) before it issues a
//     transfer: a transfer names only bytes of a region that allows it. A transfer that
//     still fails (false: the target answered with an error, e.g. an injected PCIe error)
//     becomes an error completion, never a crash: the requester's payload read
//     kLocProtErr; a READ response's or atomic result's write into the requester's SGEs
//     kLocProtErr; a receive's write the receive's local error (responder.cc); the
//     responder's WRITE, READ source or atomic access a NAK remote operational error
//     (the requester's kRemOpErr), rxe's answer to a responder-side copy that fails.
//  3. Time: a transfer is issued at the engine's current time and its cost is the
//     profile's (timing.h: pcie_read_ns, pcie_gbps, the responder's figures), already in
//     the engine's arithmetic; a bus adds no time of its own.
//  4. Not DMA, so not here: inline data (the provider's CPU copies it into the WQE at
//     post time, nic_post.cc) and the model's own objects (WQEs, CQEs: the engine's
//     queues, not yet host-memory rings; model/systemc/README.md, stage 2).
//  5. An atomic is a read and a write of the same 8 bytes with nothing between them (the
//     engine is single-threaded, sim::ScClock contract 5).
#pragma once

#include <cstdint>
#include <cstring>

namespace qptwin::model::engine {

// The bus address of a byte of this process (contract 1, model_backend's regions).
inline uint64_t Addr(const void* p) { return reinterpret_cast<uint64_t>(p); }

class HostBus {
 public:
  virtual ~HostBus() = default;
  // `len` bytes at `addr` into `dst`; false when the transfer failed.
  virtual bool Read(uint64_t addr, uint8_t* dst, uint64_t len) = 0;
  // `len` bytes from `src` to `addr`; false when the transfer failed.
  virtual bool Write(uint64_t addr, const uint8_t* src, uint64_t len) = 0;
};

// Addresses are pointers of this process: a memcpy (engine unit tests, and a World that was
// given no other bus).
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
  static DirectBus& Instance() {
    static DirectBus bus;
    return bus;
  }
};

}  // namespace qptwin::model::engine
