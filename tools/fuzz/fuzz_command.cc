#include "tools/fuzz/fuzz_command.h"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <optional>
#include <ostream>
#include <random>

#include "spec/reference/sequence_gen.h"
#include "tools/cli/commands.h"
#include "tools/cli/flags.h"
#include "tools/fuzz/differential_command.h"
#include "tools/fuzz/fuzz_loop.h"

namespace qptwin::fuzz {
namespace {

using cli::BadInput;

constexpr int kExitFailures = 1;  // a rule was broken (the files say which)

constexpr char kUsage[] =
    "usage: qptwin fuzz [--backend model|hw] [--profile P] [--device D] [--seconds N] [--seed S]\n"
    "                   [--out DIR] [--max-len L] [--replay N] [--sequences K]\n"
    "  runs random modify/post/poll sequences of 1..L commands (default 20) on two connected\n"
    "  RC QPs against the reference model for N seconds (default 10); progress on stderr.\n"
    "  Every sequence that breaks a rule is saved as DIR/fail-S-N.qps (DIR defaults to .) and\n"
    "  the exit code is 1. The same seed S gives the same sequences (default: a random seed,\n"
    "  printed); --replay N runs only sequence N of seed S and prints it; --sequences K stops\n"
    "  after K sequences (with --seconds too, whichever comes first).\n"
    "  --profile: the model's device profile (rxe, ibta; default rxe).\n";

std::vector<cli::FlagSpec> Specs() {
  std::vector<cli::FlagSpec> specs = cli::BackendFlags();
  specs.insert(specs.end(), {{"--seconds"}, {"--seed"}, {"--out"}, {"--max-len"}, {"--replay"},
                             {"--sequences"}});
  const std::vector<cli::FlagSpec> differential = DifferentialFlags();
  specs.insert(specs.end(), differential.begin(), differential.end());
  return specs;
}

constexpr size_t kMaxLen = 1000;

std::optional<uint64_t> ParseUint(const std::string& s) {
  uint64_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || s.empty()) return std::nullopt;
  return v;
}

std::optional<double> ParseSeconds(const std::string& s) {
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (s.empty() || end != s.c_str() + s.size() || !std::isfinite(v) || v <= 0) return {};
  return v;
}

uint64_t FreshSeed() {
  std::random_device rd;
  const uint64_t t = std::chrono::steady_clock::now().time_since_epoch().count();
  return ((uint64_t{rd()} << 20) ^ t) % 1'000'000'000'000ull;  // short enough to type
}

}  // namespace

std::unique_ptr<Backend> MakeFuzzBackend(const cli::BackendSpec& spec, std::string* error) {
  cli::BackendSpec one = spec;
  one.devices = 1;  // both QPs of a sequence live on the first device
  return cli::MakeBackend(one, error);
}

int RunFuzzWith(const std::vector<std::string>& args, std::istream& in, std::ostream& out,
                std::ostream& err, const BackendFactory& make) {
  std::string error;
  auto flags = cli::ParseFlags(args, Specs(), &error);
  if (!flags) return BadInput(err, "fuzz: " + error);
  if (flags->help) {
    out << kUsage << kDifferentialUsage;
    return cli::kExitOk;
  }
  if (flags->Has("--differential")) {
    // Scenarios open as many devices as they have `device` lines: the CLI's factory as it is.
    return RunDifferentialFuzz(*flags, out, err, cli::MakeBackend);
  }
  for (const char* only : {"--against", "--shard", "--poll-ms"}) {
    if (flags->Has(only)) return BadInput(err, std::string("fuzz: ") + only + " needs --differential");
  }
  cli::BackendSpec spec;
  if (!cli::BackendSpecFromFlags(*flags, &spec, &error)) return BadInput(err, "fuzz: " + error);
  if (spec.kind == "model" && spec.profile.empty()) spec.profile = "rxe";
  const std::string& kind = spec.kind;
  FuzzOptions opts;
  if (flags->Has("--seconds")) {
    auto s = ParseSeconds(flags->Get("--seconds"));
    if (!s) return BadInput(err, "fuzz: --seconds '" + flags->Get("--seconds") +
                                     "' is not a positive number of seconds (e.g. 10, 0.5)");
    opts.seconds = *s;
  }
  if (flags->Has("--sequences")) {
    auto k = ParseUint(flags->Get("--sequences"));
    if (!k || *k < 1) {
      return BadInput(err, "fuzz: --sequences '" + flags->Get("--sequences") +
                               "' is not a number of sequences (valid: 1 or more)");
    }
    opts.sequences = *k;
    // With a count, time is only a safety limit unless --seconds says otherwise.
    if (!flags->Has("--seconds")) opts.seconds = 24 * 3600;
  }
  if (flags->Has("--max-len")) {
    auto l = ParseUint(flags->Get("--max-len"));
    if (!l || *l < 1 || *l > kMaxLen) {
      return BadInput(err, "fuzz: --max-len '" + flags->Get("--max-len") +
                               "' is not a sequence length (valid: 1.." + std::to_string(kMaxLen) +
                               ")");
    }
    opts.max_len = *l;
  }
  if (flags->Has("--seed")) {
    auto s = ParseUint(flags->Get("--seed"));
    if (!s) return BadInput(err, "fuzz: --seed '" + flags->Get("--seed") +
                                     "' is not a seed (valid: 0..18446744073709551615)");
    opts.seed = *s;
  } else {
    opts.seed = FreshSeed();
  }
  if (flags->Has("--replay")) {
    auto n = ParseUint(flags->Get("--replay"));
    if (!n) return BadInput(err, "fuzz: --replay '" + flags->Get("--replay") +
                                     "' is not a sequence number (valid: 0, 1, 2, ...)");
    if (!flags->Has("--seed")) return BadInput(err, "fuzz: --replay needs the --seed it came from");
    opts.replay = *n;
  }
  opts.out_dir = flags->Get("--out", ".");
  opts.settle_ns = kind == "model" ? 2'000'000 : 20'000'000;
  opts.backend_flags = "--backend " + kind + (kind == "model" ? " --profile " + spec.profile : "") +
                       (spec.device.empty() ? "" : " --device " + spec.device);

  // One backend up front: a bad profile or a missing device is bad input, not a failure.
  if (!make(spec, &error)) return BadInput(err, "fuzz: " + error);
  const BackendMaker maker = [&] {
    std::string ignored;
    return make(spec, &ignored);
  };

  if (opts.replay) {
    out << "# sequence " << *opts.replay << " of seed " << opts.seed << "\n"
        << reference::SequenceText(reference::RandomSequence(
               reference::SequenceSeed(opts.seed, *opts.replay), opts.max_len));
  } else {
    err << "fuzz: " << opts.backend_flags << " --seed " << opts.seed << " --max-len "
        << opts.max_len << " for " << opts.seconds << " s\n";
  }
  const FuzzStats stats = RunFuzzLoop(opts, maker, err);
  if (!stats.io_error.empty()) return BadInput(err, "fuzz: " + stats.io_error);

  out << "fuzz: " << stats.sequences << " sequences, " << stats.commands << " commands, "
      << stats.completions << " completions checked in " << stats.seconds << " s ("
      << static_cast<uint64_t>(stats.sequences / std::max(stats.seconds, 1e-9))
      << " sequences/s); " << stats.failures << " failures";
  if (stats.known > 0) out << " (" << stats.known << " of them known open bugs)";
  out << "\n";
  if (stats.failures == 0) return cli::kExitOk;
  out << "fuzz: first failure: " << stats.first_failure << "\n"
      << "fuzz: saved as " << opts.out_dir << "/fail-" << opts.seed << "-*.qps\n";
  return kExitFailures;
}

int RunFuzzCli(const std::vector<std::string>& args, std::istream& in, std::ostream& out,
               std::ostream& err) {
  return RunFuzzWith(args, in, out, err, MakeFuzzBackend);
}

}  // namespace qptwin::fuzz
