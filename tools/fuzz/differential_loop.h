// The loop behind `qptwin fuzz --differential`: whole-surface .qps sequences
// (spec/differential/generator.h) run on two backends (the model with profile rxe, and a
// real device or another model), whose canonical transcripts are compared line by line in
// their compared form (spec/differential/canonical.h).
//
// Contract:
//  1. Sequence n of a campaign seeded S is GenerateScenario(SequenceSeed(S, n)); a shard
//     I/N runs the n with n % N == I, so N shards run every sequence once, unchanged, on any
//     machines (Bazel's TEST_SHARD_INDEX/TEST_TOTAL_SHARDS map onto --shard).
//     A helper thread generates and parses sequences ahead; the backends are only called
//     from the calling thread (the SystemC kernel's).
//  2. Each sequence gets fresh backends from the makers (their clocks at 0, as many devices
//     as the scenario has `device` lines): an outcome never depends on an earlier sequence.
//  3. Each difference is counted; the first kMaxSaved are written to
//     out_dir/<S>-<n>.qps: a header of `#` comments (the first differing line, how to
//     replay), the scenario, and both compared transcripts as `#` comments. The file replays
//     with `qptwin diff --backend model --profile rxe --against hw FILE`.
//  4. Progress goes to `progress` about once a second, with the saved files' names.
//  6. A device may itself be nondeterministic (rxe's timers and tasks race the scenario's
//     waits in an emulated VM). With `reruns` R > 0, a sequence whose transcripts differ runs
//     again on side b, up to R times; if one of those runs gives side a's transcript line
//     for line, side a is one of b's own outcomes: the sequence counts as `rerun_matched`
//     (reported, saved as <S>-<n>-rerun.qps with every transcript b gave), not as a
//     difference. Nothing is sorted away or dropped: a difference is a transcript of a that
//     b never gave. Side a (the model) is deterministic and never runs again.
//  7. A software device's timers run on its host kernel's tick (rxe: jiffies of 4 ms), and a
//     program starts at an arbitrary point of that tick: where the ticks fall is not a
//     property of the device (model/model_backend.h ModelOptions::tick_phase). With
//     `tick_phases` P > 1 and a maker of side a at a phase, a sequence whose transcripts
//     differ runs on side a again at phases k/P (k = 1 .. P-1; the model, so cheap) before
//     side b re-runs; if a transcript side b gives (its first run or a re-run) equals one of
//     them line for line, the sequence counts as `phase_matched` (reported, saved as
//     <S>-<n>-phase.qps with side a's transcripts at phase 0 and at the matching phase and
//     every one b gave), not as a difference. Side b re-runs only when its first transcript
//     matches none of them.
//  8. A real device may crash on what the model answers (rxe 6.1 oopses on some
//     invalidates; Backend::DeviceFaults, named by the model's profile). A sequence whose
//     side a reports device faults counts as `device_faults`; with `spare_b` (side b is a
//     real device) it is not run on side b at all: it is saved as <S>-<n>-fault.qps with the
//     faults and side a's transcript, and is neither a difference nor a match. The faults
//     are the model's word: a sequence on which the model already differs from the device
//     before the fault may be spared wrongly (or crash the device), and the count says how
//     often a campaign spared one.
//  9. A host spends time between a program's verb calls: its own code, and each verb's way
//     into the kernel (rxe in an emulated VM: 0.2-3 ms a command, measured), while the
//     device's timers run; the model's commands take none. That time is the host's, not a
//     property of the device (scenario::RunOptions::host_ns, `qptwin run --host-us`). With
//     `host_us` H and a maker of side a at a phase, a sequence that still differs after the
//     tick phases of contract 7 runs on side a at each host time of H at every phase
//     (P * |H| runs of the model); a transcript side b gives that equals one of them
//     counts as `host_matched` (reported, saved as <S>-<n>-host.qps with the host time and
//     phase to replay it), not as a difference.
// 10. A software device's retry from behind a WQE's first PSN steps through about 2^24
//     packets (rxe: ~0.9 s in tools/rxe-vm); whether the program waits for that loop (it
//     runs on the program's CPU), goes on beside it (another CPU), or outlasts it is the
//     host's scheduling (model/model_backend.h RetrySkip; measured: all three on one
//     program; and a program beside the loop that lands on its CPU at a later wake-up).
//     With `retry_skips` and a maker of side a, a sequence that still differs after
//     contracts 7 and 9 runs on side a with the loop `stalled` (the program running again
//     0, 1, 3, 5, 7, 9 or 11 ms after its end: `stalled:D`), `beside`, and `joins:K`
//     (beside until the program's K-th wake-up, K = 1..16), at every tick phase; a
//     transcript side b gives that equals one of them counts as
//     `skip_matched` (reported, saved as <S>-<n>-skip.qps with the flags to replay it), not
//     as a difference. A sequence without such a retry gives the same transcript there.
//  5. A sequence that runs longer than sequence_seconds (a call into a backend that never
//     returns) ends the process with exit code 3 and one stderr line naming the sequence,
//     the side it was on and its replay command: a hang is reported, never waited out.
#pragma once

#include <cstdint>
#include <functional>
#include <iosfwd>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "spec/backend.h"
#include "spec/differential/generator.h"

namespace qptwin::fuzz {

inline constexpr uint64_t kMaxSaved = 100;

struct DiffOptions {
  uint64_t seed = 1;
  double seconds = 10;                 // wall clock; at least one sequence runs
  std::optional<uint64_t> sequences;   // the campaign's size (all shards together)
  uint64_t shard_index = 0, shard_count = 1;
  std::optional<uint64_t> replay;      // run only sequence *replay
  std::string out_dir = ".";
  differential::GeneratorOptions generator;
  std::string label_a = "model/rxe", label_b = "model/rxe";
  std::string replay_flags;            // "--backend model --profile rxe --against hw"
  // Contract 5: wall seconds one sequence (both sides) may take before it counts as a hang.
  double sequence_seconds = 120;
  // Contract 6: side b's runs again after a difference (0: none).
  int reruns = 0;
  // Contract 7: side a's tick phases tried after a difference (0 or 1: none).
  int tick_phases = 0;
  // Contract 9: host times (microseconds before each command) side a tries at every tick
  // phase after a difference (none: empty).
  std::vector<uint64_t> host_us;
  // Contract 10: side a with each host of a retry's skip loop, at every tick phase.
  bool retry_skips = false;
  // Side b's host time before each command: a model as side b standing in for a slow host
  // (the tests of contract 9). A real device's host spends its own: 0.
  uint64_t b_host_ns = 0;
  // Contract 8: a sequence side a says would crash the device is not run on side b.
  bool spare_b = false;
};

struct DiffStats {
  uint64_t sequences = 0;
  uint64_t lines = 0;        // compared transcript lines (side a)
  uint64_t differences = 0;
  uint64_t saved = 0;
  uint64_t rerun_matched = 0;  // contract 6: a re-run of side b gave side a's transcript
  uint64_t reruns = 0;         // side b's extra runs
  uint64_t phase_matched = 0;  // contract 7: side a at another tick phase gave b's transcript
  uint64_t host_matched = 0;   // contract 9: side a at a host time gave b's transcript
  uint64_t skip_matched = 0;   // contract 10: side a with a retry's skip loop timed gave it
  uint64_t phase_runs = 0;     // side a's runs at other tick phases and host times
  uint64_t device_faults = 0;  // contract 8: side a reported faults (spared when spare_b)
  double seconds = 0;
  std::string first;         // the first difference's summary
  std::string io_error;      // a file that could not be written
  std::map<std::string, uint64_t> clusters;  // first differing lines, numbers elided -> count
  std::string replay_text;   // --replay: the scenario and both transcripts
};

// Makes a backend with `devices` devices; null when it cannot. An empty side b: side a runs
// alone (its transcripts are made, nothing is compared; `--against none`, its rate).
using SideMaker = std::function<std::unique_ptr<Backend>(int devices)>;
// Makes side a's backend with its kernel's ticks at `tick_phase` (contract 7) and the host
// `retry_skip` ("" or "untimed", "stalled[:D]", "beside", "joins:K": contract 10).
using PhasedMaker = std::function<std::unique_ptr<Backend>(int devices, double tick_phase,
                                                           const std::string& retry_skip)>;

DiffStats RunDifferentialLoop(const DiffOptions& opts, const SideMaker& a, const SideMaker& b,
                              std::ostream& progress, const PhasedMaker* a_phased = nullptr);

// The file sequence `n` is saved to (`suffix` "-rerun": matched on a re-run, contract 6).
std::string DifferencePath(const DiffOptions& opts, uint64_t n, const std::string& suffix = "");

}  // namespace qptwin::fuzz
