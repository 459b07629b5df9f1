#include "model/profile.h"

#include <gtest/gtest.h>

namespace qptwin::model {
namespace {

TEST(Profile, RxeCapsComeFromRxeParam) {
  const Profile* p = FindProfile("rxe");
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->device.max_qp_wr, 0x4000);
  EXPECT_EQ(p->device.max_sge, 32);
  EXPECT_EQ(p->device.max_cqe, 32767);
  EXPECT_EQ(p->device.max_qp_rd_atom, 128);
  EXPECT_EQ(p->device.max_inline_data, 400);
  EXPECT_EQ(p->port.active_mtu, Mtu::k1024);
  EXPECT_EQ(p->port.link_layer, LinkLayer::kEthernet);
  EXPECT_FALSE(p->quirks.send_errors_to_sqe);
  EXPECT_TRUE(p->quirks.reject_extended_mask);
}

TEST(Profile, IbtaUsesSqeAndInfiniBand) {
  const Profile* p = FindProfile("IBTA");
  ASSERT_NE(p, nullptr);
  EXPECT_TRUE(p->quirks.send_errors_to_sqe);
  EXPECT_EQ(p->port.link_layer, LinkLayer::kInfiniBand);
  EXPECT_EQ(FindProfile("nope"), nullptr);
  EXPECT_EQ(KnownProfileNames().size(), 2u);
}

TEST(Profile, RxeRoundsQueuesAndSharesInlineWithSges) {
  const Quirks& rxe = FindProfile("rxe")->quirks;
  EXPECT_EQ(QueueSlots(rxe, 16), 31u);  // roundup_pow_of_two(17) - 1
  EXPECT_EQ(QueueSlots(rxe, 15), 15u);
  EXPECT_EQ(QueueSlots(rxe, 0), 0u);
  QpCap c = GrantedCaps(rxe, QpCap{1, 1, 4, 1, 0});
  EXPECT_EQ(c.max_inline_data, 64u);  // 4 SGEs * 16 bytes
  c = GrantedCaps(rxe, QpCap{1, 1, 1, 1, 100});
  EXPECT_EQ(c.max_send_sge, 6u);  // 100 / 16
  EXPECT_EQ(c.max_inline_data, 100u);
  const Quirks& ibta = FindProfile("ibta")->quirks;
  EXPECT_EQ(QueueSlots(ibta, 16), 16u);
}

TEST(Profile, PacketMath) {
  EXPECT_EQ(PacketCount(0, 1024), 1u);
  EXPECT_EQ(PacketCount(1024, 1024), 1u);
  EXPECT_EQ(PacketCount(1025, 1024), 2u);
  Timing t;
  t.link_gbps = 8;
  t.header_bytes = 0;
  EXPECT_EQ(PacketWireNs(t, 1000), 1000u);  // 8000 bits at 8 Gb/s
}

}  // namespace
}  // namespace qptwin::model
