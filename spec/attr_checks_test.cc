#include "spec/attr_checks.h"

#include <gtest/gtest.h>

namespace qptwin {
namespace {

DeviceAttr Dev() {
  DeviceAttr d;
  d.max_qp_wr = 1024;
  d.max_sge = 32;
  d.max_qp_rd_atom = 128;
  d.max_qp_init_rd_atom = 128;
  d.max_inline_data = 256;
  d.phys_port_cnt = 1;
  return d;
}

std::vector<PortAttr> RocePorts() {
  PortAttr p;
  p.state = PortState::kActive;
  p.active_mtu = Mtu::k1024;
  p.max_mtu = Mtu::k2048;
  p.gid_tbl_len = 4;
  p.pkey_tbl_len = 1;
  p.link_layer = LinkLayer::kEthernet;
  return {p};
}

TEST(AttrChecks, GoodValuesPass) {
  QpAttr a;
  a.port_num = 1;
  a.pkey_index = 0;
  a.path_mtu = Mtu::k1024;
  a.timeout = 14;
  a.retry_cnt = 7;
  a.rnr_retry = 7;
  a.min_rnr_timer = 12;
  a.ah_attr.is_global = true;
  AttrMask m = attr::kPort | attr::kPkeyIndex | attr::kPathMtu | attr::kTimeout |
               attr::kRetryCnt | attr::kRnrRetry | attr::kMinRnrTimer | attr::kAv;
  EXPECT_TRUE(CheckAttrValues(a, m, QpType::kRc, Dev(), RocePorts(), 0).empty());
}

TEST(AttrChecks, EachBadValueIsNamed) {
  struct Case {
    AttrMask bit;
    void (*set)(QpAttr&);
  };
  const Case cases[] = {
      {attr::kPort, [](QpAttr& a) { a.port_num = 2; }},
      {attr::kPkeyIndex, [](QpAttr& a) { a.pkey_index = 1; }},
      {attr::kPathMtu, [](QpAttr& a) { a.path_mtu = Mtu::k4096; }},  // above max_mtu 2048
      {attr::kTimeout, [](QpAttr& a) { a.timeout = 32; }},
      {attr::kRetryCnt, [](QpAttr& a) { a.retry_cnt = 8; }},
      {attr::kRnrRetry, [](QpAttr& a) { a.rnr_retry = 8; }},
      {attr::kMinRnrTimer, [](QpAttr& a) { a.min_rnr_timer = 32; }},
      {attr::kMaxQpRdAtomic, [](QpAttr& a) { a.max_rd_atomic = 129; }},
      {attr::kMaxDestRdAtomic, [](QpAttr& a) { a.max_dest_rd_atomic = 200; }},
      {attr::kAccessFlags, [](QpAttr& a) { a.qp_access_flags = 1u << 30; }},
      {attr::kAv, [](QpAttr& a) { a.ah_attr.is_global = false; }},
      {attr::kAltPath, [](QpAttr&) {}},
  };
  for (const auto& c : cases) {
    QpAttr a;
    a.port_num = 1;
    c.set(a);
    auto problems = CheckAttrValues(a, c.bit, QpType::kRc, Dev(), RocePorts(), 1);
    ASSERT_EQ(problems.size(), 1u) << AttrBitName(c.bit);
    EXPECT_EQ(problems[0].bit, c.bit);
    EXPECT_FALSE(problems[0].reason.empty());
  }
}

TEST(AttrChecks, PathMtuIsCheckedAgainstTheMaxNotTheActiveMtu) {
  QpAttr a;
  a.path_mtu = Mtu::k2048;  // active 1024, max 2048: accepted, as rxe does
  EXPECT_TRUE(CheckAttrValues(a, attr::kPathMtu, QpType::kRc, Dev(), RocePorts(), 1).empty());
}

TEST(AttrChecks, QpCapsBeyondDeviceLimits) {
  QpInitAttr init;
  init.cap.max_send_wr = 1025;
  init.cap.max_recv_sge = 33;
  auto problems = CheckQpCaps(init, Dev());
  ASSERT_EQ(problems.size(), 2u);
  EXPECT_NE(problems[0].find("max_send_wr 1025"), std::string::npos);
}

TEST(AttrChecks, AddressToUsesGrhOnRoce) {
  ConnectionInfo peer;
  peer.qp_num = 17;
  peer.gid.raw[15] = 9;
  peer.link_layer = LinkLayer::kEthernet;
  AhAttr ah = AddressTo(peer, 1);
  EXPECT_TRUE(ah.is_global);
  EXPECT_EQ(ah.grh.sgid_index, 1);
  EXPECT_EQ(ah.grh.dgid, peer.gid);
  peer.link_layer = LinkLayer::kInfiniBand;
  peer.lid = 5;
  ah = AddressTo(peer, 0);
  EXPECT_FALSE(ah.is_global);
  EXPECT_EQ(ah.dlid, 5);
}

}  // namespace
}  // namespace qptwin
