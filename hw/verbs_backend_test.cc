// The Backend's own behaviour: needs no device (a device-less machine gives ENODEV).
#include "hw/verbs_backend.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <cstdlib>

namespace qptwin::hw {
namespace {

TEST(VerbsBackend, KindIsHw) { EXPECT_EQ(MakeVerbsBackend(VerbsOptions{})->Kind(), "hw"); }

TEST(VerbsBackend, ClockStartsNearZeroAndAdvanceSleeps) {
  std::unique_ptr<Backend> b = MakeVerbsBackend(VerbsOptions{});
  uint64_t t0 = b->NowNs();
  EXPECT_LT(t0, 1'000'000'000u);  // relative to the Backend's creation, not the epoch
  b->Advance(3'000'000);
  uint64_t t1 = b->NowNs();
  EXPECT_GE(t1 - t0, 3'000'000u);
}

TEST(VerbsBackend, UnknownDeviceNameIsEnodev) {
  std::unique_ptr<Backend> b = MakeVerbsBackend(VerbsOptions{});
  std::unique_ptr<Device> dev;
  EXPECT_EQ(b->OpenDevice("qptwin_no_such_device", &dev), ENODEV);
  EXPECT_EQ(dev, nullptr);
  EXPECT_EQ(b->OpenDevice("", nullptr), EINVAL);
}

TEST(VerbsBackend, OptionsDeviceIsUsedForAnEmptyName) {
  VerbsOptions opts;
  opts.device = "qptwin_no_such_device";
  std::unique_ptr<Device> dev;
  EXPECT_EQ(MakeVerbsBackend(opts)->OpenDevice("", &dev), ENODEV);
}

TEST(VerbsBackend, EnvironmentNamesTheDefaultDevice) {
  const char* old = std::getenv("QPTWIN_DEVICE");
  std::string saved = old != nullptr ? old : "";
  setenv("QPTWIN_DEVICE", "qptwin_no_such_device", 1);
  std::unique_ptr<Device> dev;
  int ret = MakeVerbsBackend(VerbsOptions{})->OpenDevice("", &dev);
  if (old != nullptr) {
    setenv("QPTWIN_DEVICE", saved.c_str(), 1);
  } else {
    unsetenv("QPTWIN_DEVICE");
  }
  EXPECT_EQ(ret, ENODEV);
}

}  // namespace
}  // namespace qptwin::hw
