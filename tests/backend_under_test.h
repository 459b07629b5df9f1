// The backends a conformance test binary runs against. Each test binary links exactly one
// definition of BackendsUnderTest() (backends_model.cc or backends_hw.cc), so the suites in
// conformance/ are written once and instantiated per backend.
#pragma once

#include <functional>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "spec/backend.h"
#include "spec/device_description.h"

namespace qptwin::testing {

struct BackendCase {
  std::string name;  // "model_rxe", "hw"
  // Returns nullptr and sets *why when the backend cannot run here (e.g. no RDMA device).
  std::function<std::unique_ptr<Backend>(std::string* why)> make;
  // The device description (spec/device_description.h) the backend is: the suites expect
  // its behaviour wherever devices differ. On the model it is the profile's description; on
  // hw it is declared (QPTWIN_DEVICE_DESCRIPTION, default rxe) and checked against the device
  // by device_behaviour_test.cc (probe and queried caps).
  const DeviceDescription* description = nullptr;
  Behaviour behaviour;
};

inline std::ostream& operator<<(std::ostream& os, const BackendCase& c) { return os << c.name; }

std::vector<BackendCase> BackendsUnderTest();

}  // namespace qptwin::testing
