// `qptwin fuzz`: random modify/post/poll sequences on a backend against the reference model.
//
//   qptwin fuzz [--backend model|hw] [--profile P] [--seconds N] [--seed S] [--out DIR]
//               [--max-len L] [--replay N]
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

namespace qptwin::fuzz {

// Makes a backend of `kind` ("model", "hw") and model `profile`; null with *error (one line)
// when it cannot be had here (unknown profile, no RDMA device).
using BackendFactory = std::function<std::unique_ptr<Backend>(
    const std::string& kind, const std::string& profile, std::string* error)>;

// The real factory: model::MakeModelBackend and hw::MakeVerbsBackend.
std::unique_ptr<Backend> MakeFuzzBackend(const std::string& kind, const std::string& profile,
                                         std::string* error);

int RunFuzzWith(const std::vector<std::string>& args, std::istream& in, std::ostream& out,
                std::ostream& err, const BackendFactory& make);

// RunFuzzWith over MakeFuzzBackend: the `fuzz` entry of the qptwin CLI.
int RunFuzzCli(const std::vector<std::string>& args, std::istream& in, std::ostream& out,
               std::ostream& err);

}  // namespace qptwin::fuzz
