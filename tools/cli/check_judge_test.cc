// CheckJudge against the oracle (IsModifyOk) and the reason text (Judge().Reason()).
//
// What is covered, and why it is enough:
//  - FullSweep*: every one of the 2^21 standard masks for RC INIT->RTR (legality and text).
//  - LegalityExhaustive*: legality for all 8 table types (RC, UC, UD, XRC_SEND, XRC_RECV,
//    RAW_PACKET, SMI, GSI) x 49 (cur, next) pairs x all 2^21 standard masks (822M judgements,
//    about 4 s in opt mode).
//  - TextOverBitsThatMatter: for every table type and all 49 pairs, all subsets of the bits
//    the verdict reads as a group (required | optional | STATE | CUR_STATE), each combined
//    with no other bit, every single other bit of all 32, and random sets of other bits (high
//    bits 21-31 included). Outside that group a bit only ever appears by name in the
//    "forbidden" list, independently of the others, so this covers every distinct text shape.
//  - RandomEverywhere: random 32-bit masks over all types and pairs.
#include "tools/cli/check_judge.h"

#include <random>
#include <string>

#include <gtest/gtest.h>

namespace qptwin::cli {
namespace {

std::string Verdict(const CheckJudge& judge, QpType t, QpState c, QpState n, AttrMask m) {
  char buf[CheckJudge::kMaxVerdictChars];
  char* end = judge.AppendVerdict(t, c, n, m, buf);
  return std::string(buf, end);
}

std::string Expected(QpType t, QpState c, QpState n, AttrMask m) {
  const qptwin::Verdict v = Judge(t, c, n, m);
  return v.legal ? "legal" : "illegal " + v.Reason();
}

std::string Case(QpType t, QpState c, QpState n, AttrMask m) {
  return std::string(ToName(t)) + " " + std::string(ToName(c)) + "->" +
         std::string(ToName(n)) + " " + FormatAttrMask(m);
}

TEST(CheckJudge, FullSweepRcInitRtrMatchesOracleAndReason) {
  const CheckJudge judge;
  int legal = 0;
  for (AttrMask m = 0; m <= attr::kStandardBits; ++m) {
    const QpState next = NextState(QpState::kInit, QpState::kRtr, m);
    const bool ok = judge.IsLegal(QpType::kRc, QpState::kInit, next, m);
    ASSERT_EQ(ok, IsModifyOk(QpState::kInit, next, QpType::kRc, m))
        << Case(QpType::kRc, QpState::kInit, next, m);
    ASSERT_EQ(Verdict(judge, QpType::kRc, QpState::kInit, next, m),
              Expected(QpType::kRc, QpState::kInit, next, m));
    legal += ok;
  }
  // INIT->RTR: 2^3 optional subsets; INIT->INIT (no STATE): 2^3 optional subsets.
  EXPECT_EQ(legal, 16);
}

TEST(CheckJudge, LegalityExhaustiveForAllTypesAllPairsAllStandardMasks) {
  const CheckJudge judge;
  for (QpType t : TableQpTypes()) {
    for (QpState c : AllQpStates()) {
      for (QpState n : AllQpStates()) {
        uint32_t disagreements = 0;
        for (AttrMask m = 0; m <= attr::kStandardBits; ++m) {
          disagreements += judge.IsLegal(t, c, n, m) != IsModifyOk(c, n, t, m);
        }
        ASSERT_EQ(disagreements, 0u) << Case(t, c, n, 0);
      }
    }
  }
}

TEST(CheckJudge, TextOverBitsThatMatterForAllTypesAndPairs) {
  const CheckJudge judge;
  std::mt19937 rng(20261129);
  for (QpType t : TableQpTypes()) {
    for (QpState c : AllQpStates()) {
      for (QpState n : AllQpStates()) {
        const Transition& tr = TransitionOf(c, n);
        const int ti = static_cast<int>(t);
        const AttrMask group =
            tr.required[ti] | tr.optional[ti] | attr::kState | attr::kCurState;
        std::vector<AttrMask> extras = {0};
        for (int b = 0; b < 32; ++b) {
          if (!(group & (1u << b))) extras.push_back(1u << b);
        }
        for (int k = 0; k < 4; ++k) extras.push_back(rng() & ~group);
        // Every subset of `group` (submask enumeration, 0 included).
        for (AttrMask sub = group;; sub = (sub - 1) & group) {
          for (AttrMask extra : extras) {
            const AttrMask m = sub | extra;
            ASSERT_EQ(judge.IsLegal(t, c, n, m), IsModifyOk(c, n, t, m)) << Case(t, c, n, m);
            ASSERT_EQ(Verdict(judge, t, c, n, m), Expected(t, c, n, m)) << Case(t, c, n, m);
          }
          if (sub == 0) break;
        }
      }
    }
  }
}

TEST(CheckJudge, RandomEverywhereIncludingHighBits) {
  const CheckJudge judge;
  std::mt19937 rng(7);
  const auto& types = TableQpTypes();
  const auto& states = AllQpStates();
  for (int i = 0; i < 200000; ++i) {
    const QpType t = types[rng() % types.size()];
    const QpState c = states[rng() % states.size()];
    const QpState n = states[rng() % states.size()];
    const AttrMask m = (i % 2) ? rng() : (rng() & attr::kStandardBits);
    ASSERT_EQ(Verdict(judge, t, c, n, m), Expected(t, c, n, m)) << Case(t, c, n, m);
  }
}

TEST(CheckJudge, WorstCaseVerdictFitsTheBuffer) {
  const CheckJudge judge;
  size_t longest = 0;
  for (QpType t : TableQpTypes()) {
    for (QpState c : AllQpStates()) {
      for (QpState n : AllQpStates()) {
        longest = std::max(longest, Verdict(judge, t, c, n, 0xffffffffu).size());
        longest = std::max(longest, Verdict(judge, t, c, n, 0xfffffffeu).size());
      }
    }
  }
  EXPECT_GT(longest, 200u);
  EXPECT_LT(longest, CheckJudge::kMaxVerdictChars / 2);
}

}  // namespace
}  // namespace qptwin::cli
