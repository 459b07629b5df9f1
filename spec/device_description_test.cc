#include "spec/device_description.h"

#include <cerrno>
#include <cstring>
#include <new>
#include <set>

#include <gtest/gtest.h>

namespace qptwin {
namespace {

TEST(DeviceDescription, BehaviourDefaultsAreIbtas) {
  const DeviceDescription* ibta = FindDeviceDescription("ibta");
  ASSERT_NE(ibta, nullptr);
  EXPECT_TRUE(ibta->deviations.empty());
  EXPECT_EQ(ibta->behaviour(), Behaviour{});
  EXPECT_EQ(DescribeDeviations(Behaviour{}), "ibta");
  const Behaviour b;
  EXPECT_TRUE(b.send_errors_to_sqe);       // C10-38
  EXPECT_FALSE(b.recv_in_err_waits);       // R4: flushed at once
  EXPECT_FALSE(b.post_send_below_rts_queues);  // R2
  EXPECT_TRUE(b.last_wqe_reached_event);   // R6
  EXPECT_EQ(b.over_limit_errno, ENOMEM);
}

TEST(DeviceDescription, EveryDeviationNamesASettingChangesItsIbtaValueAndHasASource) {
  for (const std::string& name : KnownDeviceNames()) {
    const DeviceDescription* d = FindDeviceDescription(name);
    ASSERT_NE(d, nullptr) << name;
    std::set<std::string_view> seen;
    for (const Deviation& dev : d->deviations) {
      const BehaviourSetting* s = FindBehaviourSetting(dev.setting);
      ASSERT_NE(s, nullptr) << name << ": " << dev.setting;
      EXPECT_NE(s->Get(Behaviour{}), dev.value) << name << " restates IBTA's " << dev.setting;
      EXPECT_FALSE(dev.source.empty()) << name << ": " << dev.setting;
      EXPECT_TRUE(seen.insert(dev.setting).second) << name << " sets " << dev.setting << " twice";
    }
  }
}

// Every bool field of Behaviour has a row: constructed over bytes set to 0xab, each bool
// holds 0 or 1 and each int all its bytes (none of the defaults has a 0xab byte), while
// padding keeps 0xab. So the bytes that are not 0xab are the fields' (the size check in
// device_description.cc lets a few fields through by padding).
TEST(DeviceDescription, EveryFlagFieldHasItsRow) {
  size_t flags = 0, numbers = 0;
  for (const BehaviourSetting& s : BehaviourSettings()) (s.flag ? flags : numbers) += 1;
  alignas(Behaviour) unsigned char raw[sizeof(Behaviour)];
  std::memset(raw, 0xab, sizeof raw);
  new (raw) Behaviour;  // default-initialised: no zeroing of the padding
  size_t bool_bytes = 0;
  for (size_t i = 0; i < sizeof raw; ++i) bool_bytes += raw[i] != 0xab;
  EXPECT_EQ(bool_bytes, flags + numbers * sizeof(int))
      << "a field of Behaviour without its row, or a row too many";
}

TEST(DeviceDescription, SettingsTableNamesEveryFieldOnce) {
  std::set<std::string_view> names;
  Behaviour flipped;
  for (const BehaviourSetting& s : BehaviourSettings()) {
    EXPECT_TRUE(names.insert(s.name).second) << s.name;
    EXPECT_NE(s.flag == nullptr, s.number == nullptr) << s.name;
    s.Set(flipped, s.flag ? !s.Get(flipped) : s.Get(flipped) + 1);
  }
  // Each field flipped once: the two differ in every setting.
  EXPECT_EQ(DescribeDifferences(Behaviour{}, flipped).empty(), false);
  for (const BehaviourSetting& s : BehaviourSettings()) {
    EXPECT_NE(s.Get(Behaviour{}), s.Get(flipped)) << s.name;
  }
}

TEST(DeviceDescription, RxeIsSoftRoceOnLinux61) {
  const DeviceDescription* rxe = FindDeviceDescription("RXE");  // case-insensitive
  ASSERT_NE(rxe, nullptr);
  const Behaviour b = rxe->behaviour();
  EXPECT_FALSE(b.supports_xrc);
  EXPECT_FALSE(b.send_errors_to_sqe);
  EXPECT_TRUE(b.post_send_below_rts_queues);
  EXPECT_TRUE(b.recv_in_err_waits);
  EXPECT_TRUE(b.queues_rounded_up);
  EXPECT_EQ(b.over_limit_errno, EINVAL);
  EXPECT_EQ(rxe->device.max_qp_wr, 1 << 20);      // RXE_MAX_QP_WR (6.1)
  EXPECT_EQ(rxe->device.max_inline_data, 512);   // probed on 6.1
  EXPECT_EQ(rxe->port.active_mtu, Mtu::k1024);
  EXPECT_EQ(rxe->port.link_layer, LinkLayer::kEthernet);
  EXPECT_NE(DescribeDeviations(b).find("post_send_below_rts_queues=1"), std::string::npos);
  EXPECT_EQ(FindDeviceDescription("nosuch"), nullptr);
}

TEST(DeviceDescription, RoundedQueuesHoldTwoToTheKMinusOneAndShareInlineWithSges) {
  Behaviour rxe;
  rxe.queues_rounded_up = true;
  EXPECT_EQ(QueueSlots(rxe, 4), 7u);
  EXPECT_EQ(QueueSlots(rxe, 8), 15u);
  EXPECT_EQ(QueueSlots(Behaviour{}, 8), 8u);
  const QpCap granted = GrantedCaps(rxe, QpCap{8, 8, 1, 1, 64});
  EXPECT_EQ(granted.max_send_wr, 15u);
  EXPECT_EQ(granted.max_inline_data, 64u);
  EXPECT_EQ(granted.max_send_sge, 4u);
}

}  // namespace
}  // namespace qptwin
