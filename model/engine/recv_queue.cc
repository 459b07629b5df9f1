#include "model/engine/recv_queue.h"

#include <algorithm>
#include <cstring>
#include <utility>
#include <vector>

#include "model/engine/image_bytes.h"

namespace qptwin::model::engine {

void RecvQueue::Relocate(size_t slots, size_t stride) {
  std::unique_ptr<uint8_t[]> grown(new uint8_t[slots * stride]);
  for (size_t i = 0; i < size(); ++i) {
    std::memcpy(&grown[i * stride], Slot(head_ + i), std::min(stride, stride_));
  }
  host_ = std::move(grown);
  slots_ = slots;
  stride_ = stride;
  head_ = 0;
}

bool RecvQueue::push_back(const RecvWr& wr, HostBus& cpu) {
  const size_t need = kHeaderBytes + kSgeBytes * wr.sg_list.size();
  if (block_ && (need > stride_ || size() == slots_)) return false;  // contract 6: never
  if (need > stride_ || size() == slots_) {
    Relocate(size() == slots_ ? std::max<size_t>(4, 2 * slots_) : slots_,
             std::max(need, stride_));
  }
  uint8_t small[kHeaderBytes + 4 * kSgeBytes];
  std::vector<uint8_t> large(stride_ > sizeof small ? stride_ : 0);
  (void)CpuPut(cpu, SlotAddr(head_ + size()), stride_, large.empty() ? small : large.data(),
         [&](uint8_t* image) {
           std::memset(image, 0, stride_);
           image::Put<uint32_t>(image, 0, static_cast<uint32_t>(wr.sg_list.size()));
           image::Put<uint64_t>(image, 8, wr.wr_id);
           for (size_t i = 0; i < wr.sg_list.size(); ++i) {
             const Sge& s = wr.sg_list[i];
             uint8_t* e = image + kHeaderBytes + kSgeBytes * i;
             image::Put<uint64_t>(e, 0, s.addr);
             image::Put<uint32_t>(e, 8, s.length);
             image::Put<uint32_t>(e, 12, s.lkey);
           }
         });
  records_.push_back(wr);
  // Contract 5: the producer index into the record.
  record_written_ = consumed_ + static_cast<uint32_t>(size());
  (void)CpuPutRecord(cpu, DmaKind::kRecvDbRec, RecordAddr(), record_written_);
  return true;
}

bool RecvQueue::Ready(HostBus& bus) {
  // Distances, not equality: a Fetch without Ready (the unit tests) leaves consumed_ ahead.
  if (static_cast<int32_t>(nic_producer_ - consumed_) > 0) return true;
  if (!ReadRecord(bus, &nic_producer_)) return false;
  return static_cast<int32_t>(nic_producer_ - consumed_) > 0;
}

bool RecvQueue::ReadRecord(HostBus& bus, uint32_t* producer) const {
  uint8_t word[4];
  if (!bus.Read(RecordAddr(), word, sizeof word)) return false;
  *producer = image::Get<uint32_t>(word, 0);
  return true;
}

bool RecvQueue::ReadImage(HostBus& bus, uint64_t index, RecvWr* out) const {
  // The slot into a buffer of the NIC's (one transfer).
  uint8_t small[kHeaderBytes + 4 * kSgeBytes];
  std::vector<uint8_t> large;
  uint8_t* image = small;
  if (stride_ > sizeof small) {
    large.resize(stride_);
    image = large.data();
  }
  if (!bus.Read(SlotAddr(index), image, stride_)) return false;
  const auto fits = static_cast<uint32_t>((stride_ - kHeaderBytes) / kSgeBytes);
  const uint32_t n = std::min<uint32_t>(image::Get<uint32_t>(image, 0), fits);
  out->wr_id = image::Get<uint64_t>(image, 8);
  out->sg_list.resize(n);
  for (uint32_t i = 0; i < n; ++i) {
    const uint8_t* e = image + kHeaderBytes + kSgeBytes * i;
    Sge& s = out->sg_list[i];
    s.addr = image::Get<uint64_t>(e, 0);
    s.length = image::Get<uint32_t>(e, 8);
    s.lkey = image::Get<uint32_t>(e, 12);
  }
  return true;
}

bool RecvQueue::Fetch(HostBus& bus, RecvWr* out) {
  // Contract 3: the image, or the record where its read failed; then the record leaves.
  // The NIC works from the ring: a doorbell record that shows a receive the provider never
  // posted (a stale value a failed CPU write left, or the program's own) gives what that
  // slot holds, or nothing known (wr_id 0) where it cannot be read; never a crash.
  const bool ok = slots_ > 0 && ReadImage(bus, head_, out);
  if (!records_.empty()) {
    if (!ok) *out = std::move(records_.front());
    records_.pop_front();
  } else if (!ok) {
    *out = RecvWr{};
  }
  ++head_;
  ++consumed_;
  return ok;
}

Ring<RecvWr> RecvQueue::Flush(HostBus& bus) {
  Ring<RecvWr> out;
  // Contract 7: the producer from the record, or the last value the NIC read.
  uint32_t producer = nic_producer_;
  {
    const RetagAs rec(bus, DmaKind::kRecvDbRec);
    (void)ReadRecord(bus, &producer);
  }
  // The record is believed, as Fetch believes it (contract 5: receives a driver of the
  // program's own posted have no record), within the ring: a value more than a ring ahead
  // (one a failed CPU write left behind) flushes what the provider posted.
  const uint32_t ahead =
      static_cast<int32_t>(producer - consumed_) > 0 ? producer - consumed_ : 0;
  const uint32_t n = ahead <= slots_ ? ahead : static_cast<uint32_t>(records_.size());
  for (uint32_t i = 0; i < n; ++i) {
    RecvWr r;
    const bool read = ReadImage(bus, head_, &r);
    if (!records_.empty()) {
      if (!read) r = std::move(records_.front());
      records_.pop_front();
    } else if (!read) {
      r = RecvWr{};  // nothing known of it: wr_id 0
    }
    out.push_back(std::move(r));
    ++head_;
    ++consumed_;
  }
  nic_producer_ = consumed_;
  if (!records_.empty()) return out;  // posted after the value the NIC could read
  if (block_) {
    // Contract 7: the ring and the record stay where they are, and receive n in slot
    // n mod slots (the producer counts on: a driver's next one goes after it).
  } else {  // as a fresh queue, its storage given back
    clear();
    host_.reset();
    slots_ = stride_ = 0;
  }
  return out;
}

void RecvQueue::PlaceAt(QueueBlock block, size_t slots, size_t stride, HostBus& cpu) {
  block_ = std::move(block);
  host_.reset();
  slots_ = slots;
  stride_ = stride;
  head_ = 0;
  record_written_ = 0;
  (void)CpuPutRecord(cpu, DmaKind::kRecvDbRec, RecordAddr(), 0);
}

size_t RecvQueue::Held(HostBus& cpu) const {
  // Contract 6: the provider's records, or, where a driver of the program's own posts, what
  // the record shows within the ring (the provider's CPU reads it).
  uint32_t producer = nic_producer_;
  {
    const RetagAs rec(cpu, DmaKind::kRecvDbRec);
    (void)ReadRecord(cpu, &producer);
  }
  const auto ahead = static_cast<int32_t>(producer - consumed_);
  const size_t shown = ahead > 0 && static_cast<size_t>(ahead) <= slots_ ? static_cast<size_t>(ahead) : 0;
  return std::max(size(), shown);
}

void RecvQueue::MoveTo(QueueBlock block, size_t slots, HostBus& cpu) {
  // Contract 6: the provider's CPU copies the held images (Held: a driver's too), oldest
  // first, each to its slot of the new ring, then writes the record (its value stays).
  std::vector<uint8_t> image(stride_);
  const size_t held = std::min(Held(cpu), slots);
  {
    const RetagAs wqe(cpu, DmaKind::kRecvWqe);
    for (size_t i = 0; i < held; ++i) {
      if (!cpu.Read(SlotAddr(head_ + i), image.data(), stride_)) {
        std::fill(image.begin(), image.end(), 0);
      }
      // Receive n stays in slot n mod slots (contract 6: a driver's convention).
      (void)cpu.Write(block.addr() + ((head_ + i) % slots) * stride_, image.data(), stride_);
    }
  }
  block_ = std::move(block);
  slots_ = slots;
  record_written_ = consumed_ + static_cast<uint32_t>(held);
  (void)CpuPutRecord(cpu, DmaKind::kRecvDbRec, RecordAddr(), record_written_);
}

void RecvQueue::swap(RecvQueue& o) {
  records_.swap(o.records_);
  std::swap(host_, o.host_);
  std::swap(block_, o.block_);
  std::swap(slots_, o.slots_);
  std::swap(stride_, o.stride_);
  std::swap(head_, o.head_);
  std::swap(consumed_, o.consumed_);
  std::swap(doorbell_record_, o.doorbell_record_);
  std::swap(nic_producer_, o.nic_producer_);
  std::swap(record_written_, o.record_written_);
}

}  // namespace qptwin::model::engine
