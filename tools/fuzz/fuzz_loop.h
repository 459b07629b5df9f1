// The loop behind `qptwin fuzz`: seeded random command sequences (spec/reference/sequence_gen.h)
// run on a backend with the reference model alongside (RunSequence), until time is up.
//
// Contract:
//  1. Sequence n of a run seeded S is RandomSequence(SequenceSeed(S, n), max_len): the same
//     seed gives the same sequences, and `replay` runs one of them alone.
//  2. Each sequence gets a fresh Backend from `make` (its own clock at 0), so a sequence's
//     outcome does not depend on the ones before it.
//  3. Every failure is written to out_dir/fail-<S>-<n>.qps: a header of `#` comments (the
//     violated rule, the seed, the command that replays it) and the sequence as .qps lines up
//     to the command that broke the rule. The loop stops early after kMaxFailures.
//  4. Progress goes to `progress` about once a second; nothing else is printed there except
//     the failures' file names.
#pragma once

#include <cstdint>
#include <functional>
#include <iosfwd>
#include <memory>
#include <optional>
#include <string>

#include "spec/backend.h"

namespace qptwin::fuzz {

inline constexpr uint64_t kMaxFailures = 100;

struct FuzzOptions {
  uint64_t seed = 1;
  double seconds = 10;               // wall clock; at least one sequence runs
  std::optional<uint64_t> sequences; // stop after this many sequences (or `seconds`, first)
  size_t max_len = 20;               // commands per sequence: 1..max_len
  std::string out_dir = ".";
  std::optional<uint64_t> replay;    // run only sequence number *replay of `seed`
  uint64_t settle_ns = 2'000'000;    // how long a Settle waits for quiet after each command
  std::string backend_flags;         // e.g. "--backend model --profile rxe", for the headers
};

struct FuzzStats {
  uint64_t sequences = 0;
  uint64_t commands = 0;
  uint64_t completions = 0;
  uint64_t failures = 0;
  uint64_t known = 0;  // failures that are known open bugs (known_bugs.h)
  double seconds = 0;
  std::string first_failure;  // the rule, when failures > 0
  std::string io_error;       // a failure file that could not be written
};

using BackendMaker = std::function<std::unique_ptr<Backend>()>;

FuzzStats RunFuzzLoop(const FuzzOptions& opts, const BackendMaker& make, std::ostream& progress);

// The path of the file a failure of sequence `n` is saved to.
std::string FailurePath(const FuzzOptions& opts, uint64_t n);

}  // namespace qptwin::fuzz
