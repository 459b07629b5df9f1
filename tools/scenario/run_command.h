// Entry points for the qptwin CLI: `qptwin run ...` and `qptwin diff ...` (args exclude the
// subcommand). They create the backends from --backend/--profile/--device through the CLI's
// one factory (tools/cli/backend_factory.h).
//
// Exit codes: 0 ok; 1 a failed expectation (run) or a differing transcript (diff); 2 usage,
// bad syntax (with FILE:LINE and what was expected), or no usable backend (`--backend hw`
// without an RDMA device prints one line saying so).
//
// The model needs the SystemC kernel: call these from a main() of your own (libsystemc.so
// exports one), e.g. inside model::RunWithSystemC().
#pragma once

#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

#include "spec/backend.h"
#include "tools/scenario/scenario_cli.h"

namespace qptwin::scenario {

int RunScenarioCli(const std::vector<std::string>& args, std::istream& in, std::ostream& out,
                   std::ostream& err);
int DiffScenarioCli(const std::vector<std::string>& args, std::istream& in, std::ostream& out,
                    std::ostream& err);

// The factory both use (exposed for tests and other tools): cli::MakeBackend for a
// BackendChoice; null with *error set (unknown profile, no such device).
std::unique_ptr<Backend> MakeScenarioBackend(const BackendChoice& choice, std::string* error);

}  // namespace qptwin::scenario

