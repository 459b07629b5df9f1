// The NIC's on-chip context caches (mlx5's ICM caches): QP contexts, memory keys (MPT),
// page translations (MTT) and prefetched send WQEs. Plain C++ timing data: a lookup says hit
// or miss and counts it; what a miss costs is timing.h contract 5 (Nic::ContextsReady).
//
// Contract:
//  1. One cache per kind, of CacheTiming's entries, set-associative with `ways` entries per
//     set and LRU replacement within a set (ways 0, or ways >= entries: one fully
//     associative LRU). A set is chosen by a hash of the key, so a kind holds exactly its
//     capacity in entries and no more.
//  2. Lookup() of a key not present is a miss and inserts it (evicting its set's least
//     recently used entry when the set is full); a present key is a hit and becomes the most
//     recently used. Insert() places a key without counting (a prefetch). A kind with 0
//     entries, or a cache that is not enabled, never misses and counts nothing.
//  3. Memory is bounded by the capacities (16 bytes per entry set-associative; a fully
//     associative cache keeps a list node and a hash entry per key, ~80 bytes).
//  4. Single-threaded, like the Nic that owns it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "model/timing.h"

namespace qptwin::model::engine {

enum class CacheKind : uint8_t { kQpc, kMpt, kMtt, kWqe };
constexpr int kCacheKinds = 4;
const char* ToName(CacheKind k);

struct CacheStats {
  uint64_t hits = 0;
  uint64_t misses = 0;
  double miss_rate() const {
    return hits + misses ? static_cast<double>(misses) / static_cast<double>(hits + misses) : 0;
  }
};

// One cache of `entries` keys (contract 1).
class SetAssociativeLru {
 public:
  SetAssociativeLru(uint32_t entries, uint32_t ways);
  // True on a hit; a miss inserts the key (contract 2).
  bool Access(uint64_t key) {
    if (capacity_ == 0) return true;
    // Fully associative: the most recently used key again (a QP's context, an MR's, per
    // packet) is a hit that changes nothing; inline, as most lookups are this one.
    if (sets_ == 0 && head_ != kNone && keys_[head_] == key) return true;
    return AccessMiss(key);
  }
  void Erase(uint64_t key);
  uint32_t capacity() const { return capacity_; }
  size_t size() const;

 private:
  uint32_t SetOf(uint64_t key) const;
  bool AccessMiss(uint64_t key);  // Access past the most recently used key

  uint32_t capacity_;
  uint32_t sets_ = 0;
  uint32_t ways_ = 0;
  // Set-associative: sets_ x ways_ slots, each a key + 1 (0 = empty) and its last use.
  std::vector<uint64_t> slots_;
  std::vector<uint64_t> used_;
  uint64_t clock_ = 0;
  // Fully associative (sets_ == 0), without an allocation per access: capacity_ slots in a
  // doubly linked recency list by index (head_: most recently used), and an open-addressing
  // index (linear probing, backward-shift erase) from a key's hash to its slot + 1.
  static constexpr uint32_t kNone = 0xffffffffu;
  // Its index position, or the empty one it would take; h = IndexHash(key).
  static uint64_t IndexHash(uint64_t key);
  size_t Home(uint64_t h) const { return static_cast<size_t>(h >> home_shift_); }
  size_t Find(uint64_t key, uint64_t h) const;
  void Unlink(uint32_t slot);
  void PushFront(uint32_t slot);
  void Unindex(size_t pos);
  std::vector<uint64_t> keys_;
  std::vector<uint64_t> hashes_;  // IndexHash(keys_[slot]): an eviction and an erase rehash nothing
  std::vector<uint32_t> prev_, next_;
  std::vector<uint32_t> index_;  // slot + 1; 0 = empty
  size_t mask_ = 0;
  int home_shift_ = 63;  // 64 - log2(index_.size())
  uint32_t head_ = kNone, tail_ = kNone;
  uint32_t used_slots_ = 0;      // slots handed out so far (then reused from free_)
  std::vector<uint32_t> free_;   // slots an Erase released
  uint32_t count_ = 0;
};

class ContextCache {
 public:
  explicit ContextCache(const CacheTiming& t);

  bool enabled() const { return enabled_; }
  // Contract 2: true on a hit (always, for a kind that is not cached).
  bool Lookup(CacheKind kind, uint64_t key) {
    SetAssociativeLru& c = caches_[static_cast<int>(kind)];
    if (c.capacity() == 0) return true;
    const bool hit = c.Access(key);
    CacheStats& s = stats_[static_cast<int>(kind)];
    ++(hit ? s.hits : s.misses);
    return hit;
  }
  void Insert(CacheKind kind, uint64_t key);
  void Erase(CacheKind kind, uint64_t key);
  // The MTT entries of the pages [addr, addr + len) touch in the region of key index
  // `region`: looks each up; returns the misses. Pages count from the region's base (as an
  // MTT is indexed), so the same accesses give the same hits whatever address mmap chose.
  uint32_t LookupPages(uint32_t region, uint64_t addr, uint64_t len);
  void InsertPages(uint32_t region, uint64_t addr, uint64_t len);  // a prefetch (contract 2)
  // The start address of region `region` (one entry per region index ever registered).
  void SetRegionBase(uint32_t region, uint64_t base) {
    region_base_[region] = base;
    last_region_valid_ = false;
  }

  const CacheStats& stats(CacheKind kind) const { return stats_[static_cast<int>(kind)]; }
  uint32_t capacity(CacheKind kind) const;

 private:
  bool enabled_;
  uint32_t page_bytes_;
  int page_shift_ = -1;  // log2(page_bytes_) when a power of two: a shift, not a division
  std::vector<SetAssociativeLru> caches_;  // by CacheKind
  std::unordered_map<uint32_t, uint64_t> region_base_;
  // PageOf's last region and its base (0 when it has none): the data path asks for the same
  // region packet after packet.
  mutable bool last_region_valid_ = false;
  mutable uint32_t last_region_ = 0;
  mutable uint64_t last_base_ = 0;
  uint64_t PageOf(uint32_t region, uint64_t addr) const;
  CacheStats stats_[kCacheKinds];
};

}  // namespace qptwin::model::engine
