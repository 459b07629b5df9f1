// `qptwin bench`: perftest-like benchmarks on either backend (tools/bench/README.md).
//
// Exit codes: 0 ok; 1 the run failed (an errno or an error completion, one line on `err`);
// 2 bad usage or no usable backend (one line on `err`). `report` as the first argument
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
