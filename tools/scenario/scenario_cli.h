// `qptwin run` and `qptwin diff` over an injected backend factory, so that tests can drive
// them with any Backend. run_command.h binds the real factories (model, hw).
//
// Exit codes: 0 every expectation held (run) / transcripts identical (diff); 1 an
// expectation failed / a transcript differs; 2 usage, syntax error, unreadable file or a
// backend that cannot be created or has no device.
#pragma once

#include <functional>
#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

#include "spec/backend.h"

namespace qptwin::scenario {

struct BackendChoice {
  std::string kind;     // "model" or "hw"
  std::string profile;  // model profile ("rxe", "ibta"); ignored by hw
  int devices = 1;      // how many devices the scenario opens (its `device` lines)
};

// Returns null and sets *error (one line) when the backend cannot be had.
using BackendFactory =
    std::function<std::unique_ptr<Backend>(const BackendChoice& choice, std::string* error)>;

// args: [--backend model|hw] [--profile P] [--canonical] FILE...   ("-" reads `in`)
int RunScenarios(const std::vector<std::string>& args, std::istream& in, std::ostream& out,
                 std::ostream& err, const BackendFactory& make);

// args: [--backend K] [--profile P] --against K[:P] FILE...
int DiffScenarios(const std::vector<std::string>& args, std::istream& in, std::ostream& out,
                  std::ostream& err, const BackendFactory& make);

}  // namespace qptwin::scenario
