// qptwin check through RunCheck and CheckPipeline: the verdict per line, exit codes, input
// split anywhere, every spelling, and the --sweep / --bench modes.
#include <algorithm>
#include <random>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "spec/qp_state_table.h"
#include "tools/cli/check_pipeline.h"
#include "tools/cli/commands.h"
#include "tools/cli/test_util.h"

namespace qptwin::cli {
namespace {

Outcome Check(const std::string& input, const Args& args = {}) {
  return RunWith(RunCheck, args, input);
}

TEST(Check, AMalformedLineIsNamedOnStderrWithItsLineNumber) {
  const Outcome r = Check("# header\n\nRC INIT RTR 0x1\nRC INIT\nRC \x1b[1mINIT RTR 0x1\n");
  EXPECT_EQ(r.code, kExitBadInput);
  EXPECT_EQ(r.err,
            "qptwin: check: line 4: expected 4 fields 'TYPE FROM TO MASK' (e.g. 'RC INIT RTR "
            "0x1a1'), got 2\n"
            "qptwin: check: line 5: unknown QP state '\\x1b[1mINIT' (valid: " +
                std::string(r.err.substr(r.err.find("(valid: ") + 8)));
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 2) << r.err;
  EXPECT_EQ(r.err.find('\x1b'), std::string::npos) << "control bytes are escaped";
  EXPECT_NE(r.out.find("error unknown QP state '\\x1b[1mINIT'"), std::string::npos) << r.out;
}

TEST(Check, PrintsOneVerdictPerLineAndSkipsBlankAndComments) {
  const Outcome r = Check(
      "# a comment\n"
      "RC INIT RTR STATE|AV|PATH_MTU|DEST_QPN|RQ_PSN|MAX_DEST_RD_ATOMIC|MIN_RNR_TIMER\n"
      "\n"
      "RC RESET RTR 0x1\n"
      "UD RESET INIT 0x71\n"
      "rc init rtr 0x1\n");
  EXPECT_EQ(r.code, kExitOk);
  EXPECT_EQ(r.out,
            "legal\n"
            "illegal invalid transition RESET->RTR\n"
            "legal\n"
            "illegal missing required AV|PATH_MTU|RQ_PSN|MIN_RNR_TIMER|MAX_DEST_RD_ATOMIC|"
            "DEST_QPN\n");
  EXPECT_EQ(r.err, "");
}

TEST(Check, MaskWithoutStateJudgesCurToCur) {
  // INIT with PKEY_INDEX only: INIT->INIT (legal), not INIT->RTR.
  EXPECT_EQ(Check("RC INIT RTR PKEY_INDEX\n").out, "legal\n");
  EXPECT_EQ(Check("RC INIT RTR STATE|PKEY_INDEX\n").out.rfind("illegal missing required", 0), 0u);
  EXPECT_EQ(Check("RC RESET RTR 0\n").out, "legal\n");  // RESET->RESET with nothing
}

TEST(Check, MalformedLineReportsAndContinuesThenExitsTwo) {
  const Outcome r = Check("RC INIT RTR\nRD INIT RTR 0x1\nRC RESET INIT 0x39\n");
  EXPECT_EQ(r.code, kExitBadInput);
  std::istringstream lines(r.out);
  std::string l1, l2, l3;
  std::getline(lines, l1), std::getline(lines, l2), std::getline(lines, l3);
  EXPECT_EQ(l1.rfind("error expected 4 fields", 0), 0u) << l1;
  EXPECT_EQ(l2.rfind("error unknown QP type 'RD' (valid: RC, UC, UD", 0), 0u) << l2;
  EXPECT_EQ(l3, "legal");
}

TEST(Check, LastLineWithoutNewlineIsJudged) {
  EXPECT_EQ(Check("RC RESET INIT 0x39").out, "legal\n");
}

TEST(Check, OverlongLineIsAnErrorNotTruncated) {
  const Outcome r = Check("RC INIT INIT 0x10" + std::string(5000, ' ') + "extra\nRC INIT INIT 0x10\n");
  EXPECT_EQ(r.code, kExitBadInput);
  EXPECT_EQ(r.out.rfind("error line longer than", 0), 0u) << r.out.substr(0, 80);
  EXPECT_NE(r.out.find("\nlegal\n"), std::string::npos);
}

// Random requests in random spellings, fed in random-size pieces, against Judge().
TEST(CheckPipeline, RandomSpellingsAndSplitsMatchTheOracle) {
  std::mt19937 rng(11);
  const auto& types = TableQpTypes();
  const auto& states = AllQpStates();
  std::string input, expected;
  for (int i = 0; i < 20000; ++i) {
    const QpType t = types[rng() % types.size()];
    const QpState c = states[rng() % states.size()];
    const QpState to = states[rng() % states.size()];
    const AttrMask m = (rng() % 4 == 0) ? rng() : (rng() & attr::kStandardBits);
    char hex[16];
    std::snprintf(hex, sizeof hex, "0x%x", m);
    std::string mask_text = hex;
    if (rng() % 3 == 0) mask_text = std::to_string(m);
    if (rng() % 3 == 0 && m != 0 && m <= attr::kStandardBits) mask_text = FormatAttrMask(m);
    std::string type_text(ToName(t)), cur_text(ToName(c)), to_text(ToName(to));
    if (rng() % 2) type_text = std::to_string(static_cast<int>(t));
    if (rng() % 2) cur_text = "ibv_qps_" + cur_text;
    input += type_text + " " + cur_text + "\t" + to_text + " " + mask_text + "\n";
    const Verdict v = Judge(t, c, NextState(c, to, m), m);
    expected += v.legal ? "legal\n" : "illegal " + v.Reason() + "\n";
  }
  const CheckJudge judge;
  std::ostringstream out;
  CheckPipeline pipeline(judge, out);
  for (size_t at = 0; at < input.size();) {
    const size_t n = std::min<size_t>(1 + rng() % 97, input.size() - at);
    pipeline.Feed(std::string_view(input).substr(at, n));
    at += n;
  }
  pipeline.Finish();
  EXPECT_EQ(pipeline.lines(), 20000u);
  EXPECT_EQ(pipeline.errors(), 0u);
  EXPECT_TRUE(out.str() == expected) << "first difference at byte "
                                     << std::mismatch(expected.begin(), expected.end(),
                                                      out.str().begin(), out.str().end())
                                                .first -
                                            expected.begin();
}

TEST(Check, SweepPrintsEveryStandardMaskAndChecksBack) {
  const Outcome sweep = Check("", {"--sweep", "rc", "init", "RTR"});
  ASSERT_EQ(sweep.code, kExitOk);
  EXPECT_EQ(std::count(sweep.out.begin(), sweep.out.end(), '\n'), 1 << 21);
  EXPECT_EQ(sweep.out.rfind("RC INIT RTR 0x0\nRC INIT RTR 0x1\n", 0), 0u);
  const Outcome judged = Check(sweep.out);
  EXPECT_EQ(judged.code, kExitOk);
  size_t legal = 0;
  for (size_t at = 0; (at = judged.out.find("legal\n", at)) != std::string::npos; at += 6) {
    legal += at == 0 || judged.out[at - 1] == '\n';
  }
  EXPECT_EQ(legal, 16u);  // 8 for INIT->RTR, 8 for INIT->INIT (masks without STATE)
}

TEST(Check, BenchReportsARate) {
  const Outcome r = Check("", {"--bench", "100000"});
  EXPECT_EQ(r.code, kExitOk);
  EXPECT_EQ(r.out.rfind("check --bench: 100000 lines in ", 0), 0u) << r.out;
  EXPECT_NE(r.out.find("M lines/min"), std::string::npos);
}

TEST(Check, BadArgumentsNameTheChoices) {
  EXPECT_TRUE(IsBadInput(Check("", {"--bench"}), "flag --bench needs a value"));
  EXPECT_TRUE(IsBadInput(Check("", {"--sweep", "--bench", "9"}), "exclude each other"));
  EXPECT_TRUE(IsBadInput(Check("", {"RC"}), "unexpected argument 'RC'"));
  for (const Args& args : std::vector<Args>{{"--bogus"},
                                            {"--bench", "many"},
                                            {"--sweep", "RC", "INIT"},
                                            {"--sweep", "RD", "INIT", "RTR"}}) {
    const Outcome r = Check("", args);
    EXPECT_EQ(r.code, kExitBadInput) << args[0];
    EXPECT_EQ(r.err.rfind("qptwin: ", 0), 0u) << r.err;
    EXPECT_NE(r.err.find("valid"), std::string::npos) << r.err;
  }
}

}  // namespace
}  // namespace qptwin::cli
