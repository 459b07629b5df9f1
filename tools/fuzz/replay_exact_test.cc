// A sequence's SeqResult::replay is exact: run as a .qps scenario on the same profile, every
// modify and post gets the errno the device gave during the run (each line carries it as
// expect=), so a shrunk or saved failure replays what the device really saw.
#include <gtest/gtest.h>

#include "model/model_backend.h"
#include "spec/reference/sequence.h"
#include "spec/reference/sequence_gen.h"
#include "spec/scenario/parser.h"
#include "spec/scenario/runner.h"

namespace qptwin::reference {
namespace {

class ReplayExact : public ::testing::TestWithParam<std::string> {};

TEST_P(ReplayExact, EveryCommandOfTheReplayGetsTheErrnoOfTheRun) {
  model::ModelOptions opts;
  opts.profile = GetParam();
  int modifies_with_extra_bits = 0;
  for (uint64_t n = 0; n < 150; ++n) {
    auto cmds = RandomSequence(SequenceSeed(7, n), 24);
    for (const SeqCommand& c : cmds) modifies_with_extra_bits += (c.add || c.drop) ? 1 : 0;
    auto backend = model::MakeModelBackend(opts);
    ASSERT_NE(backend, nullptr);
    const SeqResult r = RunSequence(*backend, cmds, 2'000'000);
    ASSERT_EQ(r.failure, "") << r.replay;
    scenario::Scenario sc;
    scenario::ParseError err;
    ASSERT_TRUE(scenario::ParseScenario(r.replay, &sc, &err))
        << "line " << err.line << ": " << err.message << "\n" << r.replay;
    auto again = model::MakeModelBackend(opts);
    scenario::Runner runner(again.get());
    const scenario::RunResult rr = runner.Run(sc);
    std::string failed;
    for (const scenario::Step& s : rr.steps) {
      for (const std::string& f : s.failures) failed += "line " + std::to_string(s.line) + ": " + s.text + ": " + f + "\n";
    }
    ASSERT_EQ(failed, "") << "sequence " << n << "\n" << r.replay;
  }
  EXPECT_GT(modifies_with_extra_bits, 0) << "the sequences should add or drop mask bits";
}

INSTANTIATE_TEST_SUITE_P(Model, ReplayExact, ::testing::Values("rxe", "ibta"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace qptwin::reference
