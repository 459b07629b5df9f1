#include "hw/addressing.h"

#include <gtest/gtest.h>

namespace qptwin::hw {
namespace {

Gid LinkLocal() {
  Gid g;
  g.raw[0] = 0xfe;
  g.raw[1] = 0x80;
  g.raw[15] = 1;
  return g;
}

Gid Ipv4Mapped(uint8_t a, uint8_t b, uint8_t c, uint8_t d) {
  Gid g;
  g.raw[10] = 0xff;
  g.raw[11] = 0xff;
  g.raw[12] = a;
  g.raw[13] = b;
  g.raw[14] = c;
  g.raw[15] = d;
  return g;
}

// rxe on a netdev with an IPv4 address: v1/v2 link-local, then v1/v2 IPv4-mapped.
std::vector<GidEntry> RxeTable() {
  return {{0, LinkLocal(), GidType::kRoceV1},
          {1, LinkLocal(), GidType::kRoceV2},
          {2, Ipv4Mapped(10, 0, 2, 15), GidType::kRoceV1},
          {3, Ipv4Mapped(10, 0, 2, 15), GidType::kRoceV2}};
}

TEST(Addressing, RecognisesIpv4MappedGids) {
  EXPECT_TRUE(IsIpv4MappedGid(Ipv4Mapped(10, 0, 2, 15)));
  EXPECT_FALSE(IsIpv4MappedGid(LinkLocal()));
  EXPECT_FALSE(IsIpv4MappedGid(Gid{}));
  EXPECT_TRUE(IsZeroGid(Gid{}));
  EXPECT_FALSE(IsZeroGid(LinkLocal()));
}

TEST(Addressing, RoceDefaultIsTheRoceV2Ipv4MappedGid) {
  EXPECT_EQ(ChooseGidIndex(RxeTable(), LinkLayer::kEthernet), 3);
}

TEST(Addressing, RoceWithoutIpv4FallsBackToRoceV2) {
  std::vector<GidEntry> t = RxeTable();
  t.resize(2);
  EXPECT_EQ(ChooseGidIndex(t, LinkLayer::kEthernet), 1);
}

TEST(Addressing, RoceV1OnlyTableUsesTheFirstEntry) {
  std::vector<GidEntry> t = {{0, LinkLocal(), GidType::kRoceV1}};
  EXPECT_EQ(ChooseGidIndex(t, LinkLayer::kEthernet), 0);
}

TEST(Addressing, ZeroGidsAreNeverChosen) {
  std::vector<GidEntry> t = {{0, Gid{}, GidType::kRoceV2}, {1, LinkLocal(), GidType::kRoceV1}};
  EXPECT_EQ(ChooseGidIndex(t, LinkLayer::kEthernet), 1);
}

TEST(Addressing, InfiniBandUsesThePortGid) {
  std::vector<GidEntry> t = {{0, LinkLocal(), GidType::kIb}, {1, LinkLocal(), GidType::kIb}};
  EXPECT_EQ(ChooseGidIndex(t, LinkLayer::kInfiniBand), 0);
}

TEST(Addressing, EmptyTableHasNoChoice) {
  EXPECT_EQ(ChooseGidIndex({}, LinkLayer::kEthernet), -1);
  EXPECT_EQ(ChooseGidIndex({}, LinkLayer::kInfiniBand), -1);
}

TEST(Addressing, ParsesSysfsGidTypes) {
  EXPECT_EQ(ParseSysfsGidType("RoCE v2"), GidType::kRoceV2);
  EXPECT_EQ(ParseSysfsGidType("IB/RoCE v1"), GidType::kRoceV1);
  EXPECT_EQ(ParseSysfsGidType(""), GidType::kIb);
}

}  // namespace
}  // namespace qptwin::hw
