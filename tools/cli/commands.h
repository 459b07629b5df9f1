// The qptwin subcommands. Each one parses its arguments with ParseFlags (flags.h; args
// exclude the program and subcommand names), reads `in` if it needs input, prints results
// to `out` and problems to `err`, and returns the process exit code, the same for all
// (tools/cli/README.md, "Exit codes and errors"):
//   0  success (explain: the request is legal); --help prints the usage to `out`
//   1  a failed expectation or test (explain: illegal; run/report: an expect= failed; diff:
//      a difference; fuzz: a broken rule; bench: the run failed)
//   2  bad input, usage or I/O: one `qptwin: CMD: ...` line on `err` naming the file, the
//      line and the problem, or the valid choices (BadInput, cli_io.h)
// No subcommand throws or calls exit(); main.cc only dispatches and checks that stdout
// took the output. `run` and `diff` (tools/scenario/run_command.h), `report`, `fuzz` and
// `bench` live beside their libraries and keep the same contract.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

namespace qptwin::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailed = 1;  // explain: illegal; others: an expectation or test failed
inline constexpr int kExitBadInput = 2;

using Args = std::vector<std::string>;

int RunExplain(const Args& args, std::istream& in, std::ostream& out, std::ostream& err);
int RunCheck(const Args& args, std::istream& in, std::ostream& out, std::ostream& err);
int RunTable(const Args& args, std::istream& in, std::ostream& out, std::ostream& err);
int RunDiagram(const Args& args, std::istream& in, std::ostream& out, std::ostream& err);
int RunDemo(const Args& args, std::istream& in, std::ostream& out, std::ostream& err);

}  // namespace qptwin::cli
