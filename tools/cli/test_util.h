// Runs a subcommand on string streams for the tests.
#pragma once

#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include "tools/cli/commands.h"

namespace qptwin::cli {

struct Outcome {
  int code;
  std::string out;
  std::string err;
};

template <typename RunFn>
Outcome RunWith(RunFn run, const Args& args, const std::string& input = "") {
  std::istringstream in(input);
  std::ostringstream out, err;
  const int code = run(args, in, out, err);
  return {code, out.str(), err.str()};
}

// A bad-input outcome: exit 2, nothing on stdout, one "qptwin: ..." line on stderr that
// mentions `needle` (the offending token or the valid choices).
inline ::testing::AssertionResult IsBadInput(const Outcome& o, const std::string& needle) {
  if (o.code != kExitBadInput) return ::testing::AssertionFailure() << "exit " << o.code;
  if (!o.out.empty()) return ::testing::AssertionFailure() << "stdout: " << o.out;
  if (o.err.rfind("qptwin: ", 0) != 0 || o.err.find('\n') != o.err.size() - 1) {
    return ::testing::AssertionFailure() << "stderr not one 'qptwin: ' line: " << o.err;
  }
  if (o.err.find(needle) == std::string::npos) {
    return ::testing::AssertionFailure() << "stderr lacks '" << needle << "': " << o.err;
  }
  return ::testing::AssertionSuccess();
}

}  // namespace qptwin::cli
