// `qptwin fuzz`: random modify/post/poll sequences on a backend against the reference model.
//
//   qptwin fuzz [--backend model|hw] [--profile P] [--device D] [--seconds N] [--seed S]
//               [--out DIR] [--max-len L] [--replay N] [--sequences K]
//
// Exit codes (tools/cli/commands.h): 0 no rule broken; 1 at least one failure (each saved as
// DIR/fail-S-N.qps); 2 bad input, an unwritable DIR, or `--backend hw` without an RDMA device
// (one `qptwin: ...` line). Progress goes to `err` about once a second, the summary to `out`.
//
// The model needs the SystemC kernel, which starts lazily from any main() (model_backend.h).
#pragma once

#include <functional>
#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

#include "spec/backend.h"
#include "tools/cli/backend_factory.h"

namespace qptwin::fuzz {

// Makes the backend `spec` names; null with *error (one line) when it cannot be had here
// (unknown profile, no RDMA device). Injected so tests can wrap the real one.
using BackendFactory =
    std::function<std::unique_ptr<Backend>(const cli::BackendSpec& spec, std::string* error)>;

// The real factory: the CLI's one (cli::MakeBackend), with one model device.
std::unique_ptr<Backend> MakeFuzzBackend(const cli::BackendSpec& spec, std::string* error);

int RunFuzzWith(const std::vector<std::string>& args, std::istream& in, std::ostream& out,
                std::ostream& err, const BackendFactory& make);

// RunFuzzWith over MakeFuzzBackend: the `fuzz` entry of the qptwin CLI.
int RunFuzzCli(const std::vector<std::string>& args, std::istream& in, std::ostream& out,
               std::ostream& err);

}  // namespace qptwin::fuzz
