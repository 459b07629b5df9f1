// A receive queue (a QP's RQ or an SRQ): the WQE ring in host memory that the NIC fetches
// from, and the provider's record of each posted receive (issue 12: the receive WQE fetch is
// a DMA through the NIC's HostBus).
//
// Contract:
//  1. FIFO. push_back (the post) writes the receive's WQE image into its slot of the ring
//     (the provider's CPU write) and keeps the record (wr_id and SGEs), as mlx5's provider
//     keeps wr_ids beside its ring: the provider's counts (size(), the posting rules, SRQ
//     limits) use the records. The NIC works from the ring: Fetch and Flush take wr_id and
//     SGEs from the images they read, and a record only stands in for an image whose read
//     failed (the wr_id a provider finds for the WQE's index in its own array).
//  2. Image (little-endian): a 16-byte header (u32 number of SGEs, 4 zero bytes, u64 wr_id),
//     then 16 bytes per SGE (u64 addr, u32 length, u32 lkey). A slot is `stride()` bytes:
//     the largest WQE posted so far.
//  3. Fetch(bus, &wr) takes the oldest receive: wr_id and SGEs from its image, read through
//     `bus` in one transfer of the slot (host_bus.h, tagged by the caller). False when that
//     transfer failed: the receive is still taken, *wr holds the record (wr_id and SGEs),
//     and the caller completes it with an error.
//  4. Memory: the ring grows by doubling with the receives held (a deep queue that holds
//     three receives costs three slots), never per receive; clear() and pops keep it.
//     Growing moves the images in order (the model's bookkeeping, not a DMA).
//  5. The doorbell record: a receive queue has no MMIO doorbell. The post writes the
//     producer index (u32, receives posted since the queue was made fresh: clear() or
//     swap() with a fresh queue, or a Flush() that emptied a queue in process memory;
//     wrapping) into a record
//     in host memory (the provider's CPU write, as mlx5's RQ/SRQ doorbell record; rxe's
//     kernel reads the producer index of the shared queue). The NIC keeps the last value it
//     read: Ready(bus) is true while that value shows a receive it has not fetched, and reads
//     the record (one 4-byte transfer through `bus`, tagged by the caller) only when it shows
//     none. A failed read shows no new receive (the QP answers as without one: RNR or drop).
//     The responder asks Ready() before it fetches (Fetch itself takes the oldest record).
//     A record that shows receives the provider never posted is believed: Fetch reads what
//     those slots hold (contract 3), as a NIC does.
//  6. Queue memory at a bus address (queue_memory.h): PlaceAt gives an empty queue a block
//     for its ring (`slots` slots of `stride` bytes: the queue's max_wr and max_sge, which
//     the posting rules keep it within; never grown) and its record; MoveTo (an SRQ's
//     max_wr) a new block, the provider's CPU moving the held images (Held: a driver's
//     too, up to the record's producer; receive n in slot n mod slots of the new ring) and
//     the record.
//  7. Flush(bus) is the NIC's flush (a QP's move to ERR): it reads the doorbell record
//     (through `bus`, tagged kRecvDbRec while it reads) and then each slot from the oldest
//     receive up to that producer (kRecvWqe, one transfer each), and hands back what the
//     images hold (wr_id, SGEs), oldest first; a slot whose read failed gives its record
//     (or, for a receive a driver of the program's own posted, which has none, wr_id 0).
//     The record is believed within the ring; a value more than `slots()` ahead of the
//     receives taken (one a failed CPU write left) flushes the provider's receives only. A
//     failed read of the doorbell record flushes the receives the NIC last saw (contract 5)
//     and leaves the rest posted. Emptied, the queue is as clear() leaves it: in this
//     process's memory a fresh queue (its storage given back), in queue memory with its
//     ring and record where they are. clear() of a placed queue leaves the
//     record's value in memory as it is (a driver does not rewrite it at a flush) and
//     counts the receives it drops as taken, so the NIC sees none; of a queue in this
//     process's memory it sets the counts and the record to 0. PlaceAt writes 0 into the
//     new record (the provider's CPU), as a driver clears its doorbell record at create.
#pragma once

#include <cstdint>
#include <memory>

#include "model/engine/host_bus.h"
#include "model/engine/queue_memory.h"
#include "model/engine/ring.h"
#include "spec/backend.h"

namespace qptwin::model::engine {

class RecvQueue {
 public:
  static constexpr size_t kHeaderBytes = 16;
  static constexpr size_t kSgeBytes = 16;

  // The provider's view (the records): flushes, counts, SRQ limits.
  bool empty() const { return records_.empty(); }
  size_t size() const { return records_.size(); }
  // The post: the image and the doorbell record are the provider's CPU writes through
  // `cpu` (host_bus.h contract 7), tagged by the caller kRecvWqe (the record: kRecvDbRec).
  // False, with nothing posted, where a placed queue has no room for it (contract 6: the
  // posting rules keep a receive within max_wr and max_sge, so never; the caller refuses the
  // WR with ENOMEM rather than lose it).
  [[nodiscard]] bool push_back(const RecvWr& wr, HostBus& cpu = DirectBus::Instance());
  // The NIC's view (contract 5): a receive it may fetch, reading the doorbell record first
  // when its last value shows none.
  bool Ready(HostBus& bus);
  bool Fetch(HostBus& bus, RecvWr* out);
  void clear() {
    if (block_) {  // the record in queue memory keeps its value: count the flushed as taken
      consumed_ += static_cast<uint32_t>(records_.size());
      head_ += records_.size();  // receive n stays in slot n mod slots (a driver's, 6)
      nic_producer_ = consumed_;
      records_.clear();
      return;
    }
    records_.clear();
    head_ = 0;
    consumed_ = doorbell_record_ = nic_producer_ = 0;
  }
  void swap(RecvQueue& o);
  // Contract 7: `bus` as the NIC's (Fetch's).
  Ring<RecvWr> Flush(HostBus& bus);
  // Contract 6.
  void PlaceAt(QueueBlock block, size_t slots, size_t stride, HostBus& cpu);
  void MoveTo(QueueBlock block, size_t slots, HostBus& cpu);
  // Contract 6: the receives a placed queue holds: the provider's records, or more where
  // the record (the provider's CPU reads it) shows a driver's within the ring.
  size_t Held(HostBus& cpu) const;
  bool placed() const { return static_cast<bool>(block_); }
  const std::shared_ptr<QueueArena>& arena() const { return block_.arena(); }
  // Contract 6: the bytes a placed queue of `slots` receives of up to `max_sge` SGEs needs.
  static uint64_t PlacedBytes(size_t slots, size_t max_sge) {
    return QueueBlockBytes(slots, PlacedStride(max_sge));
  }
  static size_t PlacedStride(size_t max_sge) { return kHeaderBytes + kSgeBytes * max_sge; }
  // The records, oldest first (contract 1).
  auto begin() const { return records_.begin(); }
  auto end() const { return records_.end(); }
  size_t stride() const { return stride_; }
  size_t slots() const { return slots_; }
  // A placed queue's ring and record (contract 6), for a driver of the program's own
  // (model_backend.h ModelRecvRing), and the producer the provider last wrote there.
  uint64_t ring_addr() const { return block_ ? block_.addr() : 0; }
  uint64_t record_addr() const { return RecordAddr(); }
  uint32_t producer() const {
    return block_ ? record_written_ : consumed_ + static_cast<uint32_t>(size());
  }
  // The receives the NIC knows of and has not fetched: the record's value it read last
  // (contract 5) less those it fetched. A driver's receives (no records) count here only.
  size_t nic_held() const {
    const auto ahead = static_cast<int32_t>(nic_producer_ - consumed_);
    return ahead > 0 ? static_cast<size_t>(ahead) : 0;
  }

 private:
  uint8_t* Slot(uint64_t index) const { return host_.get() + (index % slots_) * stride_; }
  // Reads the image at `index` through `bus` into *out (wr_id and SGEs, contract 2); false
  // when the transfer failed (*out untouched).
  bool ReadImage(HostBus& bus, uint64_t index, RecvWr* out) const;
  // The NIC's read of the doorbell record (contract 5) into *producer; false (untouched)
  // when the transfer failed.
  bool ReadRecord(HostBus& bus, uint32_t* producer) const;
  // The bus address of a slot, and of the record (contracts 5, 6).
  uint64_t SlotAddr(uint64_t index) const {
    return block_ ? block_.addr() + (index % slots_) * stride_ : Addr(Slot(index));
  }
  uint64_t RecordAddr() const {
    return block_ ? block_.addr() + block_.bytes() - QueueArena::kAlign : Addr(&doorbell_record_);
  }
  void Relocate(size_t slots, size_t stride);

  Ring<RecvWr> records_;
  std::unique_ptr<uint8_t[]> host_;  // slots_ images of stride_ bytes
  QueueBlock block_;                 // or the ring and record at a bus address (6)
  size_t slots_ = 0;
  size_t stride_ = 0;
  uint64_t head_ = 0;  // the oldest receive's index (its slot: head_ % slots_)
  uint32_t consumed_ = 0;         // receives the NIC fetched since the last clear()
  uint32_t doorbell_record_ = 0;  // contract 5: in host memory, written by the post
  uint32_t nic_producer_ = 0;     // the record's value the NIC read last
  uint32_t record_written_ = 0;   // a placed queue's record as the provider last wrote it
};

}  // namespace qptwin::model::engine
