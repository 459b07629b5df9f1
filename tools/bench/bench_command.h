// `qptwin bench`: perftest-like benchmarks on either backend (tools/bench/README.md).
//
// Exit codes: 0 ok; 1 the run failed (an errno or an error completion); 2 bad usage, no
// usable backend or device, or an unwritable --plot file. Each problem is one
// `qptwin: bench: ...` line on `err`; --help prints the usage to `out` and returns 0. `report` as the first argument
// writes the full Markdown report (bench_report.h) instead.
//
// The model needs the SystemC kernel: call from a main() of your own, e.g. inside
// model::RunWithSystemC().
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

namespace qptwin::bench {

int RunBenchCli(const std::vector<std::string>& args, std::istream& in, std::ostream& out,
                std::ostream& err);

}  // namespace qptwin::bench
