// A completion queue: a bounded FIFO of work completions plus its notification state.
//
// Contract:
//  1. Push() never drops silently: on a full queue it returns false, and the caller
//     reports the overflow (IB_EVENT_CQ_ERR, rxe_cq_post returns -EBUSY).
//  2. With `sticky_error` (IBTA: a CQ overrun is a CQ error), every Push() after an
//     overflow fails too; without it (rxe_cq_post) a Push fails only while the CQ is full.
//  3. Arm()/TakeNotify(): one notification per arm (ibv_req_notify_cq semantics); a
//     solicited-only arm fires for solicited completions and for errors.
//  4. A completion pushed with `visible_at` is in the queue (it counts against the depth)
//     but Poll(.., now) returns it only once now >= visible_at: the CQE's DMA write is on
//     its way. visible_at never decreases from one Push to the next (FIFO stays FIFO).
//  5. The CQEs live in host memory, as a device's CQ ring (rxe: the queue buffer the
//     kernel shares with the provider): Push writes the CQE's kCqeBytes image (layout
//     below) into its slot through the NIC's HostBus (host_bus.h), one transfer per CQE;
//     Poll reads and decodes it (the provider's CPU read, not DMA). A write that fails is
//     a CQ error like an overrun (Push false, in_error). The ring's storage grows by
//     doubling up to the depth (a deep CQ that holds three CQEs costs three slots'
//     memory); growing, or a resize below the storage, moves the CQEs in order (the
//     driver's copy, as rxe_cq_resize_queue does).
//     Layout (little-endian): 0 wr_id u64; 8 byte_len, 12 imm_data, 16 qp_num, 20 src_qp,
//     24 wc_flags, 28 vendor_err (u32 each); 32 status, 33 opcode, 34 sl, 35 dlid_path_bits
//     (u8); 36 pkey_index, 38 slid (u16); 40..62 zero; 63 owner: in a ring in queue
//     memory (7) ((n / depth) & 1) ^ 1 for the n-th CQE written since the ring was placed
//     (counting from 0; a resize places it anew, the CQEs it moves first), as mlx5's owner bit, so a driver of the program's own tells a
//     new CQE from the last pass's (and from the zeroed ring's); 0 elsewhere.
//  6. The consumer index record: Poll writes the number of CQEs polled (u32, wrapping; the
//     provider's own count, kept beside the record) into
//     a record in host memory (the provider's CPU write, as mlx5's CQ doorbell record; rxe's
//     kernel reads the consumer index of the shared queue). The NIC keeps the last value it
//     read and reads the record (one 4-byte transfer through the bus Push was given, tagged
//     kCqDbRec, its delay counted like the CQE write's) only when that value shows the ring
//     full; still full, or the read failed, is an overrun (contract 1). A record ahead of
//     the provider's count shows CQEs a driver of the program's own took from the ring (its
//     own poll, by the owner byte): they leave the queue then (no longer counted, never
//     polled again). A CQ takes its polls from the driver or from ibv_poll_cq, not both.
//  7. Queue memory at a bus address (queue_memory.h): PlaceAt gives a new CQ a block for its
//     ring (depth() slots, never grown) and its record, which it sets to 0 (the provider's
//     CPU; the provider keeps the count it wrote last, as mlx5's cons_index beside its
//     doorbell record); MoveTo (ibv_resize_cq) a new block,
//     the provider's CPU moving the CQEs a driver has not taken (it reads the record
//     first: TakeDriverPolls, which ResizeCq also runs before it counts what the CQ holds)
//     to the new ring's front: the ring starts anew, and the owner byte (5), the consumer
//     count in the record (written 0) and a driver's arm (8) count from 0 again. A poll whose CPU read of a CQE fails
//     stops there and leaves it (the provider saw no valid CQE: there is no other copy).
//  8. A driver's interrupts (model_backend.h ModelCqEvent), apart from the verbs' arm (3):
//     SetDriverEvent names a bus address and a 32-bit value (as an MSI-X vector's); then
//     DriverArm(ci, solicited_only) arms the CQ once, with the driver's consumer index ci
//     (the CQEs it took since the ring was placed, modulo 2^24). An arm without
//     solicited_only whose ci is behind the CQEs written is due at once (true: the caller
//     writes the event), as mlx5's arm with CQEs already past the consumer index; else
//     TakeDriverNotify fires at the next CQE (solicited_only: the next solicited or error
//     CQE) and disarms. No event is named, or the ring is this process's memory: an arm
//     does nothing (false, counted by the NIC as an ignored ring).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>

#include "model/engine/host_bus.h"
#include "model/engine/queue_memory.h"
#include "model/engine/ring.h"

#include "spec/backend.h"

namespace qptwin::model::engine {

class Cq {
 public:
  Cq(uint32_t handle, uint32_t ctx, int depth, uint32_t channel, bool sticky_error = true)
      : handle_(handle), ctx_(ctx), depth_(depth), channel_(channel), sticky_(sticky_error) {}

  uint32_t handle() const { return handle_; }
  uint32_t ctx() const { return ctx_; }
  uint32_t channel() const { return channel_; }
  int depth() const { return depth_; }
  size_t size() const { return visible_.size(); }
  bool in_error() const { return error_; }
  bool sticky_error() const { return sticky_; }

  static constexpr size_t kCqeBytes = 64;  // contract 5

  bool Push(const WorkCompletion& wc, uint64_t visible_at = 0,
            HostBus& bus = DirectBus::Instance());
  // ibv_resize_cq: the entries stay, in order (Nic::ResizeCq checks depth >= size()).
  // A CQ in queue memory moves instead (contract 7).
  void set_depth(int depth);
  // Contract 7: before the first Push, the ring and record at `block` (depth() slots).
  void PlaceAt(QueueBlock block, HostBus& cpu);
  // Contract 7: ibv_resize_cq of a placed CQ; `block` holds `depth` slots.
  void MoveTo(QueueBlock block, int depth, HostBus& cpu);
  // Contract 6: the provider's CPU reads the record, and the CQEs a driver took leave the
  // queue (before a resize judges what the CQ holds).
  void TakeDriverPolls(HostBus& cpu);
  bool placed() const { return static_cast<bool>(block_); }
  const std::shared_ptr<QueueArena>& arena() const { return block_.arena(); }
  // The CQE reads and the record's write are the provider's CPU's, through `cpu`
  // (host_bus.h contract 7), tagged by the caller kCqe (the record: kCqDbRec).
  int Poll(int max, WorkCompletion* out, uint64_t now = ~uint64_t{0},
           HostBus& cpu = DirectBus::Instance());
  // Contract 5: CQE writes that failed; the ring's slots in host memory.
  uint64_t write_errors() const { return write_errors_; }
  // The last CQE pushed becomes visible then (its visible_at, never earlier than the one
  // before it, plus the extra time its write took on the bus: host_bus.h contract 3).
  uint64_t last_visible() const { return last_visible_; }
  size_t slots() const { return slots_; }
  // A placed ring's bus addresses (contract 7; 0 for a ring in this process's memory), for a
  // driver of the program's own (model_backend.h ModelCqRing).
  uint64_t ring_addr() const { return block_ ? block_.addr() : 0; }
  uint64_t record_addr() const { return RecordAddr(); }
  static void Encode(const WorkCompletion& wc, uint8_t* image);
  static WorkCompletion Decode(const uint8_t* image);

  void Arm(bool solicited_only) {
    armed_ = true;
    solicited_only_ = solicited_only;
  }
  // True when the completion just pushed should wake the channel (and disarms).
  bool TakeNotify(bool solicited, bool error);
  // Contract 8.
  struct DriverEvent {
    uint64_t addr = 0;
    uint32_t data = 0;
  };
  void SetDriverEvent(const DriverEvent& ev) { driver_event_ = ev; }
  const DriverEvent* driver_event() const { return driver_event_ ? &*driver_event_ : nullptr; }
  // Whether the arm took (an event named, the ring placed); *due: the event is due at once.
  bool DriverArm(uint32_t ci, bool solicited_only, bool* due);
  bool TakeDriverNotify(bool solicited, bool error);

  int users = 0;                 // QPs and SRQs that post here
  unsigned events_unacked = 0;   // CQ events delivered and not yet acknowledged

 private:
  uint32_t handle_;
  uint32_t ctx_;
  int depth_;
  uint32_t channel_;
  bool sticky_;
  uint8_t* Slot(uint64_t index) const { return host_.get() + (index % slots_) * kCqeBytes; }
  // The bus address of a slot, and of the record (contracts 5-7).
  uint64_t SlotAddr(uint64_t index) const {
    return block_ ? block_.addr() + (index % slots_) * kCqeBytes : Addr(Slot(index));
  }
  uint64_t RecordAddr() const {
    return block_ ? block_.addr() + block_.bytes() - QueueArena::kAlign : Addr(&consumer_record_);
  }
  // Moves the CQEs in order into storage of `slots` slots (>= size()).
  void Relocate(size_t slots);
  // Contract 6: whether the NIC sees a free slot, reading the record when needed.
  bool NicSeesRoom(HostBus& bus);
  // Contract 6: the CQEs up to `record` (a consumer count ahead of polled_) leave.
  void DropTaken(uint32_t record);

  std::unique_ptr<uint8_t[]> host_;  // the ring: slots_ CQE images (contract 5)
  QueueBlock block_;                 // or the ring and record at a bus address (7)
  size_t slots_ = 0;
  uint64_t head_ = 0;        // the oldest CQE's index (its slot: head_ % slots_)
  Ring<uint64_t> visible_;   // per CQE in the ring, oldest first: visible_at
  uint64_t last_visible_ = 0;
  uint64_t write_errors_ = 0;
  // Contract 6: the record in host memory for a ring in this process's memory (a placed
  // ring's is in its block), as the last poll wrote it; and the provider's own count of the
  // CQEs polled (wrapping), as mlx5's cons_index beside its record: the CQEs written are
  // polled_ plus size(), whether or not the record's write went through.
  uint32_t consumer_record_ = 0;
  uint32_t polled_ = 0;
  uint32_t nic_consumed_ = 0;     // the record's value the NIC read last
  uint64_t written_ = 0;  // CQEs written since PlaceAt or MoveTo (contract 5's owner byte)
  bool error_ = false;
  bool armed_ = false;
  bool solicited_only_ = false;
  std::optional<DriverEvent> driver_event_;  // contract 8
  bool driver_armed_ = false;
  bool driver_solicited_only_ = false;
};

}  // namespace qptwin::model::engine
