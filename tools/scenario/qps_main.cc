// A stand-alone front end for the scenario tools until the qptwin CLI wires them:
//   qps run [--backend model|hw] [--profile P] [--canonical] FILE...
//   qps diff [--backend K] [--profile P] --against K[:P] FILE...
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include "model/model_backend.h"
#include "tools/scenario/run_command.h"

namespace {
// Runs before libsystemc's main() prints its banner.
const bool kQuiet = (setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 0), true);
}  // namespace

// libsystemc.so owns main() and calls sc_main().
extern "C" int sc_main(int argc, char** argv) {
  return qptwin::model::RunWithSystemC(argc, argv, [](int argc, char** argv) {
    std::vector<std::string> args(argv + 1, argv + argc);
    if (args.empty() || (args[0] != "run" && args[0] != "diff")) {
      std::cerr << "usage: qps run|diff ARGS... (see tools/scenario/FORMAT.md)\n";
      return 2;
    }
    std::string sub = args[0];
    args.erase(args.begin());
    return sub == "run" ? qptwin::scenario::RunScenarioCli(args, std::cin, std::cout, std::cerr)
                        : qptwin::scenario::DiffScenarioCli(args, std::cin, std::cout, std::cerr);
  });
}
