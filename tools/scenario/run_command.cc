#include "tools/scenario/run_command.h"

#include "tools/cli/backend_factory.h"

namespace qptwin::scenario {

std::unique_ptr<Backend> MakeScenarioBackend(const BackendChoice& choice, std::string* error) {
  cli::BackendSpec spec;
  spec.kind = choice.kind;
  spec.profile = choice.profile;
  spec.device = choice.device;
  spec.devices = choice.devices;
  spec.tick_phase = choice.tick_phase;
  spec.retry_skip = choice.retry_skip;
  return cli::MakeBackend(spec, error);
}

int RunScenarioCli(const std::vector<std::string>& args, std::istream& in, std::ostream& out,
                   std::ostream& err) {
  return RunScenarios(args, in, out, err, MakeScenarioBackend);
}

int DiffScenarioCli(const std::vector<std::string>& args, std::istream& in, std::ostream& out,
                    std::ostream& err) {
  return DiffScenarios(args, in, out, err, MakeScenarioBackend);
}

}  // namespace qptwin::scenario
