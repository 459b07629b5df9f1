// One benchmark invocation: backend + connected pair + the runs of the options (sizes,
// depth sweep), collected for printing. Shared by the CLI and the report.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "model/model_backend.h"
#include "spec/backend.h"
#include "tools/bench/bench_format.h"
#include "tools/bench/bench_memory.h"
#include "tools/bench/bench_options.h"
#include "tools/bench/bench_pair.h"
#include "tools/bench/bench_run.h"

namespace qptwin::bench {

struct SessionResult {
  RunHeader header;
  std::vector<BwResult> bw;
  std::vector<LatResult> lat;
  std::vector<std::pair<int, BwResult>> depth_sweep;  // (tx depth, result)
  MemoryStats memory;  // the process's RSS around setup and at its peak (bench_memory.h)
  // Model: the context-cache counters of both NICs, summed per kind, after every run.
  std::vector<model::CacheCounter> cache;
  // --vs-systemc: SystemC's raw rates before and after the run (BenchOptions::vs_systemc).
  model::SystemCRates systemc_before, systemc_after;
};
// The rates' activations per measurement (each SC_METHOD and SC_THREAD): about 0.1-0.3 s.
inline constexpr uint64_t kSystemCActivations = 2'000'000;

// The pair configuration for `o` (buffers for max_size, send queues of `depth`), the
// sizes a session runs (UD: up to the path MTU) and the largest of them.
PairConfig ConfigFor(const BenchOptions& o, uint64_t max_size, int depth);
std::vector<uint64_t> SizesOf(const BenchOptions& o, uint32_t mtu);
uint64_t MaxSizeOf(const BenchOptions& o);

// Makes the backend the options name through the CLI's one factory (tools/cli/
// backend_factory.h): null with *error set (unknown profile, no device, no device -d names).
std::unique_ptr<Backend> MakeBenchBackend(const BenchOptions& o, std::string* error);

// Runs everything `o` asks for. 0 or errno with *error set.
[[nodiscard]] int RunSession(const BenchOptions& o, SessionResult* out, std::string* error);

// --vs-systemc's lines: SystemC's raw rates before and after the run, and the simulated WRs
// per wall second of all rows over their mean (the ratio issue 12 sets a goal for).
std::string FormatVsSystemC(const SessionResult& r);

// The charts --plot draws for a session (bandwidth vs size, latency percentiles, bandwidth
// vs tx depth): whichever the session has data for.
std::string SessionSvg(const SessionResult& r);

}  // namespace qptwin::bench
