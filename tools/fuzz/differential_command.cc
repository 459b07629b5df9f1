#include "tools/fuzz/differential_command.h"

#include <malloc.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <ostream>
#include <random>
#include <utility>
#include <vector>

#include "tools/cli/commands.h"
#include "tools/fuzz/differential_loop.h"

namespace qptwin::fuzz {
namespace {

using cli::BadInput;

std::optional<uint64_t> Uint(const std::string& s) {
  uint64_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return v;
}

// "I/N" with I < N.
bool ParseShard(const std::string& s, uint64_t* index, uint64_t* count) {
  const size_t slash = s.find('/');
  if (slash == std::string::npos) return false;
  auto i = Uint(s.substr(0, slash));
  auto n = Uint(s.substr(slash + 1));
  if (!i || !n || *n == 0 || *i >= *n) return false;
  *index = *i;
  *count = *n;
  return true;
}

std::string Label(const cli::BackendSpec& s) {
  return s.kind == "hw" ? "hw" : "model/" + (s.profile.empty() ? std::string("rxe") : s.profile);
}

}  // namespace

const char kDifferentialUsage[] =
    "       qptwin fuzz --differential [--profile P] [--against hw|model[:P]|none] [--device D]\n"
    "                   [--seed S] [--sequences K] [--seconds N] [--shard I/N] [--max-len A]\n"
    "                   [--poll-ms T] [--reruns R] [--tick-phases P] [--host-times H,...]\n"
    "                   [--out DIR]\n"
    "                   [--replay n]\n"
    "  runs whole-surface .qps sequences (several QPs of every type, SRQs, every opcode,\n"
    "  bad keys, odd modifies, destroys, SQD, RESET; spec/differential/generator.h) of up to\n"
    "  A random steps (default 24) on the model (profile P, default rxe) and on --against\n"
    "  (hw: the real device; model:P; default: the same model again, for determinism; none:\n"
    "  the model alone, its transcripts made and compared with nothing: its rate) and\n"
    "  compares their canonical transcripts (spec/differential/canonical.h). Each difference\n"
    "  is saved as DIR/S-n.qps (replayable with qptwin diff) and the exit code is 1.\n"
    "  --shard I/N runs the sequences n with n % N == I (default: Bazel's TEST_SHARD_INDEX/\n"
    "  TEST_TOTAL_SHARDS); --poll-ms: every poll's timeout (default 30). --reruns R: a\n"
    "  sequence that differs runs again on --against up to R times (default 0); when one\n"
    "  run gives the model's transcript, the device is nondeterministic there and it is\n"
    "  counted and saved (S-n-rerun.qps) apart from the differences. --tick-phases P: a\n"
    "  sequence that differs runs first on the model with its kernel's ticks (rxe: 4 ms\n"
    "  jiffies) at the phases k/P of a tick, k = 1..P-1 (default 8; 0 or 1: none): a\n"
    "  program starts at an arbitrary point of the host's tick, so when --against gives\n"
    "  one of those transcripts it is counted and saved (S-n-phase.qps) apart as well.\n"
    "  --host-times H,...: then the model again at each host time (microseconds before each\n"
    "  command, as a slow host spends: default 500,1000,2000; none: no host times) at every\n"
    "  phase; a match is counted and saved (S-n-host.qps) apart as well. Then (profile rxe)\n"
    "  the model with rxe's ~0.9 s retry skip loop stalling the program (which runs again\n"
    "  0, 1, 3, ... 11 ms after it), beside it, or beside it until the program's K-th\n"
    "  wake-up (K = 1..16), at every phase (qptwin run --retry-skip): a match is saved as\n"
    "  S-n-skip.qps.\n"
    "  A sequence the model's profile says would crash the real device (rxe 6.1 oopses on\n"
    "  an invalidate of an unbound type 2 window) is not run on hw: counted and saved\n"
    "  (S-n-fault.qps) apart.\n";

std::vector<cli::FlagSpec> DifferentialFlags() {
  return {{"--differential", false}, {"--against"}, {"--shard"},      {"--poll-ms"},
          {"--reruns"},              {"--tick-phases"}, {"--host-times"}};
}

int RunDifferentialFuzz(const cli::Flags& flags, std::ostream& out, std::ostream& err,
                        const SpecFactory& make) {
  std::string error;
  cli::BackendSpec a;
  if (!cli::BackendSpecFromFlags(flags, &a, &error)) return BadInput(err, "fuzz: " + error);
  if (a.kind != "model") {
    return BadInput(err, "fuzz: --differential runs the model as --backend (valid: model); "
                         "the device goes in --against hw");
  }
  if (a.profile.empty()) a.profile = "rxe";
  if (flags.Has("--retry-skip")) {
    return BadInput(err, "fuzz: --retry-skip is for run and diff; fuzz --differential tries "
                         "each host of rxe's retry skip loop itself (contract 10)");
  }
  cli::BackendSpec b = a;
  const bool alone = flags.Get("--against") == "none";  // side a only: nothing compared
  if (flags.Has("--against") && !alone) {
    const std::string s = flags.Get("--against");
    const size_t colon = s.find(':');
    b.kind = s.substr(0, colon);
    if (std::string why = cli::CheckBackendKind(b.kind); !why.empty()) {
      return BadInput(err, "fuzz: --against: " + why);
    }
    if (colon != std::string::npos) {
      if (b.kind == "hw") return BadInput(err, "fuzz: --against hw takes no profile");
      b.profile = s.substr(colon + 1);
    } else if (b.kind == "hw") {
      b.profile.clear();
    }
  }
  DiffOptions o;
  if (flags.Has("--seed")) {
    auto s = Uint(flags.Get("--seed"));
    if (!s) return BadInput(err, "fuzz: --seed '" + flags.Get("--seed") +
                                     "' is not a seed (valid: 0..18446744073709551615)");
    o.seed = *s;
  } else {
    std::random_device rd;
    o.seed = ((uint64_t{rd()} << 20) ^
              std::chrono::steady_clock::now().time_since_epoch().count()) %
             1'000'000'000'000ull;
  }
  if (flags.Has("--sequences")) {
    auto k = Uint(flags.Get("--sequences"));
    if (!k || *k < 1) return BadInput(err, "fuzz: --sequences '" + flags.Get("--sequences") +
                                               "' is not a number of sequences (valid: 1 or more)");
    o.sequences = *k;
    o.seconds = 24 * 3600;
  }
  if (flags.Has("--seconds")) {
    const std::string s = flags.Get("--seconds");
    char* end = nullptr;
    const double v = std::strtod(s.c_str(), &end);
    if (s.empty() || end != s.c_str() + s.size() || !std::isfinite(v) || v <= 0) {
      return BadInput(err, "fuzz: --seconds '" + s + "' is not a positive number of seconds");
    }
    o.seconds = v;
  }
  if (flags.Has("--max-len")) {
    auto l = Uint(flags.Get("--max-len"));
    if (!l || *l < 1 || *l > 1000) return BadInput(err, "fuzz: --max-len '" +
                                                            flags.Get("--max-len") +
                                                            "' is not a number of steps (valid: 1..1000)");
    o.generator.actions = static_cast<int>(*l);
  }
  if (flags.Has("--poll-ms")) {
    auto t = Uint(flags.Get("--poll-ms"));
    if (!t || *t < 1 || *t > 10000) return BadInput(err, "fuzz: --poll-ms '" +
                                                             flags.Get("--poll-ms") +
                                                             "' is not a timeout (valid: 1..10000 ms)");
    o.generator.poll_ms = *t;
  }
  if (flags.Has("--reruns")) {
    auto r = Uint(flags.Get("--reruns"));
    if (!r || *r > 10) return BadInput(err, "fuzz: --reruns '" + flags.Get("--reruns") +
                                                "' is not a number of re-runs (valid: 0..10)");
    o.reruns = static_cast<int>(*r);
  }
  o.tick_phases = 8;
  o.host_us = {500, 1000, 2000};
  if (flags.Has("--host-times")) {
    o.host_us.clear();
    const std::string list = flags.Get("--host-times");
    for (size_t b = 0; list != "none" && b <= list.size();) {
      const size_t e = std::min(list.find(',', b), list.size());
      auto v = Uint(list.substr(b, e - b));
      if (!v || *v > 100000) {
        return BadInput(err, "fuzz: --host-times '" + list +
                                 "' is not a list of host times (valid: none, or microseconds "
                                 "0..100000 separated by commas, e.g. 500,1000,2000)");
      }
      if (*v > 0) o.host_us.push_back(*v);
      b = e + 1;
    }
  }
  if (flags.Has("--tick-phases")) {
    auto p = Uint(flags.Get("--tick-phases"));
    if (!p || *p > 64) return BadInput(err, "fuzz: --tick-phases '" + flags.Get("--tick-phases") +
                                                "' is not a number of phases (valid: 0..64)");
    o.tick_phases = static_cast<int>(*p);
  }
  const char* env_index = std::getenv("TEST_SHARD_INDEX");
  const char* env_total = std::getenv("TEST_TOTAL_SHARDS");
  if (flags.Has("--shard")) {
    if (!ParseShard(flags.Get("--shard"), &o.shard_index, &o.shard_count)) {
      return BadInput(err, "fuzz: --shard '" + flags.Get("--shard") +
                               "' is not a shard (valid: I/N with 0 <= I < N, e.g. 0/4)");
    }
  } else if (env_index != nullptr && env_total != nullptr) {
    if (!ParseShard(std::string(env_index) + "/" + env_total, &o.shard_index, &o.shard_count)) {
      return BadInput(err, "fuzz: TEST_SHARD_INDEX/TEST_TOTAL_SHARDS are not a shard");
    }
    if (const char* status = std::getenv("TEST_SHARD_STATUS_FILE")) std::ofstream touch(status);
  }
  if (flags.Has("--replay")) {
    auto n = Uint(flags.Get("--replay"));
    if (!n) return BadInput(err, "fuzz: --replay '" + flags.Get("--replay") +
                                     "' is not a sequence number");
    if (!flags.Has("--seed")) return BadInput(err, "fuzz: --replay needs the --seed it came from");
    o.replay = *n;
  }
  o.out_dir = flags.Get("--out", ".");
  o.label_a = Label(a);
  o.label_b = alone ? "none" : Label(b);
  o.replay_flags = "--backend model --profile " + a.profile + " --against " +
                   (b.kind == "hw" ? std::string("hw") : "model:" + b.profile);
  if (!a.device.empty()) o.replay_flags += " --device " + a.device;
  o.spare_b = !alone && b.kind == "hw";  // contract 8: never crash the device

  // Both backends up front: a bad profile or a missing device is bad input.
  if (!make(a, &error)) return BadInput(err, "fuzz: " + error);
  if (!alone && !make(b, &error)) return BadInput(err, "fuzz: --against: " + error);
  auto maker = [&make](cli::BackendSpec spec) {
    return [spec, &make](int devices) mutable {
      spec.devices = devices;
      std::string ignored;
      return make(spec, &ignored);
    };
  };
  if (!o.replay) {
    err << "fuzz --differential: " << o.label_a << " against " << o.label_b << ", seed "
        << o.seed << ", shard " << o.shard_index << "/" << o.shard_count << ", up to "
        << o.generator.actions << " steps, polls of " << o.generator.poll_ms << " ms\n";
  }
  // The loop's helper thread allocates from a malloc arena of its own, which by default
  // hands freed pages back to the kernel as soon as 128 KB are free at its top and then
  // faults them in again (measured: 38,000 page faults in a 20,000-sequence run, 1,200
  // without the helper). A fuzz run keeps what it has freed for the next sequences instead.
  mallopt(M_TRIM_THRESHOLD, 256 << 20);
  mallopt(M_MMAP_THRESHOLD, 4 << 20);
  // Contract 7: side a at other tick phases (a model; its tick_phase 0 otherwise).
  // Contract 10: the hosts of rxe's retry skip loop (a model with the rxe profile).
  std::string profile = a.profile;
  for (char& c : profile) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  o.retry_skips = a.kind == "model" && profile == "rxe";
  const PhasedMaker phased = [a, &make](int devices, double tick_phase,
                                        const std::string& retry_skip) mutable {
    a.devices = devices;
    a.tick_phase = tick_phase;
    a.retry_skip = retry_skip;
    std::string ignored;
    return make(a, &ignored);
  };
  const DiffStats s = RunDifferentialLoop(o, maker(a), alone ? SideMaker() : maker(b), err,
                                          a.kind == "model" ? &phased : nullptr);
  if (!s.io_error.empty()) return BadInput(err, "fuzz: " + s.io_error);
  if (o.replay) out << s.replay_text;
  out << "fuzz --differential: " << s.sequences << " sequences (seed " << o.seed << ", shard "
      << o.shard_index << "/" << o.shard_count << "), " << s.lines
      << (alone ? " transcript lines made (" + o.label_a + " alone) in "
                : std::string(" transcript lines compared in "))
      << s.seconds << " s ("
      << static_cast<uint64_t>(s.sequences / std::max(s.seconds, 1e-9))
      << " sequences/s); " << s.differences << " differences";
  if (o.reruns > 0) {
    out << "; " << s.rerun_matched << " more gave the model's transcript on a re-run of "
        << o.label_b << " (" << s.reruns << " re-runs)";
  }
  if ((o.tick_phases > 1 || !o.host_us.empty() || o.retry_skips) && a.kind == "model" &&
      (o.reruns > 0 || s.phase_runs > 0)) {
    out << "; " << s.phase_matched << " more gave " << o.label_a
        << "'s transcript at another tick phase";
    if (!o.host_us.empty()) out << " and " << s.host_matched << " at a host time";
    if (o.retry_skips) out << " and " << s.skip_matched << " with a retry's skip loop timed";
    out << " (" << s.phase_runs << " runs at " << std::max(o.tick_phases - 1, 0) << " phases";
    if (!o.host_us.empty()) out << " and " << o.host_us.size() << " host times";
    if (o.retry_skips) out << " and 24 hosts of the skip loop";
    out << ")";
  }
  if (s.device_faults > 0) {
    out << "; " << s.device_faults
        << (o.spare_b ? " not run on " + o.label_b + ": " : std::string(" of them "))
        << "would crash the device, says " << o.label_a << "'s profile (contract 8)";
  }
  out << "\n";
  if (s.device_faults > 0 && o.spare_b) {
    out << "fuzz --differential: the spared sequences saved as " << o.out_dir << "/" << o.seed
        << "-*-fault.qps\n";
  }
  if (s.rerun_matched > 0) {
    out << "fuzz --differential: the re-run matches saved as " << o.out_dir << "/" << o.seed
        << "-*-rerun.qps\n";
  }
  if (s.host_matched > 0) {
    out << "fuzz --differential: the host time matches saved as " << o.out_dir << "/" << o.seed
        << "-*-host.qps\n";
  }
  if (s.skip_matched > 0) {
    out << "fuzz --differential: the retry skip loop matches saved as " << o.out_dir << "/"
        << o.seed << "-*-skip.qps\n";
  }
  if (s.phase_matched > 0) {
    out << "fuzz --differential: the tick phase matches saved as " << o.out_dir << "/" << o.seed
        << "-*-phase.qps\n";
  }
  if (s.differences == 0) return cli::kExitOk;
  std::vector<std::pair<uint64_t, std::string>> clusters;
  for (const auto& [k, v] : s.clusters) clusters.emplace_back(v, k);
  std::sort(clusters.rbegin(), clusters.rend());
  for (size_t i = 0; i < clusters.size() && i < 20; ++i) {
    out << "fuzz --differential: " << clusters[i].first << " x  " << clusters[i].second << "\n";
  }
  out << "fuzz --differential: first: " << s.first << "\n"
      << "fuzz --differential: " << s.saved << " saved as " << o.out_dir << "/" << o.seed
      << "-*.qps\n";
  return 1;
}

}  // namespace qptwin::fuzz
