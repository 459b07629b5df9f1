// The report: every experiment of docs/bench/REPORT.md, run on the model and printed as
// Markdown (numbers straight from the runs; analytic figures from the same profile).
#include "tools/bench/bench_report.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <ostream>
#include <sstream>
#include <vector>

#include "model/profile.h"
#include "model/wire.h"
#include "tools/bench/bench_report_parts.h"
#include "tools/bench/bench_session.h"

namespace qptwin::bench {
namespace {

std::string F(const char* fmt, double v) {
  char b[64];
  std::snprintf(b, sizeof b, fmt, v);
  return b;
}

void Target(ReportCtx& c) {
  std::ostream& out = c.out;
  SessionResult r;
  if (!c.Run("write_bw -s 65536 -n 5000 --profile cx6-100g", &r)) return;
  const model::Profile* p = model::FindProfile("cx6-100g");
  const BwResult& b = r.bw[0];
  double bound = model::GoodputBoundGbps(p->timing.link, model::WireOp::kWrite, 65536, 4096);
  model::MessageWire w = model::WireOf(p->timing.link, model::WireOp::kWrite, 65536, 4096, false,
                                       false);
  out << "## 1. Bandwidth target: cx6-100g, RC WRITE 64 KiB, 1 QP\n\n"
      << "`qptwin bench write_bw -s 65536 -n 5000 --profile cx6-100g` (tx depth 128, CQ "
         "moderation 100, MTU 4096)\n\n"
      << "| | GB/s (10^9 B/s) | Gb/s | MB/s (perftest, 2^20 B) |\n|---|---|---|---|\n"
      << "| measured (model) | " << F("%.3f", b.gb_per_s) << " | " << F("%.3f", b.gbps) << " | "
      << F("%.1f", b.mib_per_s) << " |\n"
      << "| analytic goodput bound | " << F("%.3f", bound / 8) << " | " << F("%.3f", bound)
      << " | " << F("%.1f", bound / 8 * 1e9 / 1048576) << " |\n\n"
      << "Ratio measured / bound: **" << F("%.4f", b.gbps / bound) << "** (goal >= 0.99); "
      << "measured >= 12.0 GB/s: **" << (b.gb_per_s >= 12.0 ? "yes" : "NO") << "**.\n\n"
      << "The bound is payload / wire bytes x 100 Gb/s with the profile's header sizes "
         "(model/wire.h): a 64 KiB WRITE is " << w.packets << " packets, " << w.wire_bytes
      << " bytes on the wire (first packet 82 + RETH 16 = 98 header bytes, the other "
      << (w.packets - 1) << " carry 82: preamble/IFG 20, Ethernet 14, FCS 4, IPv4 20, UDP 8, "
         "BTH 12, ICRC 4). The measurement runs from the first post to the last CQE, so the "
         "first message's latency and the host's posting are included.\n\n";
}

// Issue 15: the cost per WR flat in the number of QPs, and memory per QP and per WR. The rows
// run in kRounds interleaved rounds (1, 16, ..., 4096, then again), and each row shows its
// median round by CPU time: a change of the machine's load during the run then weighs on
// every row alike instead of on the rows it happens to overlap.
void SpeedVsQps(ReportCtx& c) {
  constexpr int kRounds = 3;
  const std::vector<int> rows = {1, 16, 256, 1024, 4096};
  std::ostream& out = c.out;
  out << "### WRs per wall second vs QPs\n\n"
      << "`qptwin bench write_bw -s 64 --profile cx6-100g -q Q -n N` with N = 1,000,000 / Q "
         "(about a million WRs a row; tx depth 128, so Q x 128 WRs outstanding, at most 2^19), "
         "in one process (`qptwin bench report --speed-vs-qps`): the rows run in "
      << kRounds << " interleaved rounds (1, 16, 256, 1,024, 4,096 QPs, then again) and each "
         "row shows its median round by CPU time. CPU s is the process's CPU time over the "
         "run: on a loaded machine it is the steadier figure, and the ratio uses it. Memory "
         "per QP is malloc's bytes in use gained while the QPs (both sides) were created and "
         "connected, per QP (bench_memory.h); per outstanding WR (peak RSS) is given below for "
         "the largest run. The engine's pending events do not grow with QPs (a few wake-ups "
         "per block, model/engine/event_source.h, event_source_test); what grows is the memory "
         "the WRs in flight occupy (Q x 128 of them), which a run first touches: the send "
         "queues and the packets on the wire are rings without an allocation per WR "
         "(model/engine/ring.h; a packet's payload up to 64 B and a WQE's single SGE inside "
         "the record). `bazel run //model:model_bench -- --benchmark_filter=WritesOverQps` "
         "gives the same curve (depth 32, caches on/off).\n\n"
      << "| QPs | WRs | wall s | CPU s | WRs per wall s | WRs per CPU s | CPU rate / 1 QP | "
         "per QP |\n|---|---|---|---|---|---|---|---|\n";
  std::vector<std::vector<SessionResult>> runs(rows.size());
  for (int round = 0; round < kRounds; ++round) {
    for (size_t i = 0; i < rows.size(); ++i) {
      const int q = rows[i];
      SessionResult r;
      const int n = std::max(1, 1000000 / q);
      if (!c.Run("write_bw -s 64 --profile cx6-100g -q " + std::to_string(q) + " -n " +
                     std::to_string(n), &r)) {
        return;
      }
      runs[i].push_back(r);
    }
  }
  auto cpu = [](const SessionResult& r) { return r.bw[0].speed.cpu_s; };
  double base = 0;
  double ratio = 0;
  for (size_t i = 0; i < rows.size(); ++i) {
    std::vector<SessionResult> v = runs[i];
    std::sort(v.begin(), v.end(),
              [&](const SessionResult& a, const SessionResult& b) { return cpu(a) < cpu(b); });
    const SessionResult& r = v[v.size() / 2];
    const SpeedStats& s = r.bw[0].speed;
    if (i == 0) base = s.wrs_per_cpu_s();
    ratio = base > 0 ? s.wrs_per_cpu_s() / base : 0;
    out << "| " << rows[i] << " | " << s.wrs << " | " << F("%.3f", s.wall_s) << " | "
        << F("%.3f", s.cpu_s) << " | " << F("%.0f", s.wrs_per_wall_s()) << " | "
        << F("%.0f", s.wrs_per_cpu_s()) << " | " << F("%.2f", ratio) << " | "
        << F("%.0f B", r.memory.bytes_per_qp()) << " |\n";
  }
  out << "\nGoal: WRs per second at 4,096 QPs >= 2/3 of 1 QP's: **"
      << (ratio >= 2.0 / 3 ? "met" : "NOT met") << "** (" << F("%.3f", ratio)
      << "; round by round:";
  for (int round = 0; round < kRounds; ++round) {
    const double one = runs.front()[round].bw[0].speed.wrs_per_cpu_s();
    const double many = runs.back()[round].bw[0].speed.wrs_per_cpu_s();
    out << (round ? ", " : " ") << F("%.3f", one > 0 ? many / one : 0);
  }
  out << ").\n\n";
  SessionResult big;
  if (!c.Run("write_bw -s 64 --profile cx6-100g -q 65536 -n 16", &big)) return;
  const double gib = static_cast<double>(big.memory.peak) / (1024.0 * 1024 * 1024);
  out << "`-q 65536 -n 16` (131,072 QPs on the two devices, " << big.memory.outstanding
      << " WRs outstanding): peak RSS " << F("%.2f", gib) << " GiB, "
      << F("%.0f", big.memory.bytes_per_qp()) << " B per QP, "
      << F("%.0f", big.memory.bytes_per_wr()) << " B per outstanding WR, "
      << F("%.0f", big.bw[0].speed.wrs_per_cpu_s()) << " WRs per CPU s. Goal 65,536 QPs in "
      << "< 2 GiB: **" << (gib < 2 ? "met" : "NOT met") << "**.\n\n";
}

void Speed(ReportCtx& c) {
  SessionResult r;
  if (!c.Run("write_bw -s 8 -n 1000000 --profile cx6-100g", &r)) return;
  const SpeedStats& s = r.bw[0].speed;
  c.out << "## 5. Simulation speed\n\n"
        << "`qptwin bench write_bw -s 8 -n 1000000 --profile cx6-100g` (one thread, optimised "
           "build `bazel build -c opt`, this machine):\n\n"
        << "| simulated WRs | wall s | WRs per wall s | packets per wall s (data + ACK) |\n"
        << "|---|---|---|---|\n| " << s.wrs << " | " << F("%.3f", s.wall_s) << " | "
        << F("%.0f", s.wrs_per_wall_s()) << " | " << F("%.0f", s.packets_per_wall_s())
        << " |\n\nGoal: >= 1,000,000 WRs per wall second: **"
        << (s.wrs_per_wall_s() >= 1e6 ? "met" : "NOT met") << "**. (Wall time varies with the "
        << "machine's load; the simulated results do not.)\n\n";
  SpeedVsQps(c);
}

}  // namespace

bool ReportCtx::Run(const std::string& cmd, SessionResult* r) {
  std::vector<std::string> args;
  std::istringstream is(cmd);
  for (std::string a; is >> a;) args.push_back(a);
  BenchOptions o;
  std::string error;
  if (!ParseBenchArgs(args, &o, &error) || RunSession(o, r, &error) != 0) {
    err << "report: `" << cmd << "` failed: " << error << "\n";
    ok = false;
    return false;
  }
  return true;
}

void ReportCtx::Svg(const std::string& name, const std::string& svg) {
  if (dir.empty()) return;
  std::ofstream f(dir + "/" + name);
  f << svg;
  if (!f) {
    err << "report: cannot write " << dir << "/" << name << "\n";
    ok = false;
  }
}

int WriteReport(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  ReportCtx c{out, err, {}};
  bool speed_vs_qps_only = false;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--out" && i + 1 < args.size()) {
      c.dir = args[++i];
    } else if (args[i] == "--speed-vs-qps") {
      speed_vs_qps_only = true;  // only section 5's "WRs per wall second vs QPs" (issue 15)
    } else {
      err << "usage: qptwin bench report [--out DIR] [--speed-vs-qps]\n";
      return 2;
    }
  }
  if (speed_vs_qps_only) {
    SpeedVsQps(c);
    return c.ok ? 0 : 1;
  }
  out << "# qptwin bench: the timing model against its targets\n\n"
      << "Generated by `tools/bench/make-report` (which runs `qptwin_bench report --out "
         "docs/bench`); do not edit by hand. Every number below is simulated time of the "
         "SystemC model (deterministic: the same build prints the same numbers), except wall "
         "times and the hw section. Profiles and their sourced parameters: "
         "model/profile_cx6.cc, model/timing.h, model/wire.h.\n\n";
  Target(c);
  LatencySection(c);
  OptimisationSection(c);
  ChartsSection(c);
  Speed(c);
  HwSection(c);
  LimitsSection(c);
  CacheSection(c);
  ScaleSection(c);
  return c.ok ? 0 : 1;
}

}  // namespace qptwin::bench
