// The conformance suites on a real RDMA device (rxe in the CI VM). Without a device every
// test is skipped with the reason.
#include "hw/verbs_backend.h"
#include "tests/backend_under_test.h"
#include "tests/conformance/fixture.h"

namespace qptwin::testing {

std::vector<BackendCase> BackendsUnderTest() {
  auto make = [](std::string* why) -> std::unique_ptr<Backend> {
    auto b = hw::MakeVerbsBackend(hw::VerbsOptions{});
    if (b->ListDevices().empty()) {
      *why = "no RDMA device on this machine (run inside tools/rxe-vm/run for Soft-RoCE)";
      return nullptr;
    }
    return b;
  };
  // What Soft-RoCE does (Debian kernel 6.1, rdma-core 44; hw/README.md). On another device
  // the ProbedBehaviourMatchesTheCase test says which setting differs.
  BackendCase hw;
  hw.name = "hw";
  hw.make = make;
  hw.has_sqe = false;
  hw.behaviour.rejected_send_queues = true;
  hw.behaviour.recv_in_err_waits = true;
  hw.last_wqe_reached = false;
  hw.qp_error_events = false;
  hw.opcode_checked_by_requester = true;
  hw.has_xrc = false;
  return {hw};
}

INSTANTIATE_TEST_SUITE_P(Hw, Conformance, ::testing::ValuesIn(BackendsUnderTest()),
                         [](const auto& info) { return info.param.name; });

}  // namespace qptwin::testing
