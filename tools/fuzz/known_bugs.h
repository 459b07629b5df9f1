// Open bugs that the fuzzers keep finding, recognised by the rule text RunSequence reports, so
// that a fuzzing run in CI stops only on new findings. Each entry names where the bug is and
// the ground truth; delete it when the bug is fixed (fuzz_findings_test then passes).
#pragma once

#include <string>

namespace qptwin::fuzz {

// The description of the open bug `failure` (a SeqResult::failure) matches, or nullptr.
const char* KnownOpenBug(const std::string& failure);

}  // namespace qptwin::fuzz
