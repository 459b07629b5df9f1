#include "model/engine/context_cache.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <list>

namespace qptwin::model::engine {
namespace {

CacheTiming Small() {
  CacheTiming t;
  t.enabled = true;
  t.qpc_entries = 64;
  t.mpt_entries = 8;
  t.mtt_entries = 16;
  t.wqe_entries = 32;
  t.ways = 4;
  t.page_bytes = 4096;
  return t;
}

TEST(SetAssociativeLru, FirstAccessMissesSecondHits) {
  SetAssociativeLru c(64, 4);
  EXPECT_FALSE(c.Access(7));
  EXPECT_TRUE(c.Access(7));
  EXPECT_EQ(c.size(), 1u);
}

TEST(SetAssociativeLru, HoldsExactlyItsCapacity) {
  for (uint32_t ways : {0u, 1u, 4u, 8u}) {
    SetAssociativeLru c(64, ways);
    for (uint64_t k = 0; k < 10'000; ++k) (void)c.Access(k);
    EXPECT_LE(c.size(), 64u) << ways;
    EXPECT_EQ(c.capacity(), 64u) << ways;
  }
}

TEST(SetAssociativeLru, FullyAssociativeEvictsTheLeastRecentlyUsed) {
  SetAssociativeLru c(3, 0);
  (void)c.Access(1);
  (void)c.Access(2);
  (void)c.Access(3);
  EXPECT_TRUE(c.Access(1));   // 1 is now the most recent; 2 the least
  EXPECT_FALSE(c.Access(4));  // evicts 2
  EXPECT_TRUE(c.Access(1));
  EXPECT_TRUE(c.Access(3));
  EXPECT_FALSE(c.Access(2));
}

TEST(SetAssociativeLru, FullyAssociativeIsExactLruUnderRandomAccessAndErase) {
  // Against a plain reference LRU (a list, most recent first): same hit or miss on every
  // access, same size, over random accesses and erases of a key space twice the capacity.
  constexpr uint32_t kCap = 37;
  SetAssociativeLru c(kCap, 0);
  std::list<uint64_t> ref;
  uint64_t x = 12345;
  for (int i = 0; i < 200'000; ++i) {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    const uint64_t key = (x >> 33) % (2 * kCap) * 0x10001;  // spread and colliding hashes
    auto it = std::find(ref.begin(), ref.end(), key);
    if ((x >> 20) % 8 == 0) {  // an erase
      c.Erase(key);
      if (it != ref.end()) ref.erase(it);
    } else {
      const bool hit = it != ref.end();
      ASSERT_EQ(c.Access(key), hit) << i;
      if (hit) ref.erase(it);
      ref.push_front(key);
      if (ref.size() > kCap) ref.pop_back();
    }
    ASSERT_EQ(c.size(), ref.size()) << i;
  }
}

TEST(SetAssociativeLru, CyclicAccessBeyondCapacityAlwaysMisses) {
  // Cyclic access to more keys than the capacity: LRU misses every time.
  SetAssociativeLru cyc(8, 0);
  for (int round = 0; round < 3; ++round) {
    for (uint64_t k = 0; k < 9; ++k) EXPECT_FALSE(cyc.Access(k)) << round << " " << k;
  }
  // Within the capacity every later round hits.
  SetAssociativeLru fit(8, 4);
  int misses = 0;
  for (int round = 0; round < 3; ++round) {
    for (uint64_t k = 0; k < 4; ++k) misses += fit.Access(k) ? 0 : 1;
  }
  EXPECT_LE(misses, 4 + 4);  // at most the cold misses plus conflicts within one set
}

TEST(SetAssociativeLru, EraseForgetsAKey) {
  for (uint32_t ways : {0u, 4u}) {
    SetAssociativeLru c(16, ways);
    (void)c.Access(5);
    c.Erase(5);
    EXPECT_FALSE(c.Access(5)) << ways;
  }
}

TEST(ContextCache, CountsHitsAndMissesPerKind) {
  ContextCache c(Small());
  EXPECT_FALSE(c.Lookup(CacheKind::kQpc, 17));
  EXPECT_TRUE(c.Lookup(CacheKind::kQpc, 17));
  EXPECT_FALSE(c.Lookup(CacheKind::kMpt, 17));  // kinds are separate caches
  EXPECT_EQ(c.stats(CacheKind::kQpc).hits, 1u);
  EXPECT_EQ(c.stats(CacheKind::kQpc).misses, 1u);
  EXPECT_EQ(c.stats(CacheKind::kMpt).misses, 1u);
  EXPECT_DOUBLE_EQ(c.stats(CacheKind::kQpc).miss_rate(), 0.5);
  EXPECT_EQ(c.stats(CacheKind::kWqe).hits + c.stats(CacheKind::kWqe).misses, 0u);
}

TEST(ContextCache, CapacityPerKindIsTheProfiles) {
  ContextCache c(Small());
  EXPECT_EQ(c.capacity(CacheKind::kQpc), 64u);
  EXPECT_EQ(c.capacity(CacheKind::kMpt), 8u);
  EXPECT_EQ(c.capacity(CacheKind::kMtt), 16u);
  EXPECT_EQ(c.capacity(CacheKind::kWqe), 32u);
}

TEST(ContextCache, QpsBeyondTheQpcCapacityMissOnEveryRound) {
  CacheTiming t = Small();
  t.ways = 0;  // LRU: a cyclic sweep over more QPs than entries never hits
  ContextCache c(t);
  for (int round = 0; round < 4; ++round) {
    for (uint64_t qpn = 0; qpn < 64; ++qpn) (void)c.Lookup(CacheKind::kQpc, qpn);
  }
  EXPECT_EQ(c.stats(CacheKind::kQpc).misses, 64u);  // 64 QPs fit: cold misses only
  ContextCache d(t);
  for (int round = 0; round < 4; ++round) {
    for (uint64_t qpn = 0; qpn < 65; ++qpn) (void)d.Lookup(CacheKind::kQpc, qpn);
  }
  EXPECT_EQ(d.stats(CacheKind::kQpc).misses, 4u * 65u);  // one more: every lookup misses
}

TEST(ContextCache, PagesAreTranslatedOnePerPage) {
  ContextCache c(Small());
  EXPECT_EQ(c.LookupPages(1, 0, 64), 1u);
  EXPECT_EQ(c.LookupPages(1, 100, 64), 0u);        // the same page
  EXPECT_EQ(c.LookupPages(1, 4096 - 8, 16), 1u);   // straddles into page 1
  EXPECT_EQ(c.LookupPages(1, 8192, 3 * 4096), 3u);  // pages 2, 3, 4
  EXPECT_EQ(c.LookupPages(2, 0, 64), 1u);          // another region's translation of page 0
  EXPECT_EQ(c.stats(CacheKind::kMtt).misses, 6u);
}

TEST(ContextCache, PagesCountFromTheRegionBaseWhereverItIsMapped) {
  // Two runs whose regions mmap placed elsewhere see the same hits and misses.
  uint64_t misses[2] = {0, 0};
  const uint64_t bases[2] = {0x7f0000000000ull, 0x7f12345f6000ull};
  for (int run = 0; run < 2; ++run) {
    ContextCache c(Small());
    c.SetRegionBase(3, bases[run]);
    for (uint64_t i = 0; i < 200; ++i) {
      misses[run] += c.LookupPages(3, bases[run] + (i * 7919 % 64) * 4096 + 8, 64);
    }
  }
  EXPECT_EQ(misses[0], misses[1]);
  ContextCache c(Small());
  c.SetRegionBase(3, 0x10000);
  EXPECT_EQ(c.LookupPages(3, 0x10000 + 4096 - 8, 16), 2u);  // pages 0 and 1 of the region
  EXPECT_EQ(c.LookupPages(3, 0x10000 + 100, 8), 0u);
}

TEST(ContextCache, ADisabledCacheNeverMisses) {
  CacheTiming t = Small();
  t.enabled = false;
  ContextCache c(t);
  for (uint64_t k = 0; k < 1000; ++k) EXPECT_TRUE(c.Lookup(CacheKind::kQpc, k));
  EXPECT_EQ(c.LookupPages(1, 0, 1 << 20), 0u);
  EXPECT_EQ(c.stats(CacheKind::kQpc).misses, 0u);
  EXPECT_EQ(c.capacity(CacheKind::kQpc), 0u);
}

TEST(ContextCache, InsertIsAPrefetchThatCountsNothing) {
  ContextCache c(Small());
  c.Insert(CacheKind::kWqe, 9);
  EXPECT_TRUE(c.Lookup(CacheKind::kWqe, 9));
  EXPECT_EQ(c.stats(CacheKind::kWqe).misses, 0u);
  EXPECT_EQ(c.stats(CacheKind::kWqe).hits, 1u);
}

}  // namespace
}  // namespace qptwin::model::engine
