#include "tools/fuzz/differential_loop.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <mutex>
#include <regex>
#include <sstream>
#include <system_error>
#include <thread>
#include <vector>

#include "spec/differential/canonical.h"
#include "spec/scenario/parser.h"
#include "spec/scenario/runner.h"
#include "tools/cli/cli_io.h"

namespace qptwin::fuzz {
namespace {

using Clock = std::chrono::steady_clock;

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// The transcript of `text` on a fresh backend from `make`, or "" with *why.
// With `faults`, the backend's DeviceFaults() after the run (contract 8).
// `host_ns`: the host's time before each command (scenario::RunOptions::host_ns, contract 9).
std::string RunOn(const SideMaker& make, const scenario::Scenario& sc, std::string* why,
                  std::vector<std::string>* faults = nullptr, uint64_t host_ns = 0) {
  std::unique_ptr<Backend> backend = make(std::max(1, sc.device_lines));
  if (!backend) {
    *why = "the backend could not be created";
    return {};
  }
  // ComparableTranscript(Runner::Run(sc)) one step at a time: no RunResult is kept.
  scenario::RunOptions options;
  options.narrate = false;  // only the outcomes are compared
  options.keep_trace = false;  // nor is the trace: WR slots are reused, no state events kept
  options.host_ns = host_ns;
  scenario::Runner runner(backend.get());
  runner.Start(options);
  std::string transcript;
  transcript.reserve(sc.commands.size() * 48);
  scenario::Step step;
  for (const scenario::Command& c : sc.commands) {
    runner.Next(c, &step);
    differential::AppendComparableStep(step, &transcript);
  }
  if (faults != nullptr) *faults = backend->DeviceFaults();
  return transcript;
}

// The '\n's of `text` (memchr: a transcript is some KB of ~60-byte lines).
uint64_t CountLines(const std::string& text) {
  uint64_t n = 0;
  const char* p = text.data();
  const char* const end = p + text.size();
  while ((p = static_cast<const char*>(std::memchr(p, '\n', end - p))) != nullptr) {
    ++n;
    ++p;
  }
  return n;
}

std::string Commented(const std::string& text) {
  std::string out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out += "#   " + line + "\n";
  return out;
}

// One cluster per kind of first difference: numbers and QP names elided; two lines of the
// same kind (a query's attributes) name only the fields that differ.
std::string Cluster(const std::string& a, const std::string& b) {
  static const std::regex kLine("^L[0-9]+ ");
  static const std::regex kNumbers("=[0-9]+");
  static const std::regex kQp("qp=q[0-9]+");
  auto elide = [](const std::string& s) {
    return std::regex_replace(
        std::regex_replace(std::regex_replace(s, kLine, ""), kNumbers, "=N"), kQp, "qp=Q");
  };
  std::istringstream sa(a), sb(b);
  std::vector<std::string> ta, tb;
  for (std::string t; sa >> t;) ta.push_back(t);
  for (std::string t; sb >> t;) tb.push_back(t);
  if (ta.size() == tb.size() && ta.size() > 2 && ta[1] == tb[1] && ta[1] != "wc") {
    std::string key = ta[1] + ":";
    for (size_t i = 2; i < ta.size(); ++i) {
      if (ta[i] != tb[i]) key += " " + ta[i] + " vs " + tb[i];
    }
    return key;
  }
  return elide(a) + "  |  " + elide(b);
}

// Side b's re-runs (contract 6), the first `count` of them, as commented transcripts.
std::string CommentedReruns(const std::string& label, const std::vector<std::string>& reruns,
                            size_t count) {
  std::string out;
  for (size_t r = 0; r < count && r < reruns.size(); ++r) {
    out += "# ---- compared transcript on " + label + " (re-run " + std::to_string(r + 1) +
           ")\n" + Commented(reruns[r]);
  }
  return out;
}

// Writes a saved file into opts.out_dir (made if need be); false with stats->io_error.
bool SaveFile(const DiffOptions& opts, const std::string& path, const std::string& text,
              DiffStats* stats) {
  std::error_code ec;
  std::filesystem::create_directories(opts.out_dir, ec);
  std::string error;
  if (!cli::WriteOutputFile(path, text, std::cout, &error)) {
    stats->io_error = error;
    return false;
  }
  ++stats->saved;
  return true;
}

void PrintProgress(std::ostream& os, const DiffStats& s) {
  os << "fuzz --differential: " << std::fixed << std::setprecision(1) << s.seconds << " s  "
     << s.sequences << " sequences  " << std::setprecision(0)
     << (s.seconds > 0 ? s.sequences / s.seconds : 0) << " sequences/s  " << s.differences
     << " differences" << (s.reruns ? "  " + std::to_string(s.rerun_matched) + " matched on a re-run" : "")
     << (s.phase_runs ? "  " + std::to_string(s.phase_matched) + " at another tick phase" : "")
     << (s.host_matched ? "  " + std::to_string(s.host_matched) + " at a host time" : "")
     << (s.device_faults ? "  " + std::to_string(s.device_faults) + " would crash the device" : "")
     << "\n"
     << std::defaultfloat << std::flush;
}

// Contract 5: a thread that ends the process when one sequence runs past its limit. The
// loop arms it before a sequence's first side and disarms it after the second.
class HangWatch {
 public:
  HangWatch(const DiffOptions& opts) : opts_(opts), thread_([this] { Watch(); }) {}
  ~HangWatch() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  void Arm(uint64_t n, const std::string& side) {
    std::lock_guard<std::mutex> lock(mu_);
    armed_ = true;
    n_ = n;
    side_ = side;
    deadline_ = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                   std::chrono::duration<double>(opts_.sequence_seconds));
    // No notify: the watcher looks again within a second (a wake-up per sequence would cost
    // a context switch each on a run of thousands of sequences per second).
  }
  void Side(const std::string& side) {
    std::lock_guard<std::mutex> lock(mu_);
    side_ = side;
  }
  void Disarm() {
    std::lock_guard<std::mutex> lock(mu_);
    armed_ = false;
  }

 private:
  void Watch() {
    std::unique_lock<std::mutex> lock(mu_);
    while (!stop_) {
      const Clock::time_point until =
          armed_ ? std::min(deadline_, Clock::now() + std::chrono::seconds(1))
                 : Clock::now() + std::chrono::seconds(1);
      cv_.wait_until(lock, until);
      if (armed_ && !stop_ && Clock::now() >= deadline_) {
        std::fprintf(stderr,
                     "fuzz --differential: sequence %llu of seed %llu ran over %g s on %s "
                     "(a call that never returned): replay with qptwin fuzz --differential "
                     "%s --seed %llu --replay %llu\n",
                     static_cast<unsigned long long>(n_), static_cast<unsigned long long>(opts_.seed),
                     opts_.sequence_seconds, side_.c_str(), opts_.replay_flags.c_str(),
                     static_cast<unsigned long long>(opts_.seed), static_cast<unsigned long long>(n_));
        std::fflush(nullptr);
        std::_Exit(3);
      }
    }
  }

  const DiffOptions& opts_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false, armed_ = false;
  uint64_t n_ = 0;
  std::string side_;
  Clock::time_point deadline_;
  std::thread thread_;  // last: starts after the members it reads
};

// One sequence of the campaign, generated and parsed (contract 1).
struct Sequence {
  uint64_t n = 0;
  std::string text;
  scenario::Scenario sc;
  std::string why;  // why it cannot run (the generated text does not parse), else ""
};

// The campaign's k-th sequence (k = 0, 1, ...: this shard's sequences in order) into *s,
// whatever *s held before; false past the campaign's end.
bool MakeSequence(const DiffOptions& opts, uint64_t k, Sequence* s) {
  if (opts.replay && k > 0) return false;
  const uint64_t n = opts.replay ? *opts.replay : opts.shard_index + k * opts.shard_count;
  if (!opts.replay && opts.sequences && n >= *opts.sequences) return false;
  s->n = n;
  s->why.clear();
  s->text = differential::GenerateScenario(differential::SequenceSeed(opts.seed, n),
                                           opts.generator);
  scenario::ParseOptions parse;
  parse.keep_text = false;  // the runner does not narrate (RunOn)
  scenario::ParseError pe;
  if (!scenario::ParseScenario(s->text, &s->sc, &pe, parse)) {
    s->why = "the generated scenario does not parse: " + pe.ToString();
  }
  return true;
}

// Makes the sequences ahead of the loop on a thread of its own: generating and parsing are
// plain C++ (no SystemC, no backend), so on a second core they overlap with the runs, which
// stay on the loop's thread (the SystemC kernel's, model/sim/kernel.h).
//  1. Take(k) is MakeSequence(opts, k) whichever thread made it: sequences and their order
//     are those of contract 1, only the time each is made changes.
//  2. The loop never waits for the helper: a sequence not made yet when taken is made on
//     the loop's thread (a busy machine that does not schedule the helper costs no more
//     than no helper), and the helper's copy, if it was making it, is dropped.
//  3. The helper keeps at most kAhead sequences ready, and once there sleeps until half of
//     them are taken (a wake-up per kAhead / 2 sequences, not one each).
//  4. Take hands back the sequence taken before, and the helper makes a later one in it:
//     a sequence's memory (~100 commands of 1.1 KB) is reused by the thread that allocated
//     it instead of being freed across threads.
class SequenceMaker {
 public:
  static constexpr uint64_t kAhead = 64;

  explicit SequenceMaker(const DiffOptions& opts)
      : opts_(opts), thread_([this] { MakeAhead(); }) {}
  ~SequenceMaker() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    room_.notify_one();
    thread_.join();
  }
  // Takes are in order: k = 0, 1, 2, ...; `done` is the sequence taken before (or null).
  std::unique_ptr<Sequence> Take(uint64_t k, std::unique_ptr<Sequence> done) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      taken_ = k + 1;
      if (next_ == taken_ + kAhead / 2) room_.notify_one();
      auto it = ready_.find(k);
      if (it != ready_.end()) {
        std::unique_ptr<Sequence> s = std::move(it->second);
        ready_.erase(it);
        if (done) done_.push_back(std::move(done));
        return s;
      }
    }
    // Not made yet: made here, in the memory of the one run before when there is one.
    if (!done) done = std::make_unique<Sequence>();
    if (!MakeSequence(opts_, k, done.get())) return nullptr;
    return done;
  }

 private:
  void MakeAhead() {
    std::vector<std::unique_ptr<Sequence>> reusable;
    for (;;) {
      uint64_t k;
      {
        std::unique_lock<std::mutex> lock(mu_);
        for (auto& d : done_) reusable.push_back(std::move(d));
        done_.clear();
        if (next_ >= taken_ + kAhead) {
          room_.wait(lock, [this] { return stop_ || next_ <= taken_ + kAhead / 2; });
        }
        if (stop_) return;
        k = next_ = std::max(next_, taken_);
        ++next_;
      }
      std::unique_ptr<Sequence> s;
      if (reusable.empty()) {
        s = std::make_unique<Sequence>();
      } else {
        s = std::move(reusable.back());
        reusable.pop_back();
      }
      if (!MakeSequence(opts_, k, s.get())) return;  // the campaign's end
      std::lock_guard<std::mutex> lock(mu_);
      if (k >= taken_) {
        ready_.emplace(k, std::move(s));
      } else {
        reusable.push_back(std::move(s));  // the loop made it itself
      }
    }
  }

  const DiffOptions& opts_;
  std::mutex mu_;
  std::condition_variable room_;  // the helper may make more
  std::map<uint64_t, std::unique_ptr<Sequence>> ready_;  // made, not taken yet, by k
  std::vector<std::unique_ptr<Sequence>> done_;          // run, for the helper to reuse
  uint64_t taken_ = 0;  // the next k the loop takes
  uint64_t next_ = 0;   // the next k the helper makes
  bool stop_ = false;
  std::thread thread_;  // last: starts after the members it reads
};

}  // namespace

std::string DifferencePath(const DiffOptions& opts, uint64_t n, const std::string& suffix) {
  return (std::filesystem::path(opts.out_dir) /
          (std::to_string(opts.seed) + "-" + std::to_string(n) + suffix + ".qps"))
      .string();
}

namespace {

// Side a as it may run again after a difference (contracts 7, 9 and 10).
struct Variant {
  double phase = 0;
  uint64_t host_ns = 0;
  std::string name;  // "tick phase 3/8", "host time 1000 us a command, tick phase 0/8"
  std::string retry_skip;  // contract 10: "stalled[:D]", "beside", "joins:K" ("": untimed)
  int contract() const { return !retry_skip.empty() ? 10 : host_ns ? 9 : 7; }
  const char* suffix() const {
    return !retry_skip.empty() ? "-skip" : host_ns ? "-host" : "-phase";
  }
};

// RetrySkip::kJoins tried up to this wake-up: a later one than the last inside the loop
// gives `beside`'s transcript, and a ~0.9 s loop holds 15 of the generator's 60 ms advances
// (shorter waits fit more, but a sequence has at most 24 steps and an epilogue).
constexpr int kMaxSkipJoins = 16;

std::vector<Variant> Variants(const DiffOptions& opts) {
  std::vector<Variant> out;
  const int phases = std::max(1, opts.tick_phases);
  auto phase_name = [phases](int k) { return std::to_string(k) + "/" + std::to_string(phases); };
  for (int k = 1; k < phases; ++k) {
    out.push_back({static_cast<double>(k) / phases, 0, "tick phase " + phase_name(k), ""});
  }
  for (uint64_t host_us : opts.host_us) {
    if (host_us == 0) continue;
    for (int k = 0; k < phases; ++k) {
      out.push_back({static_cast<double>(k) / phases, host_us * 1000,
                     "host time " + std::to_string(host_us) + " us a command, tick phase " +
                         phase_name(k),
                     ""});
    }
  }
  if (!opts.retry_skips) return out;
  // The loop on the program's CPU, the program running again at once or up to 11 ms after
  // it ends (why it is late is not measured; 2 ms apart, as close as a sequence's shortest
  // advance: seed 42446856514 sequence 1093 and the probe
  // tests/differential/probes/skip-join.qps gave rxe's transcripts of both); beside it;
  // beside it until the program's K-th wake-up, then on its CPU (RetrySkip::kJoins).
  std::vector<std::string> hosts{"stalled"};
  for (int late_us = 1000; late_us <= 11000; late_us += 2000) {
    hosts.push_back("stalled:" + std::to_string(late_us));
  }
  hosts.push_back("beside");
  for (int joins = 1; joins <= kMaxSkipJoins; ++joins) {
    hosts.push_back("joins:" + std::to_string(joins));
  }
  for (const std::string& skip : hosts) {
    for (int k = 0; k < phases; ++k) {
      out.push_back({static_cast<double>(k) / phases, 0,
                     "retry skip loop " + skip + ", tick phase " + phase_name(k), skip});
    }
  }
  return out;
}

}  // namespace

DiffStats RunDifferentialLoop(const DiffOptions& opts, const SideMaker& a, const SideMaker& b,
                              std::ostream& progress, const PhasedMaker* a_phased) {
  DiffStats stats;
  HangWatch watch(opts);
  const Clock::time_point start = Clock::now();
  double next_report = 1.0;
  SequenceMaker maker(opts);
  const std::vector<Variant> variants = Variants(opts);
  std::unique_ptr<Sequence> next;
  for (uint64_t k = 0;; ++k) {
    next = maker.Take(k, std::move(next));
    if (!next) break;
    const uint64_t n = next->n;
    const std::string& text = next->text;
    const scenario::Scenario& sc = next->sc;
    std::string ta, tb, why = next->why;
    std::vector<std::string> faults;
    if (why.empty()) {
      watch.Arm(n, opts.label_a);
      ta = RunOn(a, sc, &why, &faults);
      watch.Side(opts.label_b);
      if (!faults.empty()) ++stats.device_faults;
      if (!b || (!faults.empty() && opts.spare_b)) {
        tb = ta;  // side a alone (`--against none`), or b spared (contract 8): not compared
      } else if (why.empty()) {
        tb = RunOn(b, sc, &why, nullptr, opts.b_host_ns);
      }
      watch.Disarm();
    }
    ++stats.sequences;
    stats.lines += CountLines(ta);
    if (!faults.empty() && b && opts.spare_b && why.empty()) {
      const std::string path = DifferencePath(opts, n, "-fault");
      if (stats.saved < kMaxSaved) {
        std::ostringstream f;
        f << text << "# ---- qptwin fuzz --differential: sequence " << n << " of seed "
          << opts.seed << " was not run on " << opts.label_b << ": " << opts.label_a
          << " says it would crash it (contract 8):\n";
        for (const std::string& fault : faults) f << "#   " << fault << "\n";
        f << "# ---- compared transcript on " << opts.label_a << "\n" << Commented(ta);
        if (!SaveFile(opts, path, f.str(), &stats)) break;
        progress << "fuzz --differential: sequence " << n << ": not run on " << opts.label_b
                 << " (" << faults.front() << ") -> " << path << "\n";
      }
    }
    std::optional<differential::Difference> d;
    // Equal texts have no differing line (the usual case, the model against itself).
    if (why.empty() && ta != tb) d = differential::FirstDifference(ta, tb);
    // Contracts 7, 9 and 10: side a at its other tick phases, then at each host time at every
    // phase, then with each host of a retry skip loop at every phase; phased[i] is
    // variants[i]'s transcript.
    std::vector<std::string> phased;
    if (d && a_phased != nullptr && !opts.replay) {
      for (const Variant& v : variants) {
        std::string pwhy;
        const double phase = v.phase;
        const std::string skip = v.retry_skip;
        const SideMaker at = [a_phased, phase, skip](int devices) {
          return (*a_phased)(devices, phase, skip);
        };
        watch.Arm(n, opts.label_a + " (" + v.name + ")");
        phased.push_back(RunOn(at, sc, &pwhy, nullptr, v.host_ns));
        watch.Disarm();
        ++stats.phase_runs;
        if (!pwhy.empty()) {
          phased.pop_back();
          break;
        }
      }
    }
    auto phase_of = [&phased](const std::string& t) {
      for (size_t i = 0; i < phased.size(); ++i) {
        if (phased[i] == t) return static_cast<int>(i) + 1;
      }
      return 0;
    };
    int phase_match = d ? phase_of(tb) : 0;  // 0: none; else 1 + the variant b's transcript is
    size_t phase_match_run = 0;              // b's run that gave it: 0 first, r re-run r
    // Contract 6: side b again, until it gives side a's transcript (or, contract 7, one of
    // side a's at another phase) or the re-runs run out.
    std::vector<std::string> reruns;
    bool rerun_matched = false;
    if (d && !opts.replay && phase_match == 0) {
      for (int r = 0; r < opts.reruns && !rerun_matched; ++r) {
        std::string rwhy;
        watch.Arm(n, opts.label_b + " (re-run " + std::to_string(r + 1) + ")");
        reruns.push_back(RunOn(b, sc, &rwhy, nullptr, opts.b_host_ns));
        watch.Disarm();
        ++stats.reruns;
        if (!rwhy.empty()) break;
        rerun_matched = reruns.back() == ta;
        if (!rerun_matched && (phase_match = phase_of(reruns.back())) != 0) {
          phase_match_run = reruns.size();
          break;
        }
      }
    }
    if (phase_match != 0) {
      const Variant& v = variants[phase_match - 1];
      ++(v.contract() == 10 ? stats.skip_matched
         : v.contract() == 9 ? stats.host_matched
                             : stats.phase_matched);
      const std::string path = DifferencePath(opts, n, v.suffix());
      if (stats.saved < kMaxSaved) {
        const std::string which =
            phase_match_run == 0 ? "first run" : "re-run " + std::to_string(phase_match_run);
        std::ostringstream f;
        f << text << "# ---- qptwin fuzz --differential: sequence " << n << " of seed "
          << opts.seed << ": " << opts.label_b << "'s transcript (" << which << ") is "
          << opts.label_a << "'s at " << v.name << " (contract " << v.contract()
          << "; replay: qptwin diff " << opts.replay_flags << " --tick-phase " << v.phase
          << (v.host_ns ? " --host-us " + std::to_string(v.host_ns / 1000) : "")
          << (v.retry_skip.empty() ? "" : " --retry-skip " + v.retry_skip)
          << " THIS_FILE)\n"
          << "# first run's first difference: line " << d->line << ": " << opts.label_a
          << " '" << d->a << "' vs " << opts.label_b << " '" << d->b << "'\n"
          << "# ---- compared transcript on " << opts.label_a << "\n"
          << Commented(ta) << "# ---- compared transcript on " << opts.label_a << " at "
          << v.name << "\n"
          << Commented(phased[phase_match - 1]) << "# ---- compared transcript on "
          << opts.label_b << " (first run)\n" << Commented(tb)
          << CommentedReruns(opts.label_b, reruns, reruns.size());
        if (!SaveFile(opts, path, f.str(), &stats)) break;
        progress << "fuzz --differential: sequence " << n << ": " << opts.label_b
                 << "'s transcript is " << opts.label_a << "'s at " << v.name << " -> " << path
                 << "\n";
      }
      d.reset();
    }
    if (rerun_matched) {
      ++stats.rerun_matched;
      if (stats.saved < kMaxSaved) {
        std::ostringstream f;
        f << text << "# ---- qptwin fuzz --differential: sequence " << n << " of seed "
          << opts.seed << ": " << opts.label_b << " gave " << reruns.size() + 1
          << " transcripts; its last is " << opts.label_a << "'s (contract 6)\n"
          << "# first run's first difference: line " << d->line << ": " << opts.label_a
          << " '" << d->a << "' vs " << opts.label_b << " '" << d->b << "'\n"
          << "# ---- compared transcript on " << opts.label_a << "\n"
          << Commented(ta) << "# ---- compared transcript on " << opts.label_b
          << " (first run)\n" << Commented(tb)
          << CommentedReruns(opts.label_b, reruns, reruns.size() - 1);  // the last is ta
        if (!SaveFile(opts, DifferencePath(opts, n, "-rerun"), f.str(), &stats)) break;
        progress << "fuzz --differential: sequence " << n << ": " << opts.label_b
                 << " gave " << opts.label_a << "'s transcript on re-run " << reruns.size()
                 << " -> " << DifferencePath(opts, n, "-rerun") << "\n";
      }
      d.reset();
    }
    if (opts.replay) {
      stats.replay_text = "# sequence " + std::to_string(n) + " of seed " +
                          std::to_string(opts.seed) + "\n" + text + "# ---- on " + opts.label_a +
                          "\n" + Commented(ta) + "# ---- on " + opts.label_b + "\n" +
                          Commented(tb);
    }
    if (d || !why.empty()) {
      const std::string summary =
          why.empty() ? "line " + std::to_string(d->line) + ": " + opts.label_a + " '" + d->a +
                            "' vs " + opts.label_b + " '" + d->b + "'"
                      : why;
      if (stats.differences++ == 0) stats.first = summary;
      ++stats.clusters[why.empty() ? Cluster(d->a, d->b) : why];
      if (stats.saved < kMaxSaved) {
        // The scenario first, unchanged, so that its transcripts' L<n> are the file's lines.
        std::ostringstream f;
        f << text << "# ---- qptwin fuzz --differential: sequence " << n << " of seed "
          << opts.seed << " differs\n# first difference at compared " << summary << "\n"
          << "# replay: qptwin diff " << opts.replay_flags << " THIS_FILE\n"
          << "#     or: qptwin fuzz --differential " << opts.replay_flags << " --seed "
          << opts.seed << " --replay " << n << "\n"
          << "# ---- compared transcript on " << opts.label_a << "\n"
          << Commented(ta) << "# ---- compared transcript on " << opts.label_b << "\n"
          << Commented(tb) << CommentedReruns(opts.label_b, reruns, reruns.size());
        if (!SaveFile(opts, DifferencePath(opts, n), f.str(), &stats)) break;
        progress << "fuzz --differential: sequence " << n << ": " << summary << " -> "
                 << DifferencePath(opts, n) << "\n";
      }
    }
    stats.seconds = SecondsSince(start);
    if (opts.replay) break;
    if (stats.seconds >= next_report) {
      PrintProgress(progress, stats);
      next_report = stats.seconds + 1.0;
    }
    if (stats.seconds >= opts.seconds) break;
  }
  stats.seconds = SecondsSince(start);
  return stats;
}

}  // namespace qptwin::fuzz
