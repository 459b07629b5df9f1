// A stand-alone `report` front end until the qptwin CLI wires RunReportCli:
//   bazel-bin/tools/report/report FILE.qps -o OUT.html [--backend model|hw] [--profile P]
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include "model/model_backend.h"
#include "tools/report/report_command.h"

namespace {
// Runs before libsystemc's main() prints its banner.
const bool kQuiet = (setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 0), true);
}  // namespace

// libsystemc.so owns main() and calls sc_main().
extern "C" int sc_main(int argc, char** argv) {
  return qptwin::model::RunWithSystemC(argc, argv, [](int argc, char** argv) {
    std::vector<std::string> args(argv + 1, argv + argc);
    return qptwin::report::RunReportCli(args, std::cin, std::cout, std::cerr);
  });
}
