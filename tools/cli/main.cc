// qptwin: one binary, one subcommand per entry of kCommands (add new ones there).
//
// The binary links the SystemC model (fuzz, run, diff), and libsystemc.so exports a main() of
// its own that calls sc_main(). The main() below is the program's: a symbol the executable
// defines wins over a shared library's. sc_main() runs the same dispatch, so the CLI behaves
// the same even if SystemC's main() were the one started. The model starts the SystemC
// kernel lazily on first use (model/model_backend.h), so nothing else is needed here.
#include <iostream>
#include <string>
#include <string_view>
#include <vector>

#include "tools/cli/commands.h"
#include "tools/bench/bench_command.h"
#include "tools/fuzz/fuzz_command.h"
#include "tools/report/report_command.h"
#include "tools/scenario/run_command.h"

namespace {

using qptwin::cli::Args;

struct Command {
  std::string_view name;
  int (*run)(const Args& args, std::istream& in, std::ostream& out, std::ostream& err);
  std::string_view help;
};

constexpr Command kCommands[] = {
    {"explain", qptwin::cli::RunExplain,
     "why a modify_qp is (il)legal and how to fix it: --type RC --from INIT --to RTR --attrs ..."},
    {"check", qptwin::cli::RunCheck,
     "judge 'TYPE FROM TO MASK' lines from stdin at tens of millions of lines per minute"},
    {"table", qptwin::cli::RunTable,
     "the QP state-transition table: [--type T] [--format text|markdown|json]"},
    {"diagram", qptwin::cli::RunDiagram,
     "a QP type's state diagram: --type T [--format dot|svg] [-o FILE]"},
    {"demo", qptwin::cli::RunDemo, "a tour: the RC state machine, a legal and an illegal modify"},
    {"run", qptwin::scenario::RunScenarioCli,
     "run .qps scenarios on a backend: [--backend model|hw] [--profile P] FILE..."},
    {"diff", qptwin::scenario::DiffScenarioCli,
     "compare two backends' transcripts of .qps scenarios: --against K[:P] FILE..."},
    {"fuzz", qptwin::fuzz::RunFuzzCli,
     "random modify/post/poll sequences against the reference model: [--backend model|hw] "
     "[--seconds N] [--seed S]"},
    {"bench", qptwin::bench::RunBenchCli,
     "perftest-style benchmarks on either backend: write_bw|read_bw|send_bw|atomic_bw|*_lat [-s ...]"},
    {"report", qptwin::report::RunReportCli,
     "one self-contained HTML page for a .qps scenario: FILE.qps -o report.html"},
};

void PrintHelp(std::ostream& out) {
  out << "usage: qptwin <command> [args]   (qptwin <command> --help for its flags)\n\n";
  for (const Command& c : kCommands) {
    out << "  " << c.name << std::string(10 - std::min<size_t>(c.name.size(), 9), ' ') << c.help
        << "\n";
  }
}

std::string CommandNames() {
  std::string names;
  for (const Command& c : kCommands) {
    if (!names.empty()) names += ", ";
    names += c.name;
  }
  return names;
}

int Dispatch(int argc, char** argv) {
  std::ios::sync_with_stdio(false);
  const std::string_view name = argc > 1 ? argv[1] : "help";
  if (name == "help" || name == "--help" || name == "-h") {
    PrintHelp(std::cout);
    return qptwin::cli::kExitOk;
  }
  for (const Command& c : kCommands) {
    if (c.name == name) {
      const Args args(argv + 2, argv + argc);
      const int code = c.run(args, std::cin, std::cout, std::cerr);
      std::cout.flush();
      return code;
    }
  }
  std::cerr << "qptwin: unknown command '" << name << "' (valid: " << CommandNames()
            << ", help)\n";
  return qptwin::cli::kExitBadInput;
}

}  // namespace

int main(int argc, char** argv) { return Dispatch(argc, argv); }

extern "C" int sc_main(int argc, char** argv) { return Dispatch(argc, argv); }
