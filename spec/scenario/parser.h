// .qps text -> Scenario (FORMAT.md). Stops at the first problem and says which line and
// what was expected there.
//
// Contract:
//  1. Never throws, never crashes on any input.
//  2. On success every name a command uses was declared earlier with the right kind
//     (command.h invariants); names are unique per scenario (destroy does not free a name).
//  3. On failure `error.line` is the 1-based line and `error.message` names what was
//     expected ("mr NAME pd=PD len=N ...", "a QP declared before this line", ...).
#pragma once

#include <string>
#include <string_view>

#include "spec/scenario/command.h"

namespace qptwin::scenario {

struct ParseError {
  int line = 0;
  std::string message;
  std::string ToString() const;  // "line 7: ..."
};

[[nodiscard]] bool ParseScenario(std::string_view text, Scenario* out, ParseError* error);

}  // namespace qptwin::scenario
