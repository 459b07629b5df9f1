#include "tools/bench/bench_command.h"

#include <algorithm>
#include <cerrno>
#include <ostream>

#include "tools/bench/bench_remote.h"
#include "tools/bench/bench_report.h"
#include "tools/bench/bench_session.h"
#include "tools/bench/bench_sweep.h"
#include "tools/cli/cli_io.h"
#include "tools/cli/commands.h"
#include "tools/cli/escape.h"
#include "tools/cli/flags.h"

namespace qptwin::bench {

int RunBenchCli(const std::vector<std::string>& args, std::istream& in, std::ostream& out,
                std::ostream& err) {
  (void)in;
  if (std::find(args.begin(), args.end(), "--help") != args.end() ||
      std::find(args.begin(), args.end(), "-h") != args.end()) {
    out << BenchUsage();
    return cli::kExitOk;
  }
  if (!args.empty() && args[0] == "report") {  // the Markdown report: [--out DIR]
    std::string error;
    auto flags = cli::ParseFlags(std::vector<std::string>(args.begin() + 1, args.end()),
                                 {{"--out"}, {"--speed-vs-qps", false}}, &error);
    if (!flags) return cli::BadInput(err, "bench report: " + error);
    std::vector<std::string> report_args;
    if (flags->Has("--out")) report_args = {"--out", flags->Get("--out")};
    if (flags->Has("--speed-vs-qps")) report_args.push_back("--speed-vs-qps");
    return WriteReport(report_args, out, err);
  }
  BenchOptions o;
  std::string error;
  if (!ParseBenchArgs(args, &o, &error)) {
    return cli::BadInput(err, "bench: " + error + " (see qptwin bench --help)");
  }
  if (!o.qps_sweep.empty() || !o.mr_sweep.empty()) return RunSweepCli(o, out, err);
  SessionResult r;
  if (o.two_process()) {
    if (int code = RunTwoProcess(o, &r, out, &error)) {
      err << "qptwin: bench: " << cli::EscapeControl(error) << "\n";
      return code;
    }
    if (o.server) return cli::kExitOk;  // the client prints the results
  } else if (int rc = RunSession(o, &r, &error)) {
    err << "qptwin: bench: " << cli::EscapeControl(error) << "\n";
    // No device, or -s beyond the port's max_msg_sz: bad input; anything else: the run failed.
    return rc == ENODEV || rc == EMSGSIZE ? cli::kExitBadInput : cli::kExitFailed;
  }
  if (o.json) {
    PrintJson(out, r.header, r.bw, r.lat);
  } else if (o.csv) {
    PrintCsv(out, r.header, r.bw, r.lat);
  } else if (o.kind == Kind::kBw) {
    PrintBwTable(out, r.header, r.bw);
    if (!r.depth_sweep.empty()) {
      out << " tx depth sweep (size " << o.size << "):\n";
      for (const auto& [d, b] : r.depth_sweep) {
        out << "  -t " << d << ": " << b.gbps << " Gb/s, " << b.mpps << " Mpps\n";
      }
    }
  } else {
    PrintLatTable(out, r.header, r.lat);
  }
  if (!o.json && !o.csv && r.header.clock == "simulated") out << FormatMemory(r.memory) << "\n";
  if (o.vs_systemc && !o.json && !o.csv) out << FormatVsSystemC(r);
  if (!o.plot.empty() && !cli::WriteOutputFile(o.plot, SessionSvg(r), out, &error)) {
    return cli::BadInput(err, "bench: --plot: " + error);
  }
  return cli::kExitOk;
}

}  // namespace qptwin::bench
