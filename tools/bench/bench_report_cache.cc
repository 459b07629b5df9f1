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

void Parameters(ReportCtx& c) {
  const model::CacheTiming& k = model::FindProfile("cx6-100g")->timing.cache;
  const model::NicTiming& n = model::FindProfile("cx6-100g")->timing.nic;
  c.out << "| parameter (cx6-100g, cx6-dc) | value | source |\n|---|---|---|\n"
        << "| QPC entries | " << k.qpc_entries << " | estimate (cliff between 1,024 and 4,096 "
           "active QPs; see the published column below) |\n"
        << "| MPT entries | " << k.mpt_entries << " | estimate |\n"
        << "| MTT entries x page | " << k.mtt_entries << " x " << k.page_bytes << " B = "
        << Bytes(uint64_t{k.mtt_entries} * k.page_bytes) << " | estimate |\n"
        << "| WQE entries (all QPs) | " << k.wqe_entries << " | estimate |\n"
        << "| associativity | " << k.ways << "-way, LRU per set | modelling choice |\n"
        << "| bytes per miss QPC / MPT / MTT / WQE | " << k.qpc_bytes << " / " << k.mpt_bytes
        << " / " << k.mtt_bytes << " / " << n.wqe_bytes
        << " | QPC estimate; mkey context 64 B (mlx5_ifc_mkc_bits); MTT entry 8 B (struct "
           "mlx5_mtt: one __be64); WQE basic block 64 B (MLX5_SEND_WQE_BB) |\n"
        << "| miss round trip | " << (k.miss_ns ? k.miss_ns : n.pcie_read_ns)
        << " ns | the profile's PCIe read (Neugebauer et al., SIGCOMM 2018) |\n"
        << "| context reads in flight | " << k.miss_overlap
        << " | estimate: caps misses at " << F("%.0f", 1e3 * k.miss_overlap /
                                                   (k.miss_ns ? k.miss_ns : n.pcie_read_ns))
        << " M/s per NIC |\n\n";
}

void Published(ReportCtx& c, const SweepResult& qps, const SweepResult& mr) {
  auto mpps_at = [](const SweepResult& r, uint64_t x) {
    for (const SweepPoint& p : r.points) {
      if (p.x == x) return p.bw.mpps;
    }
    return 0.0;
  };
  const double q16 = mpps_at(qps, 16), q16k = mpps_at(qps, 16384);
  const double m64 = mpps_at(mr, uint64_t{64} << 20), m16g = mpps_at(mr, uint64_t{16} << 30);
  c.out << "**Published measurements and the model, side by side.** Only the papers' "
           "abstracts and summaries could be read here (the `search` tool's stored pages); "
           "no figure's values were readable, so no number below is read from a figure and "
           "the published column quotes what the text says. That is why every capacity above "
           "is marked an estimate: the model reproduces the published *shape* (a cliff, and "
           "where it sits relative to the QP count / registered memory), not published values.\n\n"
        << "| work (venue, year) | NIC | what it measures / says (verified text) | model (cx6-100g) |\n"
        << "|---|---|---|---|\n"
        << "| Kalia, Kaminsky, Andersen, \"Design Guidelines for High Performance RDMA "
           "Systems\" (USENIX ATC 2016) | not verified here | guidelines built on "
           "\"individual PCIe transactions and NIC architecture\" (abstract): the NIC's work per "
           "message is PCIe reads of WQEs, payload and context | a miss is one PCIe read "
           "(timing.h contract 5), on the same DMA read channel as WQE and payload fetches |\n"
        << "| Novakovic et al., \"Storm\" (SYSTOR 2019) | ConnectX-4 (EDR cluster), \"multiple "
           "generations\" studied | \"RDMA is widely believed to have scalability issues, due to the amount of "
           "active protocol state that needs to be cached in the limited NIC cache\"; newer NICs "
           "in rack-scale settings scale further than that belief (abstract) | flat while the "
           "WRs in flight fit the WQE cache and the QPs the QPC cache: " << F("%.1f", q16) << " Mpps at 16 QPs, " << F("%.1f", mpps_at(qps, 1024))
        << " at 1,024 (WQE misses start), " << F("%.1f", q16k) << " at 16,384 (write_bw 64 B, "
           "-t 16 -l 16) |\n"
        << "| Wang et al., \"SRNIC\" (NSDI 2023) | commercial RoCEv2 RNICs (not named in the abstract) vs an FPGA "
           "design | "
           "commercial RNICs \"support only a small number of performant connections\"; SRNIC "
           "keeps 10K performant connections on chip, 18x the commercial NICs' performant "
           "connections per MB of on-chip memory (abstract) | " << model::FindProfile("cx6-100g")
               ->timing.cache.qpc_entries
        << " QPCs on chip (below SRNIC's 10K, as the abstract implies for commercial RNICs); "
           "beyond them " << F("%.0f", 100.0 * (1.0 - q16k / q16)) << "% of the rate is lost at "
           "16,384 QPs |\n"
        << "| Kong et al., \"Understanding RDMA Microarchitecture Resources for Performance "
           "Isolation\" (Husky, NSDI 2023) | NVIDIA, Chelsio, Intel RNICs | \"wide range access "
           "across many objects (QP, CQ, MR) causes ICM cache misses\"; control verbs can cause "
           "excessive misses (paper summary) | QPC, MPT, MTT and WQE caches; control verbs "
           "install the contexts they create (a new QP's first WRITE hits) |\n"
        << "| Dragojevic et al., \"FaRM\" (NSDI 2014) | not verified here | the NIC's page table "
           "lives in system memory and NIC memory acts as a cache of it (a summary of the "
           "paper); FaRM's remedy, 2 GB pages, is from memory of the paper, not verified here | "
           "random 64 B READs: " << F("%.1f", m64) << " Mpps over 64 MiB, "
        << F("%.1f", m16g) << " over 16 GiB (4 KiB pages); a 2 GB page would need 8 MTT "
           "entries for 16 GiB |\n"
        << "| Tsai & Zhang, \"LITE\" (SOSP 2017) | not verified here | native RDMA: \"its "
           "performance does not scale\" (abstract); the paper's MR count/size figure was not "
           "readable | the MTT sweep below |\n\n"
        << "Not verified and therefore not used: FaSST (OSDI 2016), ScaleRPC (EuroSys 2019) and "
           "Flock (SOSP 2021) figures of throughput vs QPs (their abstracts, where found, give "
           "no numbers of it).\n\n";
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

}  // namespace

void CacheSection(ReportCtx& c) {
  const std::string qps_cmd =
      "write_bw -s 64 -t 16 -l 16 -Q 16 -n 200000 --profile cx6-100g "
      "--sweep-qps 1,16,256,1024,2048,4096,16384,65536";
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
           "and the local key and pages of a payload it reads; the responder the QPC and the "
           "remote key and pages a WRITE/READ/ATOMIC touches (model/engine/nic_cache.cc). A "
           "miss is a context read over PCIe: the step waits a PCIe round trip, the bytes "
           "occupy the DMA read channel, and a context-fetch unit with a fixed number of reads "
           "in flight caps the miss rate, so misses cap the message rate. Control verbs write "
           "what they create through the cache (a new QP or region starts cached). rxe and "
           "ibta have no cache (a software device / the reference behaviour); "
           "`qptwin bench ... --cache off` runs a cx6 profile without it.\n\n";
  Parameters(c);
  Published(c, qon, mon);
  c.out << "**Throughput vs QPs** (`qptwin bench " << qps_cmd
        << "`, and the same with `--cache off`; -n is the total per point, each QP sends at "
           "least 2 x its tx depth): 16 WRs outstanding per QP, so the WQE cache (4,096) is "
           "full from 256 QPs on and the QPC cache (2,048) from 2,048; a QPC miss costs once "
           "per 16-WR window, a WQE miss once per WR.\n\n";
  QpTable(c, qon, qoff);
  c.out << "**Throughput vs registered memory** (`qptwin bench " << mr_cmd
        << "` and `--cache off`): 16 QPs read 64 B at pseudo-random offsets of the server's "
           "region; the MTT holds 256 MiB of 4 KiB pages.\n\n";
  MrTable(c, mon, moff);
  c.Svg("cache_vs_qps.svg",
        RenderSvg(SweepChart("write_bw 64 B on cx6-100g: Mpps vs QPs (-t 16 -l 16)",
                             {&qon, &qoff}, {"context caches on", "context caches off"})));
  c.Svg("cache_vs_mr.svg",
        RenderSvg(SweepChart("read_bw 64 B on cx6-100g: Mpps vs registered memory",
                             {&mon, &moff}, {"context caches on", "context caches off"})));
  c.out << "![throughput vs QPs](cache_vs_qps.svg) ![throughput vs registered memory]"
           "(cache_vs_mr.svg)\n\n"
        << "What this model still leaves out: misses of CQ contexts and receive WQEs, "
           "per-QP scheduling order on the real NIC (here a QP's posted WRs are looked up "
           "together, so a QPC miss is paid once per window), prefetch depth limits, and the "
           "capacities themselves, which no vendor publishes.\n\n";
}

}  // namespace qptwin::bench
