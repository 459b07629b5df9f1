// Test support on a real device: open it (or skip with tests/support's one message) and
// build an RC loopback pair of tests/support Sides on it.
//
// Fixtures derive from DeviceTest (or call OpenTestDeviceOrSkip() and return without a device).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "hw/verbs_backend.h"
#include "spec/backend.h"
#include "spec/bring_up.h"
#include "tests/support/support.h"

namespace qptwin::hw {

using ::qptwin::testing::Side;

struct TestDevice {
  std::unique_ptr<Backend> backend;
  std::shared_ptr<Device> device;
  std::string unavailable;  // why there is no device; empty when `device` is set
};

// Without GoogleTest (for binaries): `unavailable` says why there is no device.
TestDevice OpenTestDevice();
// In a test: no device skips the test with tests/support's message.
TestDevice OpenTestDeviceOrSkip();

// A fixture with the device open in dev_ (the test is skipped, with the reason, without
// one: a subclass's SetUp calls DeviceTest::SetUp() and returns when dev_ is null).
class DeviceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    t_ = OpenTestDeviceOrSkip();
    dev_ = t_.device.get();
  }
  TestDevice t_;
  Device* dev_ = nullptr;
};

// Two RC QPs on one device and one PD, each with one CQ (Side::scq == Side::rcq) and a
// registered buffer of kBufBytes (access::kAll).
struct RcPair {
  PdHandle pd;
  Side a;
  Side b;
};

inline constexpr size_t kBufBytes = 64 * 1024;
inline constexpr uint64_t kWaitNs = 10'000'000'000;  // rxe under QEMU TCG is slow

// Creates the pair in RESET (nothing connected). 0 or the first failing errno.
int CreateRcPair(const std::shared_ptr<Device>& dev, RcPair* out);
// The bring-up values on this device: the port's active MTU, PSN 100, min_rnr_timer 12,
// rnr_retry 7, four outstanding READ/atomics. 0 or errno.
int RcParams(Device* dev, BringUpParams* out);
// RESET -> INIT -> RTR -> RTS for one QP towards `peer` (spec/bring_up.h, RcParams).
int ConnectRc(Device* dev, QpHandle qp, const ConnectionInfo& peer);
// Both sides to RTS.
int ConnectRcPair(Device* dev, const RcPair& pair);

}  // namespace qptwin::hw
