#include "model/engine/cq.h"

#include <algorithm>
#include <cstring>

#include "model/engine/image_bytes.h"

namespace qptwin::model::engine {

namespace {

using image::Get;
using image::Put;

}  // namespace

void Cq::Encode(const WorkCompletion& wc, uint8_t* image) {
  std::memset(image, 0, kCqeBytes);
  Put<uint64_t>(image, 0, wc.wr_id);
  Put<uint32_t>(image, 8, wc.byte_len);
  Put<uint32_t>(image, 12, wc.imm_data);
  Put<uint32_t>(image, 16, wc.qp_num);
  Put<uint32_t>(image, 20, wc.src_qp);
  Put<uint32_t>(image, 24, wc.wc_flags);
  Put<uint32_t>(image, 28, wc.vendor_err);
  Put<uint8_t>(image, 32, static_cast<uint8_t>(wc.status));
  Put<uint8_t>(image, 33, static_cast<uint8_t>(wc.opcode));
  Put<uint8_t>(image, 34, wc.sl);
  Put<uint8_t>(image, 35, wc.dlid_path_bits);
  Put<uint16_t>(image, 36, wc.pkey_index);
  Put<uint16_t>(image, 38, wc.slid);
}

WorkCompletion Cq::Decode(const uint8_t* image) {
  WorkCompletion wc;
  wc.wr_id = Get<uint64_t>(image, 0);
  wc.byte_len = Get<uint32_t>(image, 8);
  wc.imm_data = Get<uint32_t>(image, 12);
  wc.qp_num = Get<uint32_t>(image, 16);
  wc.src_qp = Get<uint32_t>(image, 20);
  wc.wc_flags = Get<uint32_t>(image, 24);
  wc.vendor_err = Get<uint32_t>(image, 28);
  wc.status = static_cast<WcStatus>(Get<uint8_t>(image, 32));
  wc.opcode = static_cast<WcOpcode>(Get<uint8_t>(image, 33));
  wc.sl = Get<uint8_t>(image, 34);
  wc.dlid_path_bits = Get<uint8_t>(image, 35);
  wc.pkey_index = Get<uint16_t>(image, 36);
  wc.slid = Get<uint16_t>(image, 38);
  return wc;
}

void Cq::Relocate(size_t slots) {
  auto grown = std::make_unique<uint8_t[]>(slots * kCqeBytes);
  for (size_t i = 0; i < size(); ++i) {
    std::memcpy(&grown[i * kCqeBytes], Slot(head_ + i), kCqeBytes);
  }
  host_ = std::move(grown);
  slots_ = slots;
  head_ = 0;
}

void Cq::PlaceAt(QueueBlock block, HostBus& cpu) {
  block_ = std::move(block);
  host_.reset();
  slots_ = static_cast<size_t>(depth_);
  head_ = 0;
  written_ = 0;
  (void)CpuPutRecord(cpu, DmaKind::kCqDbRec, RecordAddr(), 0);
}

void Cq::DropTaken(uint32_t record) {
  // Contract 6: CQEs a driver of the program's own took (the record ahead of the provider's
  // polls, within what was written) leave the queue.
  const uint32_t taken = record - polled_;
  if (!block_ || static_cast<int32_t>(taken) <= 0 || taken > size()) return;
  for (uint32_t i = 0; i < taken; ++i) visible_.pop_front();
  head_ += taken;
  polled_ += taken;
}

void Cq::TakeDriverPolls(HostBus& cpu) {
  if (!block_) return;
  uint8_t word[4];
  const RetagAs rec(cpu, DmaKind::kCqDbRec);
  if (cpu.Read(RecordAddr(), word, sizeof word)) DropTaken(Get<uint32_t>(word, 0));
}

void Cq::MoveTo(QueueBlock block, int depth, HostBus& cpu) {
  // Contract 7: the provider's CPU copies each CQE not taken (TakeDriverPolls first: a
  // driver's polls), oldest first, to the new ring's front, and the ring starts anew:
  // owner byte, record and a driver's arm count from 0 again (one index, as mlx5's
  // cons_index is one).
  TakeDriverPolls(cpu);
  const RetagAs cqe(cpu, DmaKind::kCqe);
  const uint64_t new_slots = static_cast<uint64_t>(depth);
  uint8_t image[kCqeBytes];
  for (size_t i = 0; i < size(); ++i) {
    if (!cpu.Read(SlotAddr(head_ + i), image, kCqeBytes)) std::memset(image, 0, kCqeBytes);
    image[kCqeBytes - 1] = 1;  // contract 5: the new ring's first pass
    (void)cpu.Write(block.addr() + (i % new_slots) * kCqeBytes, image, kCqeBytes);
  }
  written_ = size();
  block_ = std::move(block);
  depth_ = depth;
  slots_ = new_slots;
  head_ = 0;
  polled_ = nic_consumed_ = 0;
  (void)CpuPutRecord(cpu, DmaKind::kCqDbRec, RecordAddr(), 0);
}

void Cq::set_depth(int depth) {
  depth_ = depth;
  if (slots_ > static_cast<size_t>(depth)) Relocate(static_cast<size_t>(depth));
}

bool Cq::NicSeesRoom(HostBus& bus) {
  // Contract 6: the consumer index the NIC read last, and the record when that shows none.
  const uint32_t produced = polled_ + static_cast<uint32_t>(size());
  if (static_cast<int>(produced - nic_consumed_) < depth_) return true;
  uint8_t word[4];
  bool ok;
  {
    const RetagAs record(bus, DmaKind::kCqDbRec);
    ok = bus.Read(RecordAddr(), word, sizeof word);
  }
  if (ok) {
    nic_consumed_ = Get<uint32_t>(word, 0);
    DropTaken(nic_consumed_);
  }
  return static_cast<int>(produced - nic_consumed_) < depth_;
}

bool Cq::Push(const WorkCompletion& wc, uint64_t visible_at, HostBus& bus) {
  if (sticky_ && error_) return false;
  const uint64_t before = bus.delay_total();
  if (!NicSeesRoom(bus)) {
    error_ = true;
    return false;
  }
  if (size() == slots_ && !block_) {  // a placed ring has depth() slots (contract 7)
    Relocate(std::min<size_t>(static_cast<size_t>(depth_), std::max<size_t>(4, 2 * slots_)));
  }
  uint8_t image[kCqeBytes];
  Encode(wc, image);
  if (block_) image[kCqeBytes - 1] = static_cast<uint8_t>(((written_ / slots_) & 1) ^ 1);  // 5
  if (!bus.Write(SlotAddr(head_ + size()), image, kCqeBytes)) {
    ++write_errors_;
    error_ = true;
    return false;
  }
  visible_at += bus.delay_total() - before;  // host_bus.h contract 3
  if (visible_at < last_visible_) visible_at = last_visible_;
  last_visible_ = visible_at;
  visible_.push_back(visible_at);
  ++written_;
  return true;
}

int Cq::Poll(int max, WorkCompletion* out, uint64_t now, HostBus& cpu) {
  int n = 0;
  while (n < max && !visible_.empty() && visible_.front() <= now) {
    // host_bus.h contract 7: the CPU's read; a failed one gives the CQE as written.
    const uint8_t* image = cpu.Direct(SlotAddr(head_), kCqeBytes);
    uint8_t copy[kCqeBytes];
    if (image == nullptr) {
      if (cpu.Read(SlotAddr(head_), copy, kCqeBytes)) {
        image = copy;
      } else if (block_) {
        break;  // contract 7: no other copy; the CQE stays
      } else {
        image = Slot(head_);
      }
    }
    out[n++] = Decode(image);
    ++head_;
    visible_.pop_front();
  }
  if (n == 0) return 0;
  // Contract 6: the provider's write of the consumer index record.
  polled_ += static_cast<uint32_t>(n);
  (void)CpuPutRecord(cpu, DmaKind::kCqDbRec, RecordAddr(), polled_);  // the provider's own count, whatever the record's write did
  return n;
}

bool Cq::DriverArm(uint32_t ci, bool solicited_only, bool* due) {
  *due = false;
  if (!driver_event_ || !block_) return false;
  constexpr uint64_t kCiMask = (uint64_t{1} << 24) - 1;
  if (!solicited_only && ((written_ - ci) & kCiMask) != 0) {
    *due = true;  // CQEs the driver has not taken are in the ring: the event now, disarmed
    driver_armed_ = false;
    return true;
  }
  driver_armed_ = true;
  driver_solicited_only_ = solicited_only;
  return true;
}

bool Cq::TakeDriverNotify(bool solicited, bool error) {
  if (!driver_armed_) return false;
  if (driver_solicited_only_ && !solicited && !error) return false;
  driver_armed_ = false;
  return true;
}

bool Cq::TakeNotify(bool solicited, bool error) {
  if (!armed_) return false;
  if (solicited_only_ && !solicited && !error) return false;
  armed_ = false;
  return true;
}

}  // namespace qptwin::model::engine
