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

namespace qptwin::testing {

struct BackendCase {
  std::string name;  // "model_rxe", "hw"
  // Returns nullptr and sets *why when the backend cannot run here (e.g. no RDMA device).
  std::function<std::unique_ptr<Backend>(std::string* why)> make;
  // Behaviour that differs by device and that a suite may check (named profile settings).
  bool has_sqe = false;  // UC/UD send errors move the QP to SQE (IBTA); rxe never enters SQE
};

inline std::ostream& operator<<(std::ostream& os, const BackendCase& c) { return os << c.name; }

std::vector<BackendCase> BackendsUnderTest();

}  // namespace qptwin::testing
