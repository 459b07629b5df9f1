// One input line of `qptwin check`: "TYPE FROM TO MASK", fields separated by spaces or tabs.
// TYPE/FROM/TO by name (any case, optional IBV_ prefixes) or numeric value; MASK as hex
// (0x1a1), decimal, or attribute names joined by '|' or ','. Blank lines and lines starting
// with '#' are skipped. Parsing a valid line never allocates; fast lookups fall back to the
// spec parsers, so exactly the spellings the spec accepts are accepted.
#pragma once

#include <string>
#include <string_view>

#include "spec/vocabulary.h"

namespace qptwin::cli {

struct CheckRequest {
  QpType type = QpType::kRc;
  QpState cur = QpState::kReset;
  QpState requested = QpState::kReset;  // TO; the judged next state is NextState(cur, TO, mask)
  AttrMask mask = 0;
};

enum class LineKind { kSkip, kRequest, kError };

// On kError, *error holds one line (no newline) saying what is wrong and the valid choices.
LineKind ParseCheckLine(std::string_view line, CheckRequest* request, std::string* error);

}  // namespace qptwin::cli
