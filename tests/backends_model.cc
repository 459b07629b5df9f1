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
  return {
      {"model_rxe", make("rxe"), /*has_sqe=*/false},
      {"model_ibta", make("ibta"), /*has_sqe=*/true},
  };
}

INSTANTIATE_TEST_SUITE_P(Model, Conformance, ::testing::ValuesIn(BackendsUnderTest()),
                         [](const auto& info) { return info.param.name; });

}  // namespace qptwin::testing
