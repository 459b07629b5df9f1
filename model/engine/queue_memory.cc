#include "model/engine/queue_memory.h"

namespace qptwin::model::engine {

QueueArena::QueueArena(uint64_t base, uint64_t length) : base_(base), length_(length) {
  // Contract 1: blocks start at multiples of kAlign inside the window.
  const uint64_t first = (base + kAlign - 1) & ~(kAlign - 1);
  if (first >= base && first - base < length) {
    const uint64_t usable = (length - (first - base)) & ~(kAlign - 1);
    if (usable > 0) free_[first] = usable;
  }
}

bool QueueArena::Alloc(uint64_t bytes, uint64_t* addr) {
  if (bytes == 0 || bytes > length_) return false;
  bytes = (bytes + kAlign - 1) & ~(kAlign - 1);
  for (auto it = free_.begin(); it != free_.end(); ++it) {
    if (it->second < bytes) continue;
    *addr = it->first;
    const uint64_t rest = it->second - bytes;
    free_.erase(it);
    if (rest > 0) free_[*addr + bytes] = rest;
    used_[*addr] = bytes;
    used_bytes_ += bytes;
    return true;
  }
  return false;
}

void QueueArena::Free(uint64_t addr) {
  auto u = used_.find(addr);
  if (u == used_.end()) return;
  uint64_t start = addr;
  uint64_t bytes = u->second;
  used_bytes_ -= bytes;
  used_.erase(u);
  // Join the free runs on either side (contract 1: runs never adjacent).
  auto next = free_.lower_bound(start);
  if (next != free_.end() && next->first == start + bytes) {
    bytes += next->second;
    next = free_.erase(next);
  }
  if (next != free_.begin()) {
    auto prev = std::prev(next);
    if (prev->first + prev->second == start) {
      start = prev->first;
      bytes += prev->second;
      free_.erase(prev);
    }
  }
  free_[start] = bytes;
}

bool QueueBlock::Take(const std::shared_ptr<QueueArena>& arena, uint64_t bytes,
                      QueueBlock* out) {
  if (!arena) {
    *out = QueueBlock();
    return true;
  }
  uint64_t addr = 0;
  if (!arena->Alloc(bytes, &addr)) return false;
  *out = QueueBlock(arena, addr, (bytes + QueueArena::kAlign - 1) & ~(QueueArena::kAlign - 1));
  return true;
}

}  // namespace qptwin::model::engine
