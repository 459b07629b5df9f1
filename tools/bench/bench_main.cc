// `qptwin_bench`: the same RunBenchCli as `qptwin bench`, linked alone so that
// tools/bench/make-report and hw-compare build only the benchmark (with -c opt):
//   qptwin_bench TEST [perftest flags] [--backend model|hw] [--profile P] [--json|--csv]
//   qptwin_bench report [--out DIR]
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include "model/model_backend.h"
#include "tools/bench/bench_command.h"

namespace {
// Runs before libsystemc's main() prints its banner.
const bool kQuiet = (setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 0), true);
}  // namespace

// libsystemc.so owns main() and calls sc_main().
extern "C" int sc_main(int argc, char** argv) {
  return qptwin::model::RunWithSystemC(argc, argv, [](int argc, char** argv) {
    std::vector<std::string> args(argv + 1, argv + argc);
    return qptwin::bench::RunBenchCli(args, std::cin, std::cout, std::cerr);
  });
}
