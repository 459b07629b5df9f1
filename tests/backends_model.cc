// The conformance suites on the model, once per profile that claims the behaviour.
#include "model/model_backend.h"
#include "tests/backend_under_test.h"
#include "tests/conformance/fixture.h"

namespace qptwin::testing {

std::vector<BackendCase> BackendsUnderTest() {
  auto make = [](std::string profile) {
    return [profile](std::string* why) -> std::unique_ptr<Backend> {
      model::ModelOptions opts;
      opts.profile = profile;
      auto b = model::MakeModelBackend(opts);
      if (!b) *why = "unknown model profile " + profile;
      return b;
    };
  };
  // model/profile.cc Quirks: rxe as Soft-RoCE on kernel 6.1 does, ibta as the spec says.
  BackendCase rxe;
  rxe.name = "model_rxe";
  rxe.make = make("rxe");
  rxe.has_sqe = false;
  rxe.behaviour.rejected_send_queues = true;  // Quirks::post_send_below_rts_queues
  rxe.behaviour.recv_in_err_waits = true;     // !Quirks::recv_in_err_flushed_at_once
  rxe.last_wqe_reached = false;               // Quirks::last_wqe_reached_event
  rxe.qp_error_events = false;             // Quirks::qp_error_events
  rxe.opcode_checked_by_requester = true;  // Quirks::opcode_checked_by_requester
  rxe.has_xrc = false;                     // Quirks::supports_xrc
  BackendCase ibta;
  ibta.name = "model_ibta";
  ibta.make = make("ibta");
  ibta.has_sqe = true;
  ibta.behaviour.rejected_send_queues = false;
  ibta.behaviour.recv_in_err_waits = false;
  ibta.last_wqe_reached = true;
  ibta.qp_error_events = true;
  ibta.opcode_checked_by_requester = false;
  ibta.has_xrc = true;
  return {rxe, ibta};
}

INSTANTIATE_TEST_SUITE_P(Model, Conformance, ::testing::ValuesIn(BackendsUnderTest()),
                         [](const auto& info) { return info.param.name; });

}  // namespace qptwin::testing
