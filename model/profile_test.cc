#include "model/profile.h"

#include <gtest/gtest.h>

namespace qptwin::model {
namespace {

TEST(Profile, RxeCapsComeFromRxeParam) {
  const Profile* p = FindProfile("rxe");
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->device.max_qp_wr, 1 << 20);  // 6.1 RXE_MAX_QP_WR
  EXPECT_EQ(p->device.max_sge, 32);
  EXPECT_EQ(p->device.max_cqe, 32767);
  EXPECT_EQ(p->device.max_qp_rd_atom, 128);
  EXPECT_EQ(p->device.max_inline_data, 512);  // probed on rxe, kernel 6.1
  EXPECT_EQ(p->port.active_mtu, Mtu::k1024);
  EXPECT_EQ(p->port.link_layer, LinkLayer::kEthernet);
  EXPECT_FALSE(p->behaviour.send_errors_to_sqe);
  EXPECT_TRUE(p->behaviour.reject_extended_mask);
}

TEST(Profile, IbtaUsesSqeAndInfiniBand) {
  const Profile* p = FindProfile("IBTA");
  ASSERT_NE(p, nullptr);
  EXPECT_TRUE(p->behaviour.send_errors_to_sqe);
  EXPECT_EQ(p->port.link_layer, LinkLayer::kInfiniBand);
  EXPECT_EQ(FindProfile("nope"), nullptr);
}

TEST(Profile, RxeRoundsQueuesAndSharesInlineWithSges) {
  const Behaviour& rxe = FindProfile("rxe")->behaviour;
  EXPECT_EQ(QueueSlots(rxe, 16), 31u);  // roundup_pow_of_two(17) - 1
  EXPECT_EQ(QueueSlots(rxe, 15), 15u);
  EXPECT_EQ(QueueSlots(rxe, 0), 0u);
  QpCap c = GrantedCaps(rxe, QpCap{1, 1, 4, 1, 0});
  EXPECT_EQ(c.max_inline_data, 64u);  // 4 SGEs * 16 bytes
  c = GrantedCaps(rxe, QpCap{1, 1, 1, 1, 100});
  EXPECT_EQ(c.max_send_sge, 6u);  // 100 / 16
  EXPECT_EQ(c.max_inline_data, 100u);
  const Behaviour& ibta = FindProfile("ibta")->behaviour;
  EXPECT_EQ(QueueSlots(ibta, 16), 16u);
}

TEST(Profile, KnownProfilesIncludeTheTimingProfiles) {
  auto names = KnownProfileNames();
  for (const char* n : {"rxe", "ibta", "cx6-100g", "cx6-dc"}) {
    EXPECT_NE(FindProfile(n), nullptr) << n;
  }
  EXPECT_EQ(names.size(), 4u);
}

TEST(Profile, Cx6IsA100GbRoceNicWithHardwarePipelining) {
  const Profile* p = FindProfile("cx6-100g");
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->timing.link.gbps, 100);
  EXPECT_EQ(p->timing.link.format, WireFormat::kRoceV2);
  EXPECT_EQ(p->port.link_layer, LinkLayer::kEthernet);
  EXPECT_EQ(p->port.active_mtu, Mtu::k4096);
  EXPECT_FALSE(p->timing.nic.serial_processing);
  EXPECT_GT(p->timing.control.create_qp_ns, p->timing.control.modify_qp_ns);
  EXPECT_GT(p->timing.nic.pcie_gbps, p->timing.link.gbps) << "PCIe must not limit the link";
}

TEST(Profile, DatacenterVariantAddsSwitchHopsOnly) {
  const Profile* a = FindProfile("cx6-100g");
  const Profile* b = FindProfile("cx6-dc");
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(a->timing.link.switch_hops, 0);
  EXPECT_GT(b->timing.link.switch_hops, 0);
  EXPECT_EQ(a->timing.nic.pcie_read_ns, b->timing.nic.pcie_read_ns);
  EXPECT_EQ(a->timing.host.post_call_ns, b->timing.host.post_call_ns);
}

TEST(Profile, OnlyTheCx6ProfilesHaveContextCaches) {
  // rxe is a software device and ibta the reference behaviour: no cache, no miss, so their
  // timing is what it was before the caches existed (timing.h contract 5).
  EXPECT_FALSE(FindProfile("rxe")->timing.cache.enabled);
  EXPECT_FALSE(FindProfile("ibta")->timing.cache.enabled);
  for (const char* n : {"cx6-100g", "cx6-dc"}) {
    const CacheTiming& c = FindProfile(n)->timing.cache;
    EXPECT_TRUE(c.enabled) << n;
    EXPECT_GT(c.qpc_entries, 0u) << n;
    EXPECT_GT(c.mtt_entries, 0u) << n;
    EXPECT_GT(c.wqe_entries, 0u) << n;
    EXPECT_EQ(c.page_bytes, 4096u) << n;
    EXPECT_GE(c.miss_overlap, 1u) << n;
  }
}

}  // namespace
}  // namespace qptwin::model
