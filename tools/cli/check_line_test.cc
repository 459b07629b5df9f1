// The line parser of `qptwin check` and its fast lexicons: same acceptance as the spec parsers.
#include "tools/cli/check_line.h"

#include <gtest/gtest.h>

#include "spec/qp_state_table.h"
#include "tools/cli/lexicon.h"

namespace qptwin::cli {
namespace {

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

TEST(Lexicon, AgreesWithSpecParsersOnEveryNameAndSpelling) {
  for (QpType t : TableQpTypes()) {
    const std::string name(ToName(t));
    for (const std::string& s : {name, Lower(name), "IBV_QPT_" + name, "ib_qpt_" + name}) {
      ASSERT_EQ(Lexicon::QpTypes().Find(s), static_cast<uint32_t>(*ParseQpType(s))) << s;
    }
  }
  for (QpState st : AllQpStates()) {
    const std::string name(ToName(st));
    for (const std::string& s : {name, Lower(name), "IBV_QPS_" + name, "ibv_qps_" + name}) {
      ASSERT_EQ(Lexicon::QpStates().Find(s), static_cast<uint32_t>(*ParseQpState(s))) << s;
    }
  }
  for (int b = 0; b < 32; ++b) {
    const std::string name(AttrBitName(1u << b));
    if (name == "?") continue;
    for (const std::string& s : {name, Lower(name), "IBV_QP_" + name}) {
      ASSERT_EQ(Lexicon::AttrBits().Find(s), *ParseAttrBit(s)) << s;
    }
  }
  EXPECT_EQ(Lexicon::QpTypes().Find("xrc_ini"), static_cast<uint32_t>(QpType::kXrcSend));
  EXPECT_EQ(Lexicon::QpStates().Find("Error"), static_cast<uint32_t>(QpState::kErr));
}

TEST(Lexicon, RejectsWhatIsNotAName) {
  for (const char* s : {"", "RD", "2", "IBV_QPT_", "RCX", "R", "IBV_QPS_RC",
                        "A_VERY_LONG_TOKEN_THAT_IS_LONGER_THAN_ANY_NAME_AT_ALL"}) {
    EXPECT_FALSE(Lexicon::QpTypes().Find(s)) << s;
  }
  EXPECT_FALSE(Lexicon::QpStates().Find("IBV_QPS_"));
  EXPECT_FALSE(Lexicon::AttrBits().Find("BIT21"));
}

LineKind Parse(std::string_view line, CheckRequest* r, std::string* error) {
  return ParseCheckLine(line, r, error);
}

TEST(CheckLine, ParsesNamesNumbersAndMaskSpellingsAlike) {
  const AttrMask expected = attr::kState | attr::kAv | attr::kPort;
  for (const char* line :
       {"RC INIT RTR 0xa1", "rc init rtr 161", "2 1 2 0xA1", "RC INIT RTR STATE|AV|PORT",
        "IBV_QPT_RC IBV_QPS_INIT IBV_QPS_RTR IBV_QP_STATE|ibv_qp_av|Port",
        "\tRC  INIT\tRTR   STATE,AV,PORT  \r", "RC INIT RTR 0x000000000a1"}) {
    CheckRequest r;
    std::string error;
    ASSERT_EQ(Parse(line, &r, &error), LineKind::kRequest) << line << ": " << error;
    EXPECT_EQ(r.type, QpType::kRc) << line;
    EXPECT_EQ(r.cur, QpState::kInit) << line;
    EXPECT_EQ(r.requested, QpState::kRtr) << line;
    EXPECT_EQ(r.mask, expected) << line;
  }
}

TEST(CheckLine, SkipsBlankAndCommentLines) {
  CheckRequest r;
  std::string error;
  for (const char* line : {"", "   ", "\t\r", "# RC INIT RTR 0x1", "   # note"}) {
    EXPECT_EQ(Parse(line, &r, &error), LineKind::kSkip) << "'" << line << "'";
  }
}

TEST(CheckLine, MalformedLinesSayWhatIsWrongAndTheChoices) {
  struct Case {
    const char* line;
    const char* says;
  };
  for (const Case& c : {
           Case{"RC INIT RTR", "expected 4 fields"},
           Case{"RC INIT RTR 0x1 extra", "got 5"},
           Case{"RD INIT RTR 0x1", "unknown QP type 'RD' (valid: RC, UC, UD,"},
           Case{"7 INIT RTR 0x1", "unknown QP type '7'"},
           Case{"RC BOGUS RTR 0x1", "unknown QP state 'BOGUS' (valid: RESET, INIT, RTR,"},
           Case{"RC INIT 9 0x1", "unknown QP state '9'"},
           Case{"RC INIT RTR STATE|FOO", "unknown attribute 'FOO' in mask 'STATE|FOO'"},
           Case{"RC INIT RTR STATE|", "empty attribute name in mask 'STATE|'"},
           Case{"RC INIT RTR 0x1ffffffff", "does not fit in 32 bits"},
           Case{"RC INIT RTR 0xZZ", "(valid: a number like 0x1a1, or names joined by"},
       }) {
    CheckRequest r;
    std::string error;
    ASSERT_EQ(Parse(c.line, &r, &error), LineKind::kError) << c.line;
    EXPECT_NE(error.find(c.says), std::string::npos) << c.line << " -> " << error;
    EXPECT_EQ(error.find('\n'), std::string::npos) << error;
  }
}

}  // namespace
}  // namespace qptwin::cli
