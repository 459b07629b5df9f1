#include "tools/scenario/run_command.h"

#include "hw/verbs_backend.h"
#include "model/model_backend.h"

namespace qptwin::scenario {

std::unique_ptr<Backend> MakeScenarioBackend(const BackendChoice& choice, std::string* error) {
  if (choice.kind == "model") {
    model::ModelOptions opts;
    opts.profile = choice.profile;
    opts.devices = std::max(1, choice.devices);
    std::unique_ptr<Backend> backend = model::MakeModelBackend(opts);
    if (!backend) {
      std::string known;
      for (const std::string& p : model::ProfileNames()) known += (known.empty() ? "" : ", ") + p;
      *error = "unknown model profile '" + choice.profile + "' (known: " + known + ")";
    }
    return backend;
  }
  std::unique_ptr<Backend> backend = hw::MakeVerbsBackend(hw::VerbsOptions{});
  if (backend->ListDevices().empty()) {
    *error = "no RDMA device found (load Soft-RoCE with `rdma link add rxe0 type rxe netdev "
             "IFACE`, or run inside tools/rxe-vm/run)";
    return nullptr;
  }
  return backend;
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
