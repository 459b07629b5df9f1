// qptwin fuzz --differential on the model: the same sequences twice give the same compared
// transcripts (the model is deterministic), another profile gives saved, replayable
// differences, and bad input is one line with exit 2.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "spec/scenario/parser.h"
#include "model/model_backend.h"
#include "tools/fuzz/differential_loop.h"
#include "tools/fuzz/fuzz_command.h"

namespace qptwin::fuzz {
namespace {

struct Result {
  int code;
  std::string out, err;
};

Result Fuzz(const std::vector<std::string>& args) {
  std::istringstream in;
  std::ostringstream out, err;
  const int code = RunFuzzCli(args, in, out, err);
  return {code, out.str(), err.str()};
}

std::string TempDir(const std::string& name) {
  const std::string dir = ::testing::TempDir() + "/differential_test_" + name;
  std::filesystem::remove_all(dir);
  return dir;
}

// The model with `profile` and `devices` devices, its kernel's ticks at `phase`.
std::unique_ptr<Backend> ModelWith(const std::string& profile, int devices, double phase = 0,
                                   const std::string& retry_skip = "") {
  model::ModelOptions o;
  o.profile = profile;
  o.devices = devices;
  o.tick_phase = phase;
  (void)model::ParseRetrySkip(retry_skip, &o);
  return model::MakeModelBackend(o);
}

// Profile rxe at a tick phase and a host during a retry's skip loop (contracts 7, 9, 10).
std::unique_ptr<Backend> RxeAtPhase(int devices, double phase, const std::string& skip = "") {
  return ModelWith("rxe", devices, phase, skip);
}

TEST(Differential, ModelAgainstItselfIsDeterministic) {
  const std::string dir = TempDir("self");
  const Result r = Fuzz({"--differential", "--seed", "5", "--sequences", "400", "--shard", "0/1",
                         "--out", dir});
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find(": 400 sequences (seed 5, shard 0/1)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(" 0 differences"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("sequences/s"), std::string::npos) << r.out;
  EXPECT_FALSE(std::filesystem::exists(dir)) << "nothing saved without a difference";
}

// Without --shard, Bazel's variables choose the shard, and the status file says it shards.
TEST(Differential, BazelShardVariablesChooseTheShard) {
  const std::string status = ::testing::TempDir() + "/differential_test_shard_status";
  std::filesystem::remove(status);
  const char* saved[3] = {std::getenv("TEST_SHARD_INDEX"), std::getenv("TEST_TOTAL_SHARDS"),
                          std::getenv("TEST_SHARD_STATUS_FILE")};
  const std::string keep[3] = {saved[0] ? saved[0] : "", saved[1] ? saved[1] : "",
                               saved[2] ? saved[2] : ""};
  setenv("TEST_SHARD_INDEX", "1", 1);
  setenv("TEST_TOTAL_SHARDS", "4", 1);
  setenv("TEST_SHARD_STATUS_FILE", status.c_str(), 1);
  const Result r =
      Fuzz({"--differential", "--seed", "5", "--sequences", "10", "--out", TempDir("env")});
  const char* names[3] = {"TEST_SHARD_INDEX", "TEST_TOTAL_SHARDS", "TEST_SHARD_STATUS_FILE"};
  for (int i = 0; i < 3; ++i) {
    if (saved[i]) setenv(names[i], keep[i].c_str(), 1); else unsetenv(names[i]);
  }
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find(": 3 sequences (seed 5, shard 1/4)"), std::string::npos) << r.out;
  EXPECT_TRUE(std::filesystem::exists(status));
}

TEST(Differential, ShardsSplitTheCampaign) {
  const Result a = Fuzz({"--differential", "--seed", "5", "--sequences", "10", "--shard", "0/3",
                         "--out", TempDir("shard")});
  EXPECT_EQ(a.code, 0) << a.err;
  EXPECT_NE(a.out.find(": 4 sequences (seed 5, shard 0/3)"), std::string::npos) << a.out;
  const Result b = Fuzz({"--differential", "--seed", "5", "--sequences", "10", "--shard", "2/3",
                         "--out", TempDir("shard")});
  EXPECT_NE(b.out.find(": 3 sequences (seed 5, shard 2/3)"), std::string::npos) << b.out;
}

// IBTA and rxe differ (spec/device_description.h): the differences are found and saved as
// .qps files that parse, say how to replay, and carry both transcripts.
TEST(Differential, AnotherProfileDiffersAndIsSaved) {
  const std::string dir = TempDir("ibta");
  const Result r = Fuzz({"--differential", "--against", "model:ibta", "--seed", "9",
                         "--sequences", "200", "--shard", "0/1", "--out", dir});
  ASSERT_EQ(r.code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("saved as " + dir + "/9-*.qps"), std::string::npos) << r.out;
  size_t files = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    ++files;
    std::ifstream f(e.path());
    std::stringstream text;
    text << f.rdbuf();
    const std::string s = text.str();
    EXPECT_NE(s.find("# replay: qptwin diff --backend model --profile rxe --against model:ibta"),
              std::string::npos);
    EXPECT_NE(s.find("# ---- compared transcript on model/rxe"), std::string::npos);
    EXPECT_NE(s.find("# ---- compared transcript on model/ibta"), std::string::npos);
    scenario::Scenario sc;
    scenario::ParseError pe;
    EXPECT_TRUE(scenario::ParseScenario(s, &sc, &pe)) << e.path() << ": " << pe.ToString();
  }
  EXPECT_GE(files, 1u);
  EXPECT_LE(files, kMaxSaved);
}

// Contract 6: a side b that gives side a's transcript on a re-run is nondeterministic
// there, not different. Side b here is the ibta profile on its first run of each sequence
// and rxe (side a's profile) on every re-run.
TEST(Differential, AReRunThatGivesSideAsTranscriptIsNotADifference) {
  auto make = [](const std::string& profile, int devices) { return ModelWith(profile, devices); };
  const SideMaker a = [&make](int devices) { return make("rxe", devices); };
  int calls = 0;
  uint64_t last_sequence_calls = 0;
  const SideMaker flip = [&](int devices) {
    return make(calls++ == 0 ? "ibta" : "rxe", devices);
  };
  DiffOptions opts;
  opts.seed = 9;
  opts.sequences = 60;
  opts.out_dir = TempDir("rerun_none");
  opts.label_b = "model/flip";
  std::ostringstream progress;
  // Without re-runs: the sequences where ibta differs are differences.
  uint64_t differing = 0;
  for (uint64_t n = 0; n < 60; ++n) {
    calls = 0;
    opts.replay = n;
    differing += RunDifferentialLoop(opts, a, flip, progress).differences;
  }
  ASSERT_GT(differing, 0u) << "seed 9 must have sequences where ibta and rxe differ";
  // With one re-run each becomes a re-run match, saved apart from the differences.
  opts.replay.reset();
  opts.reruns = 1;
  opts.out_dir = TempDir("rerun");
  uint64_t matched = 0, differences = 0;
  for (uint64_t n = 0; n < 60; ++n) {
    calls = 0;
    DiffOptions one = opts;
    one.sequences = n + 1;
    one.shard_index = n;
    one.shard_count = 1000;  // exactly sequence n
    const DiffStats s = RunDifferentialLoop(one, a, flip, progress);
    matched += s.rerun_matched;
    differences += s.differences;
    last_sequence_calls = calls;
  }
  EXPECT_EQ(differences, 0u) << progress.str();
  EXPECT_EQ(matched, differing);
  EXPECT_LE(last_sequence_calls, 2u) << "one run and at most one re-run";
  size_t files = 0;
  for (const auto& e : std::filesystem::directory_iterator(opts.out_dir)) {
    ++files;
    EXPECT_NE(e.path().string().find("-rerun.qps"), std::string::npos) << e.path();
  }
  EXPECT_EQ(files, matched);
}


// The first `sequences` of seed 9, with time for all of them.
DiffOptions SeedNine(uint64_t sequences) {
  DiffOptions opts;
  opts.seed = 9;
  opts.sequences = sequences;
  opts.seconds = 600;
  return opts;
}

// Contract 7: where the model's kernel ticks fall is not the device's to say. Side b here is
// the model with its ticks half a tick later: every sequence where that changes the outcome
// differs from side a at phase 0, and is side a's own transcript at phase 1/2.
TEST(Differential, SideBsTranscriptAtAnotherTickPhaseOfSideAIsNotADifference) {
  const PhasedMaker phased = RxeAtPhase;
  const SideMaker a = [](int devices) { return RxeAtPhase(devices, 0); };
  const SideMaker b = [](int devices) { return RxeAtPhase(devices, 0.5); };
  DiffOptions opts = SeedNine(400);
  opts.label_b = "model/rxe-later";
  opts.out_dir = TempDir("phase_none");
  std::ostringstream progress;
  const DiffStats without = RunDifferentialLoop(opts, a, b, progress);
  ASSERT_GT(without.differences, 0u) << "seed 9 must have sequences whose outcome the phase decides";
  EXPECT_EQ(without.phase_runs, 0u) << "no phased maker: no phases tried";
  opts.tick_phases = 2;
  opts.reruns = 2;
  opts.out_dir = TempDir("phase");
  const DiffStats with = RunDifferentialLoop(opts, a, b, progress, &phased);
  EXPECT_EQ(with.differences, 0u) << progress.str();
  EXPECT_EQ(with.phase_matched, without.differences);
  EXPECT_EQ(with.phase_runs, without.differences) << "one other phase per differing sequence";
  EXPECT_EQ(with.reruns, 0u) << "side b's first transcript matched: no re-run";
  size_t files = 0;
  for (const auto& e : std::filesystem::directory_iterator(opts.out_dir)) {
    ++files;
    EXPECT_NE(e.path().string().find("-phase.qps"), std::string::npos) << e.path();
    std::ifstream f(e.path());
    std::stringstream text;
    text << f.rdbuf();
    EXPECT_NE(text.str().find("at tick phase 1/2"), std::string::npos) << e.path();
  }
  EXPECT_EQ(files, std::min<uint64_t>(with.phase_matched, kMaxSaved));
}

// Contract 9: a host that spends a millisecond before each command gives, where that
// decides a race with the device's timers, the model's transcript at that host time. Side b
// here is the model standing in for such a host.
TEST(Differential, SideBsTranscriptAtAHostTimeOfSideAIsNotADifference) {
  const PhasedMaker phased = RxeAtPhase;
  const SideMaker a = [](int devices) { return RxeAtPhase(devices, 0); };
  DiffOptions opts = SeedNine(2000);
  opts.label_b = "model/rxe-slow-host";
  opts.b_host_ns = 2'000'000;
  opts.tick_phases = 2;
  opts.out_dir = TempDir("host_none");
  std::ostringstream progress;
  const DiffStats without = RunDifferentialLoop(opts, a, a, progress, &phased);
  ASSERT_GT(without.differences, 0u) << "seed 9 must have sequences a slow host decides";
  EXPECT_EQ(without.host_matched, 0u) << "no host times: none tried";
  opts.host_us = {1000, 2000};
  opts.out_dir = TempDir("host");
  const DiffStats with = RunDifferentialLoop(opts, a, a, progress, &phased);
  EXPECT_EQ(with.differences, 0u) << progress.str();
  EXPECT_EQ(with.host_matched + with.phase_matched - without.phase_matched, without.differences);
  EXPECT_GT(with.host_matched, 0u);
  std::cout << without.differences << " of 2000 differ at 2 ms a command; "
            << with.host_matched << " at a host time, " << with.phase_matched
            << " at another tick phase\n";
  size_t files = 0;
  for (const auto& e : std::filesystem::directory_iterator(opts.out_dir)) {
    if (e.path().string().find("-host.qps") == std::string::npos) continue;
    ++files;
    std::ifstream f(e.path());
    std::stringstream text;
    text << f.rdbuf();
    EXPECT_NE(text.str().find("'s at host time "), std::string::npos) << e.path();
    EXPECT_NE(text.str().find(" --host-us "), std::string::npos) << e.path();
  }
  EXPECT_EQ(files, std::min<uint64_t>(with.host_matched, kMaxSaved));
}

// Contract 10: rxe's retry from behind a WQE's first PSN steps through ~2^24 packets, and
// whether the program waits for that loop, goes on beside it or outlasts it is the host's
// (model::RetrySkip; all three measured on one program). Side b here is the model with the
// loop beside the program: each sequence it decides is side a's transcript with it.
TEST(Differential, SideBsTranscriptWithARetrySkipLoopOfSideAIsNotADifference) {
  const PhasedMaker phased = RxeAtPhase;
  const SideMaker a = [](int devices) { return RxeAtPhase(devices, 0); };
  const SideMaker b = [](int devices) { return RxeAtPhase(devices, 0, "beside"); };
  // Seed 332030260451's sequence 1301 is CI's difference of stop 29 (docs/differences.md
  // row 127); seed 9's first 4,000 sequences have no such retry.
  DiffOptions opts = SeedNine(1302);
  opts.seed = 332030260451;
  opts.label_b = "model/rxe-loop-beside";
  opts.out_dir = TempDir("skip_none");
  std::ostringstream progress;
  const DiffStats without = RunDifferentialLoop(opts, a, b, progress, &phased);
  ASSERT_GT(without.differences, 0u) << "sequence 1301 must be one the loop decides";
  EXPECT_EQ(without.skip_matched, 0u) << "retry_skips off: none tried";
  opts.retry_skips = true;
  opts.out_dir = TempDir("skip");
  const DiffStats with = RunDifferentialLoop(opts, a, b, progress, &phased);
  EXPECT_EQ(with.differences, 0u) << progress.str();
  EXPECT_EQ(with.skip_matched, without.differences);
  std::cout << without.differences << " of 1302 differ with the loop beside the program\n";
  size_t files = 0;
  for (const auto& e : std::filesystem::directory_iterator(opts.out_dir)) {
    ++files;
    EXPECT_NE(e.path().string().find("-skip.qps"), std::string::npos) << e.path();
    std::ifstream f(e.path());
    std::stringstream text;
    text << f.rdbuf();
    EXPECT_NE(text.str().find(" --retry-skip beside"), std::string::npos) << e.path();
  }
  EXPECT_EQ(files, std::min<uint64_t>(with.skip_matched, kMaxSaved));
}

// Contract 8: seed 20261230 sequence 2135 sends a SEND_WITH_INV to an unbound type 2 window,
// which panics rxe 6.1 (tests/differential/found/20261230-2135-rxe-panic.qps). The model with
// profile rxe says so, and a real device as side b is spared it; a model as side b is not.
TEST(Differential, ASequenceTheModelSaysWouldCrashTheDeviceIsNotRunOnIt) {
  auto make = [](const std::string& profile, int devices) { return ModelWith(profile, devices); };
  const SideMaker a = [&make](int devices) { return make("rxe", devices); };
  int b_runs = 0;
  const SideMaker b = [&](int devices) {
    ++b_runs;
    return make("rxe", devices);
  };
  DiffOptions opts;
  opts.seed = 20261230;
  opts.sequences = 2136;
  opts.shard_index = 2135;
  opts.shard_count = 100000;  // exactly sequence 2135
  opts.label_b = "hw";
  opts.spare_b = true;
  opts.out_dir = TempDir("fault");
  std::ostringstream progress;
  const DiffStats spared = RunDifferentialLoop(opts, a, b, progress);
  EXPECT_EQ(spared.sequences, 1u);
  EXPECT_EQ(spared.device_faults, 1u);
  EXPECT_EQ(spared.differences, 0u);
  EXPECT_EQ(b_runs, 0) << "side b never ran the sequence";
  const std::string path = DifferencePath(opts, 2135, "-fault");
  std::ifstream f(path);
  std::stringstream text;
  text << f.rdbuf();
  EXPECT_NE(text.str().find("was not run on hw"), std::string::npos) << path;
  EXPECT_NE(text.str().find("SEND_WITH_INV of rkey"), std::string::npos) << text.str();
  EXPECT_NE(text.str().find("invalidate_free_type2_window_faults"), std::string::npos);
  EXPECT_NE(progress.str().find("not run on hw"), std::string::npos) << progress.str();
  // Without spare_b (side b another model) it runs, and the fault is still counted.
  opts.spare_b = false;
  opts.out_dir = TempDir("fault_run");
  const DiffStats run = RunDifferentialLoop(opts, a, b, progress);
  EXPECT_EQ(run.device_faults, 1u);
  EXPECT_EQ(run.differences, 0u);
  EXPECT_EQ(b_runs, 1);
  // The ibta profile answers the same and names no fault: a real IBTA device refuses it.
  const SideMaker ibta = [&make](int devices) { return make("ibta", devices); };
  opts.spare_b = true;
  const DiffStats on_ibta = RunDifferentialLoop(opts, ibta, ibta, progress);
  EXPECT_EQ(on_ibta.device_faults, 0u);
}

// Contract 5: a side that never returns ends the run with exit code 3 and a line naming the
// sequence, the side and the replay command, instead of hanging the CI step.
TEST(DifferentialDeathTest, ASequenceThatHangsEndsTheRunWithExitThree) {
  ::testing::FLAGS_gtest_death_test_style = "threadsafe";
  DiffOptions opts;
  opts.seed = 9;
  opts.sequences = 5;
  opts.sequence_seconds = 0.3;
  opts.label_a = "sleeper";
  opts.label_b = "other";
  opts.replay_flags = "--against hw";
  opts.out_dir = TempDir("hang");
  const SideMaker none = [](int) { return std::unique_ptr<Backend>(); };
  const SideMaker sleeper = [](int) {
    std::this_thread::sleep_for(std::chrono::hours(1));
    return std::unique_ptr<Backend>();
  };
  // Side a (the sleeper: making its backend never returns) hangs; side b is never reached.
  std::ostringstream progress;
  EXPECT_EXIT(RunDifferentialLoop(opts, sleeper, none, progress), ::testing::ExitedWithCode(3),
              "sequence 0 of seed 9 ran over 0.3 s on sleeper .*replay with qptwin fuzz "
              "--differential --against hw --seed 9 --replay 0");
}

TEST(Differential, ReplayPrintsTheSequenceAndBothTranscripts) {
  const Result r = Fuzz({"--differential", "--seed", "5", "--replay", "3"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out.rfind("# sequence 3 of seed 5\n", 0), 0u) << r.out;
  EXPECT_NE(r.out.find("device d0 profile=rxe"), std::string::npos);
  EXPECT_NE(r.out.find("# ---- on model/rxe"), std::string::npos);
  EXPECT_NE(r.out.find(": 1 sequences"), std::string::npos);
}

// `--against none`: the model alone, each sequence's transcript made and compared with nothing
// (the generator's rate on the model).
TEST(Differential, AgainstNoneRunsTheModelAlone) {
  const Result r = Fuzz({"--differential", "--against", "none", "--seed", "9", "--sequences",
                         "50", "--shard", "0/1", "--out", TempDir("alone")});
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("50 sequences"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("made (model/rxe alone)"), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("model/rxe against none"), std::string::npos) << r.err;
}

TEST(Differential, BadInputIsOneLineAndExitTwo) {
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"--differential", "--shard", "3/2"},
           {"--differential", "--shard", "x"},
           {"--differential", "--against", "nic"},
           {"--differential", "--against", "hw:rxe"},
           {"--differential", "--against", "model:nope"},
           {"--differential", "--poll-ms", "0"},
           {"--differential", "--tick-phases", "65"},
           {"--differential", "--tick-phase", "1"},
           {"--differential", "--host-times", "500,x"},
           {"--differential", "--host-times", "200000"},
           {"--differential", "--host-times", ""},
           {"--differential", "--replay", "1"},
           {"--differential", "--backend", "hw"},
           {"--shard", "0/2"},
       }) {
    const Result r = Fuzz(args);
    EXPECT_EQ(r.code, 2) << args[1] << ": " << r.err;
    EXPECT_EQ(r.err.rfind("qptwin: fuzz", 0), 0u) << r.err;
    EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << r.err;
  }
}

}  // namespace
}  // namespace qptwin::fuzz
