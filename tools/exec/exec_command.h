// `qptwin exec [--profile P] [--devices N] -- PROGRAM ARGS...`: runs an unmodified
// libibverbs program with the verbs preload (libqptwin_verbs.so), so that it sees model
// devices qptwin0..qptwin<N-1> beside any real ones.
//
// Contract:
//  1. On success it does not return: the process becomes PROGRAM (execvp) with LD_PRELOAD
//     naming the preload (before any preload already set), QPTWIN_PROFILE and
//     QPTWIN_DEVICES set; PROGRAM's exit code is the command's.
//  2. Exit 2 with one `qptwin: exec: ...` line for bad usage (no `--` or no PROGRAM, an
//     unknown profile, N outside 1..16), a preload that cannot be found, or a PROGRAM that
//     cannot be run. --help prints the usage and returns 0.
//  3. The preload is found in $QPTWIN_PRELOAD, else next to the qptwin binary
//     (<dir of /proc/self/exe>/exec/libqptwin_verbs.so, Bazel's bazel-bin layout), else in
//     its runfiles (<exe>.runfiles/qptwin/tools/exec/libqptwin_verbs.so).
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

namespace qptwin::exec {

int RunExecCli(const std::vector<std::string>& args, std::istream& in, std::ostream& out,
               std::ostream& err);

// The preload's absolute path, or "" (contract 3). `exe` is the running binary's path.
std::string FindPreload(const std::string& exe);

}  // namespace qptwin::exec
