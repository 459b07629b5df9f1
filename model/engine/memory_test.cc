#include "model/engine/memory.h"

#include <gtest/gtest.h>

#include <set>
#include <vector>

namespace qptwin::model::engine {
namespace {

uint64_t Addr(const Mr* mr, size_t off = 0) { return reinterpret_cast<uint64_t>(mr->buf) + off; }

TEST(MrTable, RegisterGivesZeroedBufferAndEqualKeys) {
  MrTable t;
  Mr* mr = t.Register(1, 1, 7, 100, access::kLocalWrite);
  ASSERT_NE(mr, nullptr);
  EXPECT_EQ(mr->lkey, mr->rkey);
  for (size_t i = 0; i < 100; ++i) ASSERT_EQ(mr->buf[i], 0);
  EXPECT_EQ(t.CountForPd(7), 1u);
}

TEST(MrTable, LocalCheckRejectsKeyPdBoundsAndRights) {
  MrTable t;
  Mr* mr = t.Register(1, 1, 7, 64, 0);
  EXPECT_EQ(t.CheckLocal({{Addr(mr), 64, mr->lkey}}, 7, 0), WcStatus::kSuccess);
  EXPECT_EQ(t.CheckLocal({{Addr(mr), 65, mr->lkey}}, 7, 0), WcStatus::kLocProtErr);
  EXPECT_EQ(t.CheckLocal({{Addr(mr), 8, mr->lkey + 1}}, 7, 0), WcStatus::kLocProtErr);
  EXPECT_EQ(t.CheckLocal({{Addr(mr), 8, mr->lkey}}, 8, 0), WcStatus::kLocProtErr);
  EXPECT_EQ(t.CheckLocal({{Addr(mr), 8, mr->lkey}}, 7, access::kLocalWrite),
            WcStatus::kLocProtErr);
}

TEST(MrTable, ScatterChecksLengthThenWritesAcrossSges) {
  MrTable t;
  Mr* mr = t.Register(1, 1, 7, 64, access::kLocalWrite);
  uint8_t data[6] = {1, 2, 3, 4, 5, 6};
  std::vector<Sge> sges = {{Addr(mr), 2, mr->lkey}, {Addr(mr, 10), 8, mr->lkey}};
  EXPECT_EQ(t.Scatter(DirectBus::Instance(), sges, 7, data, 11), WcStatus::kLocLenErr);
  EXPECT_EQ(t.Scatter(DirectBus::Instance(), sges, 7, data, 6), WcStatus::kSuccess);
  EXPECT_EQ(mr->buf[1], 2);
  EXPECT_EQ(mr->buf[10], 3);
  EXPECT_EQ(mr->buf[13], 6);
  EXPECT_EQ(mr->buf[14], 0);
}

TEST(MrTable, RemoteNeedsRightsAndBounds) {
  MrTable t;
  Mr* mr = t.Register(1, 1, 7, 64, access::kLocalWrite | access::kRemoteWrite);
  EXPECT_NE(t.Remote(mr->rkey, 7, Addr(mr, 56), 8, access::kRemoteWrite), nullptr);
  EXPECT_EQ(t.Remote(mr->rkey, 7, Addr(mr, 57), 8, access::kRemoteWrite), nullptr);
  EXPECT_EQ(t.Remote(mr->rkey, 7, Addr(mr), 8, access::kRemoteRead), nullptr);
  EXPECT_EQ(t.Remote(mr->rkey, 9, Addr(mr), 8, access::kRemoteWrite), nullptr);
  t.Deregister(1);
  EXPECT_EQ(t.CheckLocal({{0x1000, 8, 0x1ff}}, 7, 0), WcStatus::kLocProtErr);
}

// The issue-14 collision: keys were index << 8 with a 32-bit index, so registration 2^24 + i
// got the key of registration i. Here the wrap happens at the real 24-bit boundary: a
// region at the top index stays live while the index wraps to 1, and every later key
// differs from its key and still resolves to it.
TEST(MrTable, KeysWrapAtTheTwentyFourBitIndexWithoutTakingALiveKey) {
  MrTable t(MrTable::kMaxIndex, MrTable::kMaxIndex - 1);
  Mr* live = t.Register(1, 1, 7, 64, access::kLocalWrite);
  ASSERT_NE(live, nullptr);
  EXPECT_EQ(live->lkey >> 8, MrTable::kMaxIndex - 1);
  const uint32_t live_key = live->lkey;
  std::set<uint32_t> seen = {live_key};
  for (uint32_t h = 2; h < 600; ++h) {
    Mr* mr = t.Register(h, 1, 8, 64, access::kLocalWrite);  // another PD, as in the issue
    ASSERT_NE(mr, nullptr);
    EXPECT_NE(mr->lkey, live_key);
    EXPECT_NE(mr->lkey >> 8, 0u);
    seen.insert(mr->lkey);
    if (h % 2 == 0) t.Deregister(h);
  }
  EXPECT_GT(seen.size(), 500u);  // the index wrapped (to 1, 2, ...) and kept going
  EXPECT_EQ(t.CheckLocal({{Addr(live), 64, live_key}}, 7, access::kLocalWrite),
            WcStatus::kSuccess);
}

TEST(MrTable, CyclicIndexSkipsLiveRegionsAndReusedIndexGetsANewKey) {
  MrTable t(4);  // indices 1..4
  Mr* a = t.Register(1, 1, 7, 8, 0);  // index 1, stays
  Mr* b = t.Register(2, 1, 7, 8, 0);  // index 2, stays
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  std::vector<uint32_t> keys_at_3;
  for (uint32_t h = 3; h < 40; ++h) {
    Mr* mr = t.Register(h, 1, 8, 8, 0);
    ASSERT_NE(mr, nullptr);
    uint32_t index = mr->lkey >> 8;
    EXPECT_TRUE(index == 3 || index == 4) << index;  // never 1 or 2 while they live
    if (index == 3) keys_at_3.push_back(mr->lkey);
    t.Deregister(h);
  }
  ASSERT_GE(keys_at_3.size(), 2u);
  EXPECT_NE(keys_at_3[0], keys_at_3[1]);  // a stale key of index 3 finds nothing
  EXPECT_EQ(t.CheckLocal({{Addr(a), 8, a->lkey}}, 7, 0), WcStatus::kSuccess);
  EXPECT_EQ(t.CheckLocal({{Addr(b), 8, b->lkey}}, 7, 0), WcStatus::kSuccess);
}

TEST(MrTable, RegisterFailsWhenEveryIndexIsLive) {
  MrTable t(3);
  for (uint32_t h = 1; h <= 3; ++h) ASSERT_NE(t.Register(h, 1, 7, 8, 0), nullptr);
  EXPECT_EQ(t.Register(4, 1, 7, 8, 0), nullptr);
  t.Deregister(2);
  Mr* mr = t.Register(5, 1, 7, 8, 0);
  ASSERT_NE(mr, nullptr);
  EXPECT_EQ(mr->lkey >> 8, 2u);
  EXPECT_EQ(t.size(), 3u);
}

}  // namespace
}  // namespace qptwin::model::engine
