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
#include "spec/reference/device_behaviour.h"

namespace qptwin::testing {

struct BackendCase {
  std::string name;  // "model_rxe", "hw"
  // Returns nullptr and sets *why when the backend cannot run here (e.g. no RDMA device).
  std::function<std::unique_ptr<Backend>(std::string* why)> make;
  // Behaviour that differs by device and that the suites check (named profile settings;
  // docs/differences.md has the evidence).
  bool has_sqe = false;  // UC/UD send errors move the QP to SQE (IBTA); rxe never enters SQE
  // Refused sends below RTS stay queued, and receives posted in ERR wait for the next move
  // to ERR (spec/reference/device_behaviour.h).
  reference::DeviceBehaviour behaviour;
  // A QP with an SRQ raises LAST_WQE_REACHED on entering ERR (IBTA 11.6.3, rdma-facts R6);
  // rxe on Linux 6.1 raises none.
  bool last_wqe_reached = true;
  // Affiliated async errors (IBTA 11.6.3): QP_ACCESS_ERR at a responder that NAKs a bad
  // rkey. rxe_qp_error raises none.
  bool qp_error_events = true;
  // An opcode the QP type lacks (READ/atomic on UC; WRITE/READ/atomic on UD) is refused by
  // ibv_post_send (EINVAL); rxe accepts it and completes it with LOC_QP_OP_ERR, QP -> ERR.
  bool opcode_checked_by_requester = false;
  // XRC domains, XRC SRQs and XRC_SEND/XRC_RECV QPs (IBTA 9.8). Without: OpenXrcd gives
  // EOPNOTSUPP (libibverbs with no open_xrcd op: rxe).
  bool has_xrc = false;
};

inline std::ostream& operator<<(std::ostream& os, const BackendCase& c) { return os << c.name; }

std::vector<BackendCase> BackendsUnderTest();

}  // namespace qptwin::testing
