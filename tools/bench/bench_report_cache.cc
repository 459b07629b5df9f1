// Section 8 of docs/bench/REPORT.md: the NIC context caches (model/timing.h contract 5),
// their parameters, the published work they rest on, and throughput against QPs and
// registered memory with the caches on and off.
#include <cstdio>
#include <ostream>
#include <sstream>
#include <string>
#include <vector>

#include "model/profile.h"
#include "tools/bench/bench_report_parts.h"
#include "tools/bench/bench_svg.h"
#include "tools/bench/bench_sweep.h"

namespace qptwin::bench {
namespace {

std::string F(const char* fmt, double v) {
  char b[64];
  std::snprintf(b, sizeof b, fmt, v);
  return b;
}

std::string Pct(double rate) { return rate < 0 ? "-" : F("%.1f%%", 100.0 * rate); }

std::string Bytes(uint64_t b) {
  if (b >= (uint64_t{1} << 30)) return std::to_string(b >> 30) + " GiB";
  if (b >= (uint64_t{1} << 20)) return std::to_string(b >> 20) + " MiB";
  return std::to_string(b >> 10) + " KiB";
}

void Parameters(ReportCtx& c) {
  const model::CacheTiming& k = model::FindProfile("cx6-100g")->timing.cache;
  const model::NicTiming& n = model::FindProfile("cx6-100g")->timing.nic;
  c.out << "| parameter (cx6-100g, cx6-dc) | value | source |\n|---|---|---|\n"
        << "| QPC entries | " << k.qpc_entries << " | estimate: no QP-count measurement with "
           "a known workload was readable (SRNIC's relative drops below are for shape) |\n"
        << "| MPT entries | " << k.mpt_entries << " | estimate: no MR-count measurement "
           "found |\n"
        << "| MTT entries x page | " << k.mtt_entries << " x " << k.page_bytes << " B = "
        << Bytes(uint64_t{k.mtt_entries} * k.page_bytes)
        << " | estimate: no registered-memory measurement found |\n"
        << "| WQE entries (all QPs) | " << k.wqe_entries
        << " | calibrated: SMART (ASPLOS 2024) Fig. 4b, ConnectX-6: WRITE falls between 960 "
           "and 1,152 WRs outstanding (table below); a retired WQE keeps its entry until "
           "evicted, so the WRs outstanding get about half |\n"
        << "| associativity | "
        << (k.ways == 0 ? std::string("fully associative, LRU")
                        : std::to_string(k.ways) + "-way, LRU per set")
        << " | calibrated: SMART's WRITE rises linearly up to the cliff, with no early misses "
           "(8-way sets of the same capacity missed from ~400 WRs outstanding on) |\n"
        << "| bytes per miss QPC / MPT / MTT / WQE | " << k.qpc_bytes << " / " << k.mpt_bytes
        << " / " << k.mtt_bytes << " / " << n.wqe_bytes
        << " | QPC estimate; mkey context 64 B (mlx5_ifc_mkc_bits); MTT entry 8 B (struct "
           "mlx5_mtt: one __be64); WQE basic block 64 B (MLX5_SEND_WQE_BB) |\n"
        << "| miss round trip | " << (k.miss_ns ? k.miss_ns : n.pcie_read_ns)
        << " ns | the profile's PCIe read (Neugebauer et al., SIGCOMM 2018) |\n"
        << "| WQE re-fetches in flight (a unit of their own) | " << k.wqe_miss_overlap
        << " | calibrated: caps WQE re-fetches at "
        << F("%.0f", 1e3 * k.wqe_miss_overlap / (k.miss_ns ? k.miss_ns : n.pcie_read_ns))
        << " M/s per NIC, SMART Fig. 4b's WRITE floor past the cliff (63 Mop/s, ConnectX-6) |\n"
        << "| QPC / MPT / MTT reads in flight | " << k.miss_overlap
        << " | estimate: caps those misses at "
        << F("%.0f", 1e3 * k.miss_overlap / (k.miss_ns ? k.miss_ns : n.pcie_read_ns))
        << " M/s per NIC; a translation the pipeline waits on, fewer in flight than plain WQE "
           "reads (no published number separates them) |\n\n";
}

void QpTable(ReportCtx& c, const SweepResult& on, const SweepResult& off) {
  c.out << "| QPs | Mpps, caches on | Mpps, caches off | Gb/s on | QPC miss | WQE miss |\n"
        << "|---|---|---|---|---|---|\n";
  for (size_t i = 0; i < on.points.size() && i < off.points.size(); ++i) {
    const SweepPoint& p = on.points[i];
    c.out << "| " << p.x << " | " << F("%.2f", p.bw.mpps) << " | "
          << F("%.2f", off.points[i].bw.mpps) << " | " << F("%.2f", p.bw.gbps) << " | "
          << Pct(MissRate(p.cache, "QPC")) << " | " << Pct(MissRate(p.cache, "WQE")) << " |\n";
  }
  c.out << "\n";
}

void MrTable(ReportCtx& c, const SweepResult& on, const SweepResult& off) {
  c.out << "| registered memory touched at random | Mpps, caches on | Mpps, caches off | "
           "MTT miss | MPT miss |\n|---|---|---|---|---|\n";
  for (size_t i = 0; i < on.points.size() && i < off.points.size(); ++i) {
    const SweepPoint& p = on.points[i];
    c.out << "| " << Bytes(p.x) << " | " << F("%.2f", p.bw.mpps) << " | "
          << F("%.2f", off.points[i].bw.mpps) << " | " << Pct(MissRate(p.cache, "MTT")) << " | "
          << Pct(MissRate(p.cache, "MPT")) << " |\n";
  }
  c.out << "\n";
}

// Miss rates in percent of lookups against the sweep's x, one series per cache kind.
Chart MissChart(const std::string& title, const SweepResult& r,
                const std::vector<std::string>& kinds) {
  Chart ch;
  ch.title = title;
  ch.x_label = r.axis == "QPs" ? "QPs (log2)" : "registered bytes (log2)";
  ch.y_label = "miss %";
  ch.log_x = true;
  for (const std::string& k : kinds) {
    Series s{k + " miss", {}};
    for (const SweepPoint& p : r.points) {
      const double m = MissRate(p.cache, k.c_str());
      s.points.emplace_back(static_cast<double>(p.x), m < 0 ? 0 : 100.0 * m);
    }
    ch.series.push_back(s);
  }
  return ch;
}

}  // namespace

// Percent of the rate lost from `from` to `to` on the sweep's axis (0 when not both present).
double RateDrop(const SweepResult& r, uint64_t from, uint64_t to) {
  double a = 0, b = 0;
  for (const SweepPoint& p : r.points) {
    if (p.x == from) a = p.bw.mpps;
    if (p.x == to) b = p.bw.mpps;
  }
  const double d = a > 0 ? 100.0 * (1.0 - b / a) : 0;
  return d < 0.5 && d > -0.5 ? 0 : d;
}

bool RunSweepCmd(ReportCtx& c, const std::string& cmd, SweepResult* r) {
  std::vector<std::string> args;
  std::istringstream is(cmd);
  for (std::string a; is >> a;) args.push_back(a);
  BenchOptions o;
  std::string error;
  if (!ParseBenchArgs(args, &o, &error) || RunSweep(o, r, &error) != 0) {
    c.err << "report: `" << cmd << "` failed: " << error << "\n";
    c.ok = false;
    return false;
  }
  return true;
}

void CacheSection(ReportCtx& c) {
  const std::string qps_cmd =
      "write_bw -s 64 -t 4 -l 4 -Q 4 --threads 32 -n 400000 --profile cx6-100g "
      "--sweep-qps 1,16,64,256,512,1024,2048,4096,16384,65536";
  const std::string mr_cmd =
      "read_bw -s 64 -q 16 -t 128 -l 16 -Q 16 -n 20000 --profile cx6-100g "
      "--sweep-mr-size 16M,64M,256M,1G,4G,16G";
  SweepResult qon, qoff, mon, moff;
  if (!RunSweepCmd(c, qps_cmd, &qon) || !RunSweepCmd(c, qps_cmd + " --cache off", &qoff) ||
      !RunSweepCmd(c, mr_cmd, &mon) || !RunSweepCmd(c, mr_cmd + " --cache off", &moff)) {
    return;
  }
  c.out << "## 8. NIC context caches\n\n"
        << "The cx6 profiles model the NIC's on-chip context caches (mlx5's ICM caches): QP "
           "contexts (QPC), memory keys (MPT), page translations (MTT, one per 4 KiB page of a "
           "region) and prefetched send WQEs, each a set-associative LRU cache of a capacity in "
           "entries (model/engine/context_cache.h). The send engine looks up the QPC, the WQE "
           "and the local key and pages of a payload it reads; the completer the WQE again "
           "when it retires it (it matches the ACK or response to it and builds the CQE from "
           "it; a retired WQE stays cached until evicted); the responder the QPC and the "
           "remote key and pages a WRITE/READ/ATOMIC touches (model/engine/nic_cache.cc). A "
           "miss is a context read over PCIe: the step waits a PCIe round trip, the bytes "
           "occupy the DMA read channel, and a context-fetch unit with a fixed number of reads "
           "in flight caps the miss rate, so misses cap the message rate. Control verbs write "
           "what they create through the cache (a new QP or region starts cached). rxe and "
           "ibta have no cache (a software device / the reference behaviour); "
           "`qptwin bench ... --cache off` runs a cx6 profile without it.\n\n";
  Parameters(c);
  PublishedCacheSection(c, qon);
  c.out << "**Throughput vs QPs** (`qptwin bench " << qps_cmd
        << "`, and the same with `--cache off`; -n is the total per point, each QP sends at "
           "least 2 x its tx depth): 32 simulated posting threads (`--threads`: QP i is "
           "thread i mod 32's, bench_run.h contract 6) keep 4 WRs outstanding per QP, so the "
           "WRs outstanding fill their half of the WQE cache ("
        << model::FindProfile("cx6-100g")->timing.cache.wqe_entries
        << " entries; retired WQEs hold the rest until evicted) from about "
        << model::FindProfile("cx6-100g")->timing.cache.wqe_entries / 8
        << " QPs on and the QPC cache ("
        << model::FindProfile("cx6-100g")->timing.cache.qpc_entries << ") from "
        << model::FindProfile("cx6-100g")->timing.cache.qpc_entries
        << "; a QPC miss costs once per 4-WR post list, a WQE miss up to twice per WR (at the "
           "send and at the retirement). Up to 16 QPs, fewer threads post (a thread without "
           "a QP is idle), so the rate rises with the QPs first.\n\n";
  QpTable(c, qon, qoff);
  c.out << "**Throughput vs registered memory** (`qptwin bench " << mr_cmd
        << "` and `--cache off`): 16 QPs read 64 B at pseudo-random offsets of the server's "
           "region; the MTT holds 256 MiB of 4 KiB pages.\n\n";
  MrTable(c, mon, moff);
  c.Svg("cache_vs_qps.svg",
        RenderSvg(SweepChart("write_bw 64 B on cx6-100g: Mpps vs QPs (32 threads, -t 4 -l 4)",
                             {&qon, &qoff}, {"context caches on", "context caches off"})));
  c.Svg("cache_vs_mr.svg",
        RenderSvg(SweepChart("read_bw 64 B on cx6-100g: Mpps vs registered memory",
                             {&mon, &moff}, {"context caches on", "context caches off"})));
  c.Svg("cache_miss_vs_qps.svg",
        RenderSvg(MissChart("write_bw 64 B on cx6-100g: miss rate vs QPs (32 threads, -t 4 -l 4)", qon,
                            {"QPC", "WQE"})));
  c.Svg("cache_miss_vs_mr.svg",
        RenderSvg(MissChart("read_bw 64 B on cx6-100g: miss rate vs registered memory", mon,
                            {"MTT", "MPT"})));
  c.out << "![throughput vs QPs](cache_vs_qps.svg) ![throughput vs registered memory]"
           "(cache_vs_mr.svg)\n\n"
        << "![miss rate vs QPs](cache_miss_vs_qps.svg) ![miss rate vs registered memory]"
           "(cache_miss_vs_mr.svg)\n\n"
        << "The caches overflow where the miss charts say (WQE from 256 QPs at -t 4, QPC "
           "from 2,048 QPs, MTT from 256 MiB), and the rate falls where the misses outrun "
           "their fetch unit: MTT misses (one per random 64 B READ past 256 MiB) against 16 M "
           "translations/s per NIC cut read_bw to well under half; with 32 posting threads "
           "the QP sweep falls "
        << F("%.0f", RateDrop(qon, 256, 4096)) << "% from 256 to 4,096 QPs and "
        << F("%.0f", RateDrop(qon, 256, 65536))
        << "% to 65,536 (caches off: "
        << F("%.0f", RateDrop(qoff, 256, 65536))
        << "%): first WQE re-fetches (calibrated to SMART: 64 M/s per NIC), then QPC misses "
           "on the same 16 M/s unit as MTT misses. One host thread (`--threads 1`, the "
           "default) posts at most ~44 Mpps at post lists of 16, so with one thread the rate "
           "falls only where a WR misses more than once (e.g. 4,096 QPs x 16 WRs in flight: "
           "its WQE at the send and at the retirement).\n\n"
        << "What this model still leaves out: misses of CQ contexts and receive WQEs, "
           "QPC lookups of the completer (an ACK's QP context), per-QP scheduling order on the "
           "real NIC (here a QP's posted WRs are looked up "
           "together, so a QPC miss is paid once per post list), prefetch depth limits, and the "
           "capacities themselves, which no vendor publishes.\n\n";
}

}  // namespace qptwin::bench
