// `qptwin report FILE.qps -o OUT.html [--backend model|hw] [--profile P] [--device D]`: runs
// the scenario and writes one self-contained HTML page about the run (report_html.h); with
// `-o -` the page goes to stdout. State diagrams are
// rendered by Graphviz `dot`; without it the page says so where the diagram would be.
//
// Exit codes: 0 written and every expectation held; 1 written, some expectation failed;
// 2 usage, unreadable or bad scenario, no backend, or the output cannot be written (one
// `qptwin: report: ...` line). --help prints the usage to `out` and returns 0.
//
// The model needs the SystemC kernel: call from a main() run by model::RunWithSystemC().
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

#include "tools/scenario/scenario_cli.h"

namespace qptwin::report {

int RunReport(const std::vector<std::string>& args, std::istream& in, std::ostream& out,
              std::ostream& err, const scenario::BackendFactory& make);

// RunReport with the real backends (model, hw) of tools/scenario/run_command.h.
int RunReportCli(const std::vector<std::string>& args, std::istream& in, std::ostream& out,
                 std::ostream& err);

}  // namespace qptwin::report
