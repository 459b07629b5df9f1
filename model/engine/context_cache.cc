#include "model/engine/context_cache.h"

#include <algorithm>

namespace qptwin::model::engine {
namespace {

// splitmix64's finaliser: neighbouring keys (QPNs, pages) spread over all sets.
uint64_t Mix(uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

constexpr const char* kKindNames[] = {"QPC", "MPT", "MTT", "WQE"};
static_assert(sizeof(kKindNames) / sizeof(kKindNames[0]) == kCacheKinds);

}  // namespace

const char* ToName(CacheKind k) { return kKindNames[static_cast<int>(k)]; }

SetAssociativeLru::SetAssociativeLru(uint32_t entries, uint32_t ways) : capacity_(entries) {
  if (entries == 0) return;
  if (ways == 0 || ways >= entries) {  // fully associative
    keys_.assign(entries, 0);
    hashes_.assign(entries, 0);
    prev_.assign(entries, kNone);
    next_.assign(entries, kNone);
    size_t n = 1;
    int bits = 0;
    while (n < 2 * static_cast<size_t>(entries)) {  // load factor <= 1/2
      n <<= 1;
      ++bits;
    }
    index_.assign(n, 0);
    mask_ = n - 1;
    home_shift_ = 64 - bits;
    return;
  }
  ways_ = ways;
  sets_ = entries / ways;
  capacity_ = sets_ * ways_;  // a partial set would make the capacity a lie
  slots_.assign(static_cast<size_t>(capacity_), 0);
  used_.assign(static_cast<size_t>(capacity_), 0);
}

uint32_t SetAssociativeLru::SetOf(uint64_t key) const {
  return static_cast<uint32_t>(Mix(key) % sets_);
}

std::size_t SetAssociativeLru::size() const {
  if (sets_ == 0) return count_;
  return static_cast<size_t>(std::count_if(slots_.begin(), slots_.end(),
                                           [](uint64_t s) { return s != 0; }));
}

uint64_t SetAssociativeLru::IndexHash(uint64_t key) {
  // Fibonacci hashing: the product's top bits are the home position (Home). Keys that count
  // up (a QP's WQE serials, a region's pages) land a golden-ratio step apart, so the probes
  // stay short; which slot holds a key changes nothing the cache answers (contract 2).
  return key * 0x9e3779b97f4a7c15ULL;
}

size_t SetAssociativeLru::Find(uint64_t key, uint64_t h) const {
  size_t pos = Home(h);
  while (index_[pos] != 0 && keys_[index_[pos] - 1] != key) pos = (pos + 1) & mask_;
  return pos;
}

void SetAssociativeLru::Unlink(uint32_t slot) {
  const uint32_t p = prev_[slot], n = next_[slot];
  (p == kNone ? head_ : next_[p]) = n;
  (n == kNone ? tail_ : prev_[n]) = p;
  prev_[slot] = next_[slot] = kNone;
}

void SetAssociativeLru::PushFront(uint32_t slot) {
  prev_[slot] = kNone;
  next_[slot] = head_;
  (head_ == kNone ? tail_ : prev_[head_]) = slot;
  head_ = slot;
}

void SetAssociativeLru::Unindex(size_t pos) {
  // Backward-shift deletion: entries after `pos` whose home is not in (pos, j] move back, so
  // every key stays reachable from its home without tombstones.
  size_t j = pos;
  for (;;) {
    j = (j + 1) & mask_;
    if (index_[j] == 0) break;
    const size_t home = Home(hashes_[index_[j] - 1]);
    const bool stays = pos <= j ? (pos < home && home <= j) : (pos < home || home <= j);
    if (!stays) {
      index_[pos] = index_[j];
      pos = j;
    }
  }
  index_[pos] = 0;
}

bool SetAssociativeLru::AccessMiss(uint64_t key) {
  if (sets_ == 0) {  // fully associative; the most recently used key was Access's
    const uint64_t h = IndexHash(key);
    size_t pos = Find(key, h);
    if (index_[pos] != 0) {
      const uint32_t slot = index_[pos] - 1;
      if (head_ != slot) {
        Unlink(slot);
        PushFront(slot);
      }
      return true;
    }
    uint32_t slot;
    if (!free_.empty()) {
      slot = free_.back();
      free_.pop_back();
    } else if (used_slots_ < capacity_) {
      slot = used_slots_++;
    } else {  // full: the least recently used goes
      slot = tail_;
      Unlink(slot);
      Unindex(Find(keys_[slot], hashes_[slot]));
      --count_;
      pos = Find(key, h);  // the shift may have moved the empty position
    }
    keys_[slot] = key;
    hashes_[slot] = h;
    index_[pos] = slot + 1;
    PushFront(slot);
    ++count_;
    return false;
  }
  const size_t base = static_cast<size_t>(SetOf(key)) * ways_;
  const uint64_t tag = key + 1;
  size_t victim = base;
  bool empty = false;  // an empty slot wins; else the least recently used
  for (size_t i = base; i < base + ways_; ++i) {
    if (slots_[i] == tag) {
      used_[i] = ++clock_;
      return true;
    }
    if (empty) continue;
    if (slots_[i] == 0) {
      victim = i;
      empty = true;
    } else if (used_[i] < used_[victim]) {
      victim = i;
    }
  }
  slots_[victim] = tag;
  used_[victim] = ++clock_;
  return false;
}

void SetAssociativeLru::Erase(uint64_t key) {
  if (capacity_ == 0) return;
  if (sets_ == 0) {
    const size_t pos = Find(key, IndexHash(key));
    if (index_[pos] == 0) return;
    const uint32_t slot = index_[pos] - 1;
    Unindex(pos);
    Unlink(slot);
    free_.push_back(slot);
    --count_;
    return;
  }
  const size_t base = static_cast<size_t>(SetOf(key)) * ways_;
  for (size_t i = base; i < base + ways_; ++i) {
    if (slots_[i] == key + 1) {
      slots_[i] = 0;
      used_[i] = 0;
    }
  }
}

ContextCache::ContextCache(const CacheTiming& t)
    : enabled_(t.enabled), page_bytes_(std::max<uint32_t>(1, t.page_bytes)) {
  if ((page_bytes_ & (page_bytes_ - 1)) == 0) {
    page_shift_ = 0;
    while ((uint32_t{1} << page_shift_) != page_bytes_) ++page_shift_;
  }
  const uint32_t n = t.enabled ? 1 : 0;  // a disabled cache holds nothing
  caches_.emplace_back(n * t.qpc_entries, t.ways);
  caches_.emplace_back(n * t.mpt_entries, t.ways);
  caches_.emplace_back(n * t.mtt_entries, t.ways);
  caches_.emplace_back(n * t.wqe_entries, t.ways);
}

uint32_t ContextCache::capacity(CacheKind kind) const {
  return caches_[static_cast<int>(kind)].capacity();
}

void ContextCache::Insert(CacheKind kind, uint64_t key) {
  (void)caches_[static_cast<int>(kind)].Access(key);
}

void ContextCache::Erase(CacheKind kind, uint64_t key) {
  caches_[static_cast<int>(kind)].Erase(key);
}

uint64_t ContextCache::PageOf(uint32_t region, uint64_t addr) const {
  if (!last_region_valid_ || last_region_ != region) {
    auto it = region_base_.find(region);
    last_base_ = it == region_base_.end() ? 0 : it->second;
    last_region_ = region;
    last_region_valid_ = true;
  }
  const uint64_t base = addr < last_base_ ? 0 : last_base_;
  return page_shift_ >= 0 ? (addr - base) >> page_shift_ : (addr - base) / page_bytes_;
}

void ContextCache::InsertPages(uint32_t region, uint64_t addr, uint64_t len) {
  if (capacity(CacheKind::kMtt) == 0) return;
  const uint64_t first = PageOf(region, addr);
  const uint64_t last = PageOf(region, addr + std::max<uint64_t>(len, 1) - 1);
  for (uint64_t page = first; page <= last; ++page) {
    Insert(CacheKind::kMtt, (uint64_t{region} << 40) ^ page);
  }
}

uint32_t ContextCache::LookupPages(uint32_t region, uint64_t addr, uint64_t len) {
  if (capacity(CacheKind::kMtt) == 0) return 0;
  const uint64_t first = PageOf(region, addr);
  const uint64_t last = PageOf(region, addr + std::max<uint64_t>(len, 1) - 1);
  uint32_t misses = 0;
  for (uint64_t page = first; page <= last; ++page) {
    // The same page registered twice has two translations: the region is part of the key.
    if (!Lookup(CacheKind::kMtt, (uint64_t{region} << 40) ^ page)) ++misses;
  }
  return misses;
}

}  // namespace qptwin::model::engine
