// The sections of the bench report (bench_report.cc runs them in order).
#pragma once

#include <iosfwd>
#include <string>

#include "tools/bench/bench_session.h"

namespace qptwin::bench {

struct SweepResult;  // bench_sweep.h

struct ReportCtx {
  std::ostream& out;
  std::ostream& err;
  std::string dir;  // where SVGs go ("" = none)
  bool ok = true;
  // Runs a `qptwin bench` command line (without the program name); false on failure
  // (reported on err, ok cleared).
  bool Run(const std::string& cmd, SessionResult* r);
  void Svg(const std::string& name, const std::string& svg);
};

void LatencySection(ReportCtx& c);       // 2: latency with its breakdown
void OptimisationSection(ReportCtx& c);  // 3: the seed's optimisations, before/after
void ChartsSection(ReportCtx& c);        // 4: charts
void HwSection(ReportCtx& c);            // 7: hw vs perftest (docs/bench/hw_vs_perftest.md)
void LimitsSection(ReportCtx& c);        // 8: what the model does not do
void CacheSection(ReportCtx& c);         // 8: NIC context caches (bench_report_cache.cc)
void ScaleSection(ReportCtx& c);         // 9: practices at scale (bench_report_scale.cc)
// 8, continued: the published measurements and the model's same experiments
// (bench_report_published.cc); `qps` is the section's QP sweep with the caches on.
void PublishedCacheSection(ReportCtx& c, const SweepResult& qps);
// Runs the `qptwin bench` sweep `cmd` into *r; on failure says so in c.err, clears c.ok
// and returns false (bench_report_cache.cc).
bool RunSweepCmd(ReportCtx& c, const std::string& cmd, SweepResult* r);
// Percent of the rate lost from x = `from` to x = `to` of a sweep (0 unless both are there).
double RateDrop(const SweepResult& r, uint64_t from, uint64_t to);

}  // namespace qptwin::bench
