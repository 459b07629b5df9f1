#include "tools/fuzz/fuzz_loop.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <sstream>
#include <system_error>
#include <vector>

#include "spec/reference/sequence.h"
#include "spec/reference/sequence_gen.h"
#include "tools/cli/cli_io.h"
#include "tools/fuzz/known_bugs.h"

namespace qptwin::fuzz {
namespace {

using Clock = std::chrono::steady_clock;

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

void PrintProgress(std::ostream& os, const FuzzStats& s) {
  const double rate = s.seconds > 0 ? s.sequences / s.seconds : 0;
  os << "fuzz: " << std::fixed << std::setprecision(1) << s.seconds << " s  " << s.sequences
     << " sequences  " << s.commands << " commands  " << std::setprecision(0) << rate
     << " sequences/s  " << s.failures << " failures\n"
     << std::defaultfloat << std::flush;
}

// Writes the failure file; returns an error message or "".
std::string SaveFailure(const FuzzOptions& opts, uint64_t n,
                        const std::vector<reference::SeqCommand>& cmds,
                        const reference::SeqResult& r) {
  std::error_code ec;
  std::filesystem::create_directories(opts.out_dir, ec);
  const std::string path = FailurePath(opts, n);
  std::ostringstream f;
  const size_t ran = std::min(cmds.size(), static_cast<size_t>(std::max(r.commands, 0)));
  f << "# qptwin fuzz: sequence " << n << " of seed " << opts.seed << " broke a rule\n"
    << "# rule: " << r.failure << "\n";
  if (const char* bug = KnownOpenBug(r.failure)) f << "# known open bug: " << bug << "\n";
  f
    << "# after " << ran << " of " << cmds.size() << " commands (then every QP to ERR)\n"
    << "# replay: qptwin fuzz " << opts.backend_flags << " --seed " << opts.seed
    << " --max-len " << opts.max_len << " --replay " << n << "\n"
    << "# or: qptwin run THIS_FILE (the exact masks, values and lists the device got)\n";
  f << r.replay;
  std::string error;
  return cli::WriteOutputFile(path, f.str(), std::cout, &error) ? "" : error;
}

}  // namespace

std::string FailurePath(const FuzzOptions& opts, uint64_t n) {
  return (std::filesystem::path(opts.out_dir) /
          ("fail-" + std::to_string(opts.seed) + "-" + std::to_string(n) + ".qps"))
      .string();
}

FuzzStats RunFuzzLoop(const FuzzOptions& opts, const BackendMaker& make, std::ostream& progress) {
  FuzzStats stats;
  const Clock::time_point start = Clock::now();
  double next_report = 1.0;
  uint64_t n = opts.replay.value_or(0);
  for (;; ++n) {
    const auto cmds =
        reference::RandomSequence(reference::SequenceSeed(opts.seed, n), opts.max_len);
    std::unique_ptr<Backend> backend = make();
    reference::SeqResult r;
    if (backend) {
      r = reference::RunSequence(*backend, cmds, opts.settle_ns);
    } else {
      r.failure = "the backend could not be created";
    }
    ++stats.sequences;
    stats.commands += r.commands;
    stats.completions += r.completions;
    if (!r.failure.empty()) {
      if (stats.failures++ == 0) stats.first_failure = r.failure;
      stats.known += KnownOpenBug(r.failure) != nullptr;
      const std::string error = SaveFailure(opts, n, cmds, r);
      if (!error.empty()) {
        stats.io_error = error;
        break;
      }
      progress << "fuzz: sequence " << n << ": " << r.failure
               << (KnownOpenBug(r.failure) ? " (a known open bug)" : "") << " -> "
               << FailurePath(opts, n) << "\n";
    }
    stats.seconds = SecondsSince(start);
    if (opts.replay) break;
    if (stats.failures >= kMaxFailures) {
      progress << "fuzz: stopping after " << kMaxFailures << " failures\n";
      break;
    }
    if (stats.seconds >= next_report) {
      PrintProgress(progress, stats);
      next_report = stats.seconds + 1.0;
    }
    if (stats.seconds >= opts.seconds) break;
    if (opts.sequences && stats.sequences >= *opts.sequences) break;
  }
  stats.seconds = SecondsSince(start);
  return stats;
}

}  // namespace qptwin::fuzz
