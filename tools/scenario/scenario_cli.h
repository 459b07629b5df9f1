// `qptwin run` and `qptwin diff` over an injected backend factory, so that tests can drive
// them with any Backend. run_command.h binds the real factories (model, hw).
//
// Exit codes: 0 every expectation held (run) / transcripts identical (diff); 1 an
// expectation failed / a transcript differs; 2 usage, syntax error, unreadable file or a
// backend that cannot be created or has no device. Every problem is one `qptwin: ...` line
// on `err` (FILE:LINE for syntax errors); --help prints the usage to `out` and returns 0.
#pragma once

#include <functional>
#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

#include "spec/backend.h"
#include "spec/scenario/command.h"
#include "spec/scenario/runner.h"

namespace qptwin::scenario {

struct BackendChoice {
  std::string kind;     // "model" or "hw"
  std::string profile;  // model profile ("rxe", "ibta"); none for hw
  int devices = 1;      // how many devices the scenario opens (its `device` lines)
  std::string device;   // --device: hw device name ("" = $QPTWIN_DEVICE, else the first)
  double tick_phase = 0;  // --tick-phase: model, where its kernel's ticks fall (ModelOptions)
  std::string retry_skip{};  // --retry-skip: model, the host during a retry's skip loop
  uint64_t host_ns = 0;   // --host-us: model, host time before each command (RunOptions)
};

// Returns null and sets *error (one line) when the backend cannot be had.
using BackendFactory =
    std::function<std::unique_ptr<Backend>(const BackendChoice& choice, std::string* error)>;

// One scenario file loaded and run (for tools that render a run: tools/report).
struct ScenarioRun {
  Scenario scenario;
  RunResult result;
  std::string backend_label;  // "model/rxe" or "hw"
  std::string clock;          // "simulated" or "real"
};
// Reads, parses and runs `path` ("-" reads `in`) on the backend `choice` names (profile as in
// RunScenarios). 0, or 2 with one line on `err` (unreadable, syntax error, no backend).
int LoadAndRun(const std::string& path, std::istream& in, const BackendChoice& choice,
               const BackendFactory& make, std::ostream& err, ScenarioRun* out);

// args: [--backend model|hw] [--profile P] [--device D] [--canonical | --narrate]
//       [--vcd OUT] [--trace-json OUT] FILE...   ("-" reads `in`; --vcd/--trace-json: one
//       FILE; OUT "-" writes to `out`)
int RunScenarios(const std::vector<std::string>& args, std::istream& in, std::ostream& out,
                 std::ostream& err, const BackendFactory& make);

// args: [--backend K] [--profile P] [--device D] --against model[:P]|hw FILE...
int DiffScenarios(const std::vector<std::string>& args, std::istream& in, std::ostream& out,
                  std::ostream& err, const BackendFactory& make);

}  // namespace qptwin::scenario
