#include "tools/bench/bench_command.h"

#include <cerrno>
#include <fstream>
#include <ostream>

#include "tools/bench/bench_remote.h"
#include "tools/bench/bench_report.h"
#include "tools/bench/bench_session.h"

namespace qptwin::bench {

int RunBenchCli(const std::vector<std::string>& args, std::istream& in, std::ostream& out,
                std::ostream& err) {
  (void)in;
  if (!args.empty() && (args[0] == "-h" || args[0] == "--help")) {
    out << BenchUsage();
    return 0;
  }
  if (!args.empty() && args[0] == "report") {
    return WriteReport(std::vector<std::string>(args.begin() + 1, args.end()), out, err);
  }
  BenchOptions o;
  std::string error;
  if (!ParseBenchArgs(args, &o, &error)) {
    err << "qptwin bench: " << error << "\n" << BenchUsage();
    return 2;
  }
  SessionResult r;
  if (o.two_process()) {
    if (int code = RunTwoProcess(o, &r, out, &error)) {
      err << "qptwin bench: " << error << "\n";
      return code;
    }
    if (o.server) return 0;  // the client prints the results
  } else if (int rc = RunSession(o, &r, &error)) {
    err << "qptwin bench: " << error << "\n";
    return rc == ENODEV ? 2 : 1;
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
  if (!o.plot.empty()) {
    std::ofstream f(o.plot);
    f << SessionSvg(r);
    if (!f) {
      err << "qptwin bench: cannot write " << o.plot << "\n";
      return 1;
    }
  }
  return 0;
}

}  // namespace qptwin::bench
