// The qptwin subcommands. Each one parses its own arguments (args excludes the program and
// subcommand names), reads `in` if it needs input, prints results to `out` and problems to
// `err`, and returns the process exit code:
//   0  success (for explain: the request is legal)
//   1  the judged request is illegal (explain only)
//   2  bad input: unknown subcommand, flag, name or malformed value (one line on `err`
//      naming the valid choices)
// No subcommand throws or calls exit(); main.cc only dispatches. `run` and `diff`
// (tools/scenario/run_command.h) and `fuzz` (tools/fuzz/fuzz_command.h, where 1 means a
// rule was broken) live beside their libraries and keep the same contract.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

namespace qptwin::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitIllegal = 1;
inline constexpr int kExitBadInput = 2;

using Args = std::vector<std::string>;

int RunExplain(const Args& args, std::istream& in, std::ostream& out, std::ostream& err);
int RunCheck(const Args& args, std::istream& in, std::ostream& out, std::ostream& err);
int RunTable(const Args& args, std::istream& in, std::ostream& out, std::ostream& err);
int RunDiagram(const Args& args, std::istream& in, std::ostream& out, std::ostream& err);
int RunDemo(const Args& args, std::istream& in, std::ostream& out, std::ostream& err);

}  // namespace qptwin::cli
