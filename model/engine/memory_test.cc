#include "model/engine/memory.h"

#include <gtest/gtest.h>

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
  EXPECT_EQ(t.Scatter(sges, 7, data, 11), WcStatus::kLocLenErr);
  EXPECT_EQ(t.Scatter(sges, 7, data, 6), WcStatus::kSuccess);
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

}  // namespace
}  // namespace qptwin::model::engine
