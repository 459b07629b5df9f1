#include "model/engine/ring.h"

#include <gtest/gtest.h>

#include <deque>
#include <memory>
#include <random>
#include <string>

namespace qptwin::model::engine {
namespace {

TEST(Ring, BehavesAsADequeUsedAsAFifo) {
  Ring<int> ring;
  std::deque<int> deque;
  std::mt19937 rng(7);
  for (int step = 0; step < 100000; ++step) {
    if (deque.empty() || rng() % 3 != 0) {
      ring.push_back(step);
      deque.push_back(step);
    } else {
      ASSERT_EQ(ring.take_front(), deque.front());
      deque.pop_front();
    }
    ASSERT_EQ(ring.size(), deque.size());
    if (!deque.empty()) {
      ASSERT_EQ(ring.front(), deque.front());
      ASSERT_EQ(ring.back(), deque.back());
      ASSERT_EQ(ring[deque.size() / 2], deque[deque.size() / 2]);
    }
  }
}

// Items of 1 KiB: blocks of 64 slots, so the ring grows through many blocks, each time with
// its head inside a block (the wrapped items move to the new block).
TEST(Ring, GrowsInBlocksKeepingOrder) {
  struct Big {
    int v = -1;
    char pad[1020];
  };
  static_assert(Ring<Big>::kBlock == 64, "64 KiB / 1 KiB");
  Ring<Big> ring;
  std::deque<int> deque;
  std::mt19937 rng(11);
  for (int step = 0; step < 20000; ++step) {
    if (deque.empty() || rng() % 4 != 0) {
      Big b;
      b.v = step;
      ring.push_back(b);
      deque.push_back(step);
    } else {
      ASSERT_EQ(ring.take_front().v, deque.front());
      deque.pop_front();
    }
    ASSERT_EQ(ring.size(), deque.size());
    ASSERT_EQ(ring.front().v, deque.front());
    ASSERT_EQ(ring.back().v, deque.back());
    ASSERT_EQ(ring[deque.size() / 3].v, deque[deque.size() / 3]);
  }
  EXPECT_GE(ring.capacity(), ring.size());
  EXPECT_EQ(ring.capacity() & (ring.capacity() - 1), 0u);
  size_t i = 0;
  for (const Big& b : ring) ASSERT_EQ(b.v, deque[i++]);
  Ring<Big> other;
  other.swap(ring);
  EXPECT_TRUE(ring.empty());
  EXPECT_EQ(other.size(), deque.size());
  EXPECT_EQ(other.front().v, deque.front());
}

TEST(Ring, CapacityIsTheLargestSizeNotTheTraffic) {
  Ring<int> ring;
  for (int i = 0; i < 1000000; ++i) {
    ring.push_back(i);
    if (ring.size() > 100) ring.pop_front();
  }
  EXPECT_EQ(ring.size(), 100u);
  EXPECT_EQ(ring.capacity(), 128u);
  ring.clear();
  EXPECT_TRUE(ring.empty());
  EXPECT_EQ(ring.capacity(), 128u);
}

TEST(Ring, PopFrontReleasesTheItem) {
  Ring<std::shared_ptr<int>> ring;
  auto p = std::make_shared<int>(1);
  ring.push_back(p);
  ring.push_back(std::make_shared<int>(2));
  EXPECT_EQ(p.use_count(), 2);
  ring.pop_front();
  EXPECT_EQ(p.use_count(), 1);
  EXPECT_EQ(*ring.front(), 2);
}

TEST(Ring, AnItemOfTheRingItselfMayBePushedAlsoWhenItGrows) {
  Ring<std::string> r;
  const std::string long_text(100, 'x');  // no small-string buffer: the heap's
  r.push_back(long_text + "0");
  for (int i = 1; i < 40; ++i) {
    r.push_back(r.front());  // a copy of its own front, across every growth
    r.back() = long_text + std::to_string(i);
  }
  ASSERT_EQ(r.size(), 40u);
  for (int i = 0; i < 40; ++i) EXPECT_EQ(r[i], long_text + std::to_string(i));
  Ring<std::string> m;
  m.push_back(long_text);
  for (int i = 0; i < 20; ++i) m.push_back(std::move(m[m.size() - 1]));  // moved from itself
  EXPECT_EQ(m.back(), long_text);
}

}  // namespace
}  // namespace qptwin::model::engine
