// A scenario run while it is read: each command runs as soon as its line is parsed and its
// transcript is written at once, so neither the scenario nor its steps are kept (`qptwin run`
// on endless input, or a million-line file, in bounded memory: FORMAT.md "Running").
//
// Contract:
//  1. The transcript written equals CanonicalTranscript / NarratedTranscript of Runner::Run
//     on the same scenario (without the "# FILE on BACKEND" line the front end prints).
//  2. `make` is called once, with the header known so far: all of it when the scenario was
//     scanned first (ScanHeader, for a file), else the `device` lines before the first other
//     command (a stream: later `device` lines open the last listed device, runner.h 3).
//  3. A syntax error stops the run at that line (what ran stays written); the result says so.
#pragma once

#include <functional>
#include <memory>
#include <ostream>
#include <string>

#include "spec/backend.h"
#include "spec/scenario/parser.h"

namespace qptwin::scenario {

struct StreamOptions {
  bool canonical = false;  // else narrated
  bool explain = false;    // narrated with Step::why (--narrate)
  uint64_t host_ns = 0;    // RunOptions::host_ns
};

struct StreamResult {
  bool backend_ok = true;  // false: `make` returned null (nothing ran)
  bool syntax_ok = true;   // false: `error` says where
  ParseError error;
  size_t steps = 0;
  int failures = 0;  // failed expectations
};

using StreamBackendMaker = std::function<std::unique_ptr<Backend>(const Scenario& header)>;

// `on_failure` gets each failed expectation as FailureReport prints it ("line N: ...  [cmd]").
StreamResult StreamRun(ScenarioStream* stream, const StreamBackendMaker& make,
                       const StreamOptions& options, std::ostream& out,
                       const std::function<void(const std::string&)>& on_failure);

}  // namespace qptwin::scenario
