#include "model/engine/memory.h"

#include <sys/mman.h>

#include <algorithm>
#include <cstring>
#include <atomic>
#include <map>
#include <mutex>
#include <vector>

namespace qptwin::model::engine {
namespace {
constexpr size_t kPage = 4096;

size_t Rounded(size_t length) {
  size_t n = (length + kPage - 1) / kPage * kPage;
  return n == 0 ? kPage : n;
}

// Regions are anonymous mappings: page aligned, zeroed and only backed by memory once
// touched, so registering a large region costs nothing until data moves into it.
//
// Small mappings are kept for reuse instead of unmapped: a fuzzer makes and drops thousands
// of backends a second, and each fresh mapping cost an mmap, a page fault per page touched
// and an munmap (measured: a quarter of `qptwin fuzz --differential`'s time, in the
// kernel). A reused mapping is zeroed before it is handed out, so a region still starts
// zeroed and page aligned (contract 1); only its address may differ from a fresh mmap's,
// and nothing the model reports depends on an address. Bounded: mappings up to kPoolMax
// bytes, kPoolBytes in all; the others are unmapped as before.
class MappingPool {
 public:
  static constexpr size_t kPoolMax = 256 * 1024;
  static constexpr size_t kPoolBytes = 8 * 1024 * 1024;

  uint8_t* Take(size_t rounded) {
    if (rounded <= kPoolMax && on_.load(std::memory_order_relaxed)) {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = free_.find(rounded);
      if (it != free_.end() && !it->second.empty()) {
        uint8_t* p = it->second.back();
        it->second.pop_back();
        bytes_ -= rounded;
        std::memset(p, 0, rounded);
        return p;
      }
    }
    void* p = mmap(nullptr, rounded, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return p == MAP_FAILED ? nullptr : static_cast<uint8_t*>(p);
  }

  void Give(uint8_t* p, size_t rounded) {
    if (rounded <= kPoolMax && on_.load(std::memory_order_relaxed)) {
      std::lock_guard<std::mutex> lock(mu_);
      if (bytes_ + rounded <= kPoolBytes) {
        free_[rounded].push_back(p);
        bytes_ += rounded;
        return;
      }
    }
    munmap(p, rounded);
  }

  void Enable(bool on) { on_.store(on, std::memory_order_relaxed); }

 private:
  std::atomic<bool> on_{true};
  std::mutex mu_;
  std::map<size_t, std::vector<uint8_t*>> free_;  // by length (whole pages)
  size_t bytes_ = 0;
};

// Never destroyed: regions may outlive static destruction (a backend held by a static).
MappingPool& Pool() {
  static MappingPool* pool = new MappingPool;
  return *pool;
}

uint8_t* MapZeroed(size_t length) { return Pool().Take(Rounded(length)); }

void Unmap(Mr& mr) {
  if (!mr.at_bus_address) Pool().Give(mr.buf, Rounded(mr.length));  // contract 4: none
}

}  // namespace

void KeepRegionMappings(bool on) { Pool().Enable(on); }

MrTable::MrTable(uint32_t max_index, uint32_t first_index)
    : max_index_(std::clamp<uint32_t>(max_index, 1, kMaxIndex)),
      next_index_(std::clamp<uint32_t>(first_index, 1, max_index_)) {}

MrTable::~MrTable() {
  for (auto& [h, mr] : by_handle_) Unmap(*mr);
}

uint32_t MrTable::FreeIndex() const {
  // Walk the live keys from next_index_ up; the first gap is free. Then once from 1.
  for (uint32_t from : {next_index_, 1u}) {
    uint32_t index = from;
    for (auto it = by_key_.lower_bound(from << 8); it != by_key_.end(); ++it) {
      if ((it->first >> 8) != index) break;
      ++index;
    }
    if (index <= max_index_) return index;
  }
  return 0;
}

Mr* MrTable::Register(uint32_t handle, uint32_t ctx, uint32_t pd, size_t length,
                      AccessFlags access) {
  if (FreeIndex() == 0) return nullptr;
  uint8_t* mem = MapZeroed(length);
  if (mem == nullptr) return nullptr;
  return Insert(handle, ctx, pd, mem, length, access, false);
}

Mr* MrTable::RegisterAt(uint32_t handle, uint32_t ctx, uint32_t pd, uint64_t addr,
                        size_t length, AccessFlags access) {
  if (FreeIndex() == 0) return nullptr;
  return Insert(handle, ctx, pd, reinterpret_cast<uint8_t*>(addr), length, access, true);
}

Mr* MrTable::Insert(uint32_t handle, uint32_t ctx, uint32_t pd, uint8_t* buf, size_t length,
                    AccessFlags access, bool at_bus_address) {
  const uint32_t index = FreeIndex();
  auto mr = std::make_unique<Mr>();
  mr->handle = handle;
  mr->ctx = ctx;
  mr->pd = pd;
  mr->buf = buf;
  mr->length = length;
  mr->access = access;
  mr->at_bus_address = at_bus_address;
  at_bus_address_ += at_bus_address;
  // rxe_mr_init: lkey = elem.index << 8 | rxe_get_next_key(-1) (a random byte there; a
  // counter here, so runs repeat).
  mr->lkey = mr->rkey = (index << 8) | next_variant_++;
  next_index_ = index == max_index_ ? 1 : index + 1;
  Mr* raw = mr.get();
  by_key_[raw->lkey] = raw;
  by_handle_[handle] = std::move(mr);
  return raw;
}

void MrTable::Deregister(uint32_t handle) {
  auto it = by_handle_.find(handle);
  if (it == by_handle_.end()) return;
  by_key_.erase(it->second->lkey);
  at_bus_address_ -= it->second->at_bus_address;
  Unmap(*it->second);
  by_handle_.erase(it);
}

void MrTable::DeregisterContext(uint32_t ctx) {
  std::vector<uint32_t> gone;
  for (const auto& [h, mr] : by_handle_) {
    if (mr->ctx == ctx) gone.push_back(h);
  }
  for (uint32_t h : gone) Deregister(h);
}

Mr* MrTable::ByHandle(uint32_t handle) {
  auto it = by_handle_.find(handle);
  return it == by_handle_.end() ? nullptr : it->second.get();
}

size_t MrTable::CountForPd(uint32_t pd) const {
  size_t n = 0;
  for (const auto& [h, mr] : by_handle_) n += (mr->pd == pd);
  return n;
}

const Mr* MrTable::ByKey(uint32_t key) const {
  auto it = by_key_.find(key);
  return it == by_key_.end() ? nullptr : it->second;
}

bool MrTable::Inside(const Mr& mr, uint64_t addr, uint64_t len) {
  uint64_t start = reinterpret_cast<uint64_t>(mr.buf);
  return addr >= start && len <= mr.length && addr - start <= mr.length - len;
}

WcStatus MrTable::CheckLocal(SgeSpan sges, uint32_t pd, AccessFlags need,
                             bool* unresolved) const {
  for (const Sge& s : sges) {
    if (s.length == 0) continue;
    const Mr* mr = ByKey(s.lkey);
    const bool resolves = mr && mr->pd == pd && (mr->access & need) == need;
    if (!resolves || !Inside(*mr, s.addr, s.length)) {
      if (unresolved) *unresolved = !resolves;
      return WcStatus::kLocProtErr;
    }
  }
  return WcStatus::kSuccess;
}

bool MrTable::AnyAtBusAddress(SgeSpan sges) const {
  if (at_bus_address_ == 0) return false;
  for (const Sge& s : sges) {
    if (s.length == 0) continue;
    for (const auto& [h, mr] : by_handle_) {
      if (mr->at_bus_address && Inside(*mr, s.addr, s.length)) return true;
    }
  }
  return false;
}

bool MrTable::AnyContains(SgeSpan sges) const {
  for (const Sge& s : sges) {
    if (s.length == 0) continue;
    bool found = false;
    for (const auto& [h, mr] : by_handle_) {
      if (Inside(*mr, s.addr, s.length)) {
        found = true;
        break;
      }
    }
    if (!found) return false;
  }
  return true;
}

bool MrTable::GatherTo(HostBus& bus, SgeSpan sges, uint8_t* out) const {
  for (const Sge& s : sges) {
    if (s.length == 0) continue;
    if (!bus.Read(s.addr, out, s.length)) return false;
    out += s.length;
  }
  return true;
}

WcStatus MrTable::Scatter(HostBus& bus, SgeSpan sges, uint32_t pd, const uint8_t* data,
                          size_t len) const {
  if (len > sges.total_length()) return WcStatus::kLocLenErr;
  // Only the SGEs the data reaches are touched, and so checked (each clipped to the bytes
  // it receives), all before any byte is written.
  size_t left = len;
  for (const Sge& s : sges) {
    if (left == 0) break;
    Sge u = s;
    u.length = static_cast<uint32_t>(std::min<uint64_t>(s.length, left));
    left -= u.length;
    const WcStatus st = CheckLocal(SgeSpan(&u, 1), pd, access::kLocalWrite);
    if (st != WcStatus::kSuccess) return st;
  }
  left = len;
  for (const Sge& s : sges) {
    if (left == 0) break;
    const uint32_t n = static_cast<uint32_t>(std::min<uint64_t>(s.length, left));
    left -= n;
    if (n == 0) continue;
    if (!bus.Write(s.addr, data, n)) return WcStatus::kLocProtErr;
    data += n;
  }
  return WcStatus::kSuccess;
}

uint8_t* MrTable::Remote(uint32_t rkey, uint32_t pd, uint64_t addr, uint64_t len,
                         AccessFlags need) const {
  const Mr* mr = ByKey(rkey);
  if (!mr || mr->pd != pd || (mr->access & need) != need) return nullptr;
  if (len == 0) return mr->buf;  // a zero-length access checks only key, PD and rights
  if (!Inside(*mr, addr, len)) return nullptr;
  return reinterpret_cast<uint8_t*>(addr);
}

uint8_t* MrTable::Within(const Mr& mr, uint64_t addr, uint64_t len) {
  if (len == 0) return mr.buf;
  return Inside(mr, addr, len) ? reinterpret_cast<uint8_t*>(addr) : nullptr;
}

}  // namespace qptwin::model::engine
