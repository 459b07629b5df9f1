// Queue memory at a program's bus addresses (issue 12 step (a); model_backend.h
// ModelQueueMemoryAt): the rings of a device's CQs, QPs and SRQs, and their doorbell
// records, in a window of a SystemC user's memory map, as a driver puts its queues in DMA
// memory it allocated (mlx5's provider: buffers the kernel maps for the device).
//
// Contract:
//  1. QueueArena hands out blocks of [base, base + length): first fit, each block's address
//     and size a multiple of kAlign (64: a CQE, a cache line), given back when the block's
//     QueueBlock goes. Alloc fails (the verbs' ENOMEM) when no free run fits. Blocks keep
//     the arena alive (shared), so a queue may outlive the device's switch to another one;
//     a new window may not overlap one whose blocks are in use (Nic::SetQueueMemory: EBUSY),
//     so no two live queues share a byte.
//  2. A queue made while its device has an arena takes one block when it is made, sized for
//     its whole depth: the ring's slots at the depth granted (a CQ: cqe slots of
//     Cq::kCqeBytes; a send queue: send_ring_slots() slots of the stride its caps need; a
//     receive queue: max_wr slots of 16 + 16 * max_sge bytes), then, for a CQ and a receive
//     queue, its record (cq.h contract 6, recv_queue.h contract 5) in the next kAlign bytes,
//     which the provider's CPU sets to 0 when the queue is made. It never grows; a
//     resize (ibv_resize_cq, ibv_modify_srq's max_wr) takes a new block, from the window
//     named last (a buffer a driver named for the resized queue) or, without room there,
//     from the queue's own, and the provider's CPU moves the entries (host_bus.h contract
//     7), as rxe_queue_resize copies them. The
//     engine never dereferences such an address: every access is a bus transfer, the NIC's
//     (host_bus.h contract 1) or the provider's CPU's (contract 7).
//  3. Without an arena a queue's ring and record are this process's memory, the ring grown
//     as the queue fills (the default, and all of qptwin's suites).
#pragma once

#include <cstdint>
#include <iterator>
#include <map>
#include <memory>
#include <utility>

namespace qptwin::model::engine {

class QueueArena {
 public:
  static constexpr uint64_t kAlign = 64;

  // [base, base + length); the caller checked it does not wrap.
  QueueArena(uint64_t base, uint64_t length);
  uint64_t base() const { return base_; }
  uint64_t length() const { return length_; }
  // Contract 1: a block of `bytes` (rounded up to kAlign), or false.
  bool Alloc(uint64_t bytes, uint64_t* addr);
  void Free(uint64_t addr);
  uint64_t bytes_used() const { return used_bytes_; }
  // Held on the NIC's bus while the arena lives (host_bus.h contract 8).
  std::shared_ptr<void> bus_hold;

 private:
  uint64_t base_;
  uint64_t length_;
  std::map<uint64_t, uint64_t> free_;  // address -> bytes, runs never adjacent
  std::map<uint64_t, uint64_t> used_;  // address -> bytes
  uint64_t used_bytes_ = 0;
};

// One block of an arena, given back when it goes (move-only). Empty: the queue lives in
// this process's memory (contract 3).
class QueueBlock {
 public:
  QueueBlock() = default;
  QueueBlock(std::shared_ptr<QueueArena> arena, uint64_t addr, uint64_t bytes)
      : arena_(std::move(arena)), addr_(addr), bytes_(bytes) {}
  QueueBlock(QueueBlock&& o) noexcept { *this = std::move(o); }
  QueueBlock& operator=(QueueBlock&& o) noexcept {
    if (this != &o) {
      Release();
      arena_ = std::move(o.arena_);
      addr_ = o.addr_;
      bytes_ = o.bytes_;
      o.arena_.reset();
    }
    return *this;
  }
  QueueBlock(const QueueBlock&) = delete;
  QueueBlock& operator=(const QueueBlock&) = delete;
  ~QueueBlock() { Release(); }

  explicit operator bool() const { return arena_ != nullptr; }
  uint64_t addr() const { return addr_; }
  uint64_t bytes() const { return bytes_; }
  // The arena the block came from (a resize takes its new block there: contract 2).
  const std::shared_ptr<QueueArena>& arena() const { return arena_; }

  // A block of `bytes` from `arena` (null: none is needed, an empty block), or false.
  static bool Take(const std::shared_ptr<QueueArena>& arena, uint64_t bytes, QueueBlock* out);

 private:
  void Release() {
    if (arena_) arena_->Free(addr_);
    arena_.reset();
  }
  std::shared_ptr<QueueArena> arena_;
  uint64_t addr_ = 0;
  uint64_t bytes_ = 0;
};

// A ring of `slots` entries of `stride` bytes and, with `record`, its record after it
// (contract 2; a send queue has none: its doorbell is an MMIO write).
inline uint64_t QueueBlockBytes(uint64_t slots, uint64_t stride, bool record = true) {
  const uint64_t ring = (slots * stride + QueueArena::kAlign - 1) & ~(QueueArena::kAlign - 1);
  return ring + (record ? QueueArena::kAlign : 0);
}

}  // namespace qptwin::model::engine
