#include <gtest/gtest.h>

#include "tools/cli/commands.h"
#include "tools/cli/test_util.h"

namespace qptwin::cli {
namespace {

Outcome Explain(const Args& args) { return RunWith(RunExplain, args); }

TEST(Explain, ManPageMinimumMaskForRcInitToRtrIsLegal) {
  const Outcome o = Explain({"--type", "RC", "--from", "INIT", "--to", "RTR", "--attrs",
                             "STATE,AV,PATH_MTU,DEST_QPN,RQ_PSN,MAX_DEST_RD_ATOMIC,MIN_RNR_TIMER"});
  EXPECT_EQ(o.code, kExitOk);
  EXPECT_EQ(o.out.rfind("RC INIT->RTR with ", 0), 0u) << o.out;
  EXPECT_NE(o.out.find(": legal\n"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("optional: ACCESS_FLAGS|PKEY_INDEX|ALT_PATH"), std::string::npos) << o.out;
}

TEST(Explain, MissingAttributesAreIllegalWithTheFix) {
  const Outcome o = Explain({"--type=rc", "--from", "init", "--to", "rtr", "--mask",
                             "IBV_QP_STATE|IBV_QP_AV|IBV_QP_PATH_MTU"});
  EXPECT_EQ(o.code, kExitFailed);
  EXPECT_NE(o.out.find("missing required attribute(s): RQ_PSN|MIN_RNR_TIMER|"
                       "MAX_DEST_RD_ATOMIC|DEST_QPN"),
            std::string::npos)
      << o.out;
  EXPECT_NE(o.out.find("fix: add RQ_PSN"), std::string::npos) << o.out;
}

TEST(Explain, InvalidPairSuggestsThePath) {
  const Outcome o = Explain({"--type", "RC", "--from", "RESET", "--to", "RTR", "--attrs", "0x1"});
  EXPECT_EQ(o.code, kExitFailed);
  EXPECT_NE(o.out.find("RESET->RTR is not a transition"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("RESET->INIT with STATE|ACCESS_FLAGS|PKEY_INDEX|PORT"), std::string::npos)
      << o.out;
}

TEST(Explain, NumericMaskIsAccepted) {
  // 0x39 = STATE|ACCESS_FLAGS|PKEY_INDEX|PORT: RC RESET->INIT minimum.
  EXPECT_EQ(Explain({"--type", "2", "--from", "0", "--to", "1", "--attrs", "0x39"}).code, kExitOk);
  EXPECT_EQ(Explain({"--type", "RC", "--from", "RESET", "--to", "INIT", "--attrs", "57"}).code,
            kExitOk);
}

TEST(Explain, MaskWithoutStateJudgesFromToFromAndSaysSo) {
  const Outcome o =
      Explain({"--type", "RC", "--from", "INIT", "--to", "RTR", "--attrs", "PKEY_INDEX"});
  EXPECT_EQ(o.code, kExitOk);  // INIT->INIT with PKEY_INDEX is legal
  EXPECT_NE(o.out.find("lacks STATE"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("judging INIT->INIT"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("RC INIT->INIT with PKEY_INDEX: legal"), std::string::npos) << o.out;
  // Without --to the same request is fine; with STATE, --to is needed.
  EXPECT_EQ(Explain({"--type", "RC", "--from", "INIT", "--attrs", "PKEY_INDEX"}).code, kExitOk);
  EXPECT_TRUE(IsBadInput(Explain({"--type", "RC", "--from", "INIT", "--attrs", "STATE"}),
                         "missing --to"));
}

TEST(Explain, BadInputNamesTheChoices) {
  const Args base = {"--from", "INIT", "--to", "RTR", "--attrs", "STATE"};
  Args rd = base;
  rd.insert(rd.end(), {"--type", "RD"});
  EXPECT_TRUE(IsBadInput(Explain(rd), "unknown QP type 'RD' (valid: RC, UC, UD, RAW_PACKET"));
  EXPECT_TRUE(IsBadInput(Explain({"--type", "RC", "--from", "NOPE", "--to", "RTR", "--attrs", "1"}),
                         "unknown QP state 'NOPE' (valid: RESET, INIT, RTR, RTS, SQD, SQE, ERR"));
  EXPECT_TRUE(IsBadInput(Explain({"--type", "RC", "--from", "INIT", "--to", "RTR", "--attrs",
                                  "STATE|AVV"}),
                         "unknown attribute 'AVV'"));
  EXPECT_TRUE(IsBadInput(Explain(base), "missing --type"));
  Args extra = base;
  extra.insert(extra.end(), {"--type", "RC", "--bogus"});
  EXPECT_TRUE(IsBadInput(Explain(extra), "unknown flag '--bogus' (valid: --type VALUE"));
  EXPECT_TRUE(IsBadInput(Explain({"--type"}), "flag --type needs a value"));
  EXPECT_TRUE(IsBadInput(Explain({"--type", "RC", "--type", "UD"}), "given twice"));
}

TEST(Explain, HelpPrintsUsage) {
  const Outcome o = Explain({"--help"});
  EXPECT_EQ(o.code, kExitOk);
  EXPECT_EQ(o.out.rfind("usage: qptwin explain", 0), 0u);
}

}  // namespace
}  // namespace qptwin::cli
