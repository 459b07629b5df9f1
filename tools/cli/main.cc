// qptwin: one binary, one subcommand per entry of kCommands (add new ones there).
//
// The binary links the SystemC model (fuzz, run, diff), and libsystemc.so exports a main() of
// its own that calls sc_main(). The main() below is the program's: a symbol the executable
// defines wins over a shared library's. sc_main() runs the same dispatch, so the CLI behaves
// the same even if SystemC's main() were the one started. The model starts the SystemC
// kernel lazily on first use (model/model_backend.h), so nothing else is needed here.
//
// stdin and stdout run over FdBufs (cli_io.h): output that does not reach stdout (a full
// disk, /dev/full, a closed descriptor) is one `qptwin:` line and exit 2, never a silent 0.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <iostream>
#include <string>
#include <string_view>
#include <vector>

#include "tools/cli/cli_io.h"
#include "tools/cli/commands.h"
#include "tools/cli/flags.h"
#include "tools/bench/bench_command.h"
#include "tools/exec/exec_command.h"
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
     "judge 'TYPE FROM TO MASK' lines from stdin, ~270 M lines/min on one core"},
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
    {"exec", qptwin::exec::RunExecCli,
     "run an unmodified libibverbs program on model devices: [--profile P] [--devices N] -- PROG"},
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

int RunCommand(int argc, char** argv) {
  const std::string_view name = argc > 1 ? argv[1] : "help";
  if (name == "help" || name == "--help" || name == "-h") {
    PrintHelp(std::cout);
    return qptwin::cli::kExitOk;
  }
  for (const Command& c : kCommands) {
    if (c.name == name) return c.run(Args(argv + 2, argv + argc), std::cin, std::cout, std::cerr);
  }
  return qptwin::cli::BadInput(std::cerr, "unknown command '" + std::string(name) +
                                              "' (valid: " + CommandNames() + ", help)");
}

// A closed descriptor 0, 1 or 2 gets /dev/null, so that no file the command opens takes its
// number (and receives its output); a closed 0 or 1 is then reported as EBADF by its FdBuf.
bool ReopenIfClosed(int fd) {
  if (fcntl(fd, F_GETFD) != -1 || errno != EBADF) return false;
  const int null = open("/dev/null", fd == 0 ? O_RDONLY : O_WRONLY);
  if (null != fd && null >= 0) close(null);
  return true;
}

int Dispatch(int argc, char** argv) {
  std::ios::sync_with_stdio(false);
  const bool in_closed = ReopenIfClosed(0);
  const bool out_closed = ReopenIfClosed(1);
  ReopenIfClosed(2);
  qptwin::cli::FdBuf in_buf(0, /*output=*/false), out_buf(1, /*output=*/true);
  if (in_closed) in_buf.set_error(EBADF);
  if (out_closed) out_buf.set_error(EBADF);
  std::streambuf* const cin_buf = std::cin.rdbuf(&in_buf);
  std::streambuf* const cout_buf = std::cout.rdbuf(&out_buf);
  int code = RunCommand(argc, argv);
  std::cout.flush();
  if (out_buf.error() != 0 && code != qptwin::cli::kExitBadInput) {  // else already said
    code = qptwin::cli::BadInput(std::cerr, "cannot write standard output: " +
                                                qptwin::cli::ErrnoText(out_buf.error()));
  }
  std::cout.rdbuf(cout_buf);
  std::cin.rdbuf(cin_buf);
  return code;
}

}  // namespace

int main(int argc, char** argv) { return Dispatch(argc, argv); }

extern "C" int sc_main(int argc, char** argv) { return Dispatch(argc, argv); }
