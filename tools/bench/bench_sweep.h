// Throughput against the NIC's context caches (model/timing.h contract 5):
// `qptwin bench TEST --sweep-qps Q1,Q2,...` and `--sweep-mr-size B1,B2,...`.
//
// Contract:
//  1. --sweep-qps runs the bandwidth test once per QP count, each on a fresh backend and
//     pair. There -n is the total of WRs of one point (default 5000 as perftest's per-QP -n):
//     each QP sends max(ceil(n / QPs), 2 x tx depth), so every QP fills its window twice.
//  2. --sweep-mr-size (and --mr-size B for one run) registers B bytes per side; every WR
//     goes to a pseudo-random offset of the server's region (the same sequence every run),
//     so the translations touched grow with B while everything else stays. With -a, -q > 1
//     is allowed; the other size flags are as without a sweep.
//  3. A row reports the test's Mpps and Gb/s and, on the model, each cache kind's miss rate
//     over both NICs (hits and misses of QPC, MPT, MTT, WQE lookups); "-" where the kind saw
//     no lookup or the backend is hw. --plot FILE.svg draws Mpps against the swept value.
//  4. --cache on|off (model only): off runs the profile without its context caches, so the
//     same sweep shows the model with and without them. Bad lists, values or combinations
//     are one line and exit 2 (ParseCacheFlags, called by ParseBenchArgs).
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include "model/model_backend.h"
#include "tools/bench/bench_format.h"
#include "tools/bench/bench_options.h"
#include "tools/bench/bench_run.h"
#include "tools/bench/bench_svg.h"
#include "tools/cli/flags.h"

namespace qptwin::bench {

struct SweepPoint {
  uint64_t x = 0;  // QPs or region bytes
  BwResult bw;
  std::vector<model::CacheCounter> cache;  // summed over both NICs; empty on hw / cache off
};

struct SweepResult {
  std::string axis;  // "QPs" or "MR bytes"
  RunHeader header;
  bool cache_on = false;
  std::vector<SweepPoint> points;
};

// Contract 4: --sweep-qps, --sweep-mr-size, --mr-size, --cache into *o; false with *error.
bool ParseCacheFlags(const cli::Flags& flags, BenchOptions* o, std::string* error);
// "1,16,256" or "4K,64M,1G" (K/M/G = 2^10/2^20/2^30) with each value in [min, max].
bool ParseSweepList(const std::string& v, uint64_t min, uint64_t max,
                    std::vector<uint64_t>* out);

// Contract 1: the WRs each QP sends at one sweep point.
uint64_t SweepItersPerQp(const BenchOptions& o, uint64_t qps);

// Runs o.qps_sweep or o.mr_sweep (whichever is set). 0 or errno with *error.
[[nodiscard]] int RunSweep(const BenchOptions& o, SweepResult* out, std::string* error);

// Miss rate of `kind` in `c` ("QPC", ...): misses / lookups, or -1 without lookups.
double MissRate(const std::vector<model::CacheCounter>& c, const std::string& kind);

void PrintSweep(std::ostream& out, const SweepResult& r);
// Mpps against the swept value, one series per result (e.g. cache on and off).
Chart SweepChart(const std::string& title, const std::vector<const SweepResult*>& runs,
                 const std::vector<std::string>& names);

// The CLI path of a sweep (bench_command.cc): runs, prints, plots. An exit code.
int RunSweepCli(const BenchOptions& o, std::ostream& out, std::ostream& err);

}  // namespace qptwin::bench
