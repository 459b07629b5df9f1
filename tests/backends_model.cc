// The conformance suites on the model, once per profile of a distinct device description.
#include "model/profile.h"
#include "tests/backend_under_test.h"
#include "tests/conformance/fixture.h"
#include "tests/support/support.h"

namespace qptwin::testing {

std::vector<BackendCase> BackendsUnderTest() {
  std::vector<BackendCase> cases;
  for (const char* profile : {"rxe", "ibta"}) {
    const model::Profile* p = model::FindProfile(profile);
    BackendCase c;
    c.name = std::string("model_") + profile;
    c.make = [choice = ModelChoice(profile)](std::string* why) { return MakeBackend(choice, why); };
    c.description = FindDeviceDescription(p->device_name);
    c.behaviour = p->behaviour;  // the same description the model's engine reads
    cases.push_back(c);
  }
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Model, Conformance, ::testing::ValuesIn(BackendsUnderTest()),
                         [](const auto& info) { return info.param.name; });

}  // namespace qptwin::testing
