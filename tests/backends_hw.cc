// The conformance suites on a real RDMA device (rxe in the CI VM). Without a device every
// test is skipped with the reason.
#include <cstdlib>

#include "tests/backend_under_test.h"
#include "tests/conformance/fixture.h"
#include "tests/support/support.h"

namespace qptwin::testing {

std::vector<BackendCase> BackendsUnderTest() {
  // The device is declared by name (Soft-RoCE on Debian 12 unless QPTWIN_DEVICE_DESCRIPTION
  // names another description); DeviceIsWhatItsDescriptionSays checks the declaration.
  const char* declared = std::getenv("QPTWIN_DEVICE_DESCRIPTION");
  BackendCase hw;
  hw.name = "hw";
  hw.make = [choice = HwChoice()](std::string* why) { return MakeBackend(choice, why); };
  hw.description = FindDeviceDescription(declared && *declared ? declared : "rxe");
  if (hw.description) hw.behaviour = hw.description->behaviour();
  return {hw};
}

INSTANTIATE_TEST_SUITE_P(Hw, Conformance, ::testing::ValuesIn(BackendsUnderTest()),
                         [](const auto& info) { return info.param.name; });

}  // namespace qptwin::testing
