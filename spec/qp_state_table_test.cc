// Independent expectations for the legality oracle: the minimum masks of rdma-core's
// ibv_modify_qp(3) man page, the valid pairs as listed in rdma-facts.md, and single-bit
// perturbations of every minimum mask.
#include "spec/qp_state_table.h"

#include <set>
#include <utility>

#include <gtest/gtest.h>

namespace qptwin {
namespace {

using S = QpState;
using T = QpType;

struct ManPageCase {
  T type;
  S from;
  S to;
  AttrMask mask;
};

// ibv_modify_qp(3), "RESET to INIT" ... "RTR to RTS" tables, per transport.
const ManPageCase kManPage[] = {
    {T::kRc, S::kReset, S::kInit,
     attr::kState | attr::kPkeyIndex | attr::kPort | attr::kAccessFlags},
    {T::kRc, S::kInit, S::kRtr,
     attr::kState | attr::kAv | attr::kPathMtu | attr::kDestQpn | attr::kRqPsn |
         attr::kMaxDestRdAtomic | attr::kMinRnrTimer},
    {T::kRc, S::kRtr, S::kRts,
     attr::kState | attr::kSqPsn | attr::kTimeout | attr::kRetryCnt | attr::kRnrRetry |
         attr::kMaxQpRdAtomic},
    {T::kUc, S::kReset, S::kInit,
     attr::kState | attr::kPkeyIndex | attr::kPort | attr::kAccessFlags},
    {T::kUc, S::kInit, S::kRtr,
     attr::kState | attr::kAv | attr::kPathMtu | attr::kDestQpn | attr::kRqPsn},
    {T::kUc, S::kRtr, S::kRts, attr::kState | attr::kSqPsn},
    {T::kUd, S::kReset, S::kInit, attr::kState | attr::kPkeyIndex | attr::kPort | attr::kQkey},
    {T::kUd, S::kInit, S::kRtr, attr::kState},
    {T::kUd, S::kRtr, S::kRts, attr::kState | attr::kSqPsn},
};

TEST(QpStateTable, ManPageMinimumMasksAreLegalAndMinimal) {
  for (const auto& c : kManPage) {
    SCOPED_TRACE(std::string(ToName(c.type)) + " " + std::string(ToName(c.from)) + "->" +
                 std::string(ToName(c.to)));
    EXPECT_TRUE(IsModifyOk(c.from, c.to, c.type, c.mask));
    EXPECT_EQ(MinimumMask(c.type, c.from, c.to), c.mask);
  }
}

TEST(QpStateTable, RemovingAnyRequiredBitIsIllegalAndNamed) {
  for (const auto& c : kManPage) {
    for (int b = 1; b < 32; ++b) {  // bit 0 (STATE) removed means a different request
      AttrMask bit = 1u << b;
      if (!(c.mask & bit)) continue;
      Verdict v = Judge(c.type, c.from, c.to, c.mask & ~bit);
      EXPECT_FALSE(v.legal) << AttrBitName(bit);
      EXPECT_EQ(v.missing, bit);
      EXPECT_NE(v.Reason().find("missing required " + std::string(AttrBitName(bit))),
                std::string::npos)
          << v.Reason();
      EXPECT_EQ(v.fixed_mask, c.mask);
    }
  }
}

TEST(QpStateTable, AddingAnyNotAllowedBitIsIllegalAndNamed) {
  for (const auto& c : kManPage) {
    const Transition& t = TransitionOf(c.from, c.to);
    AttrMask allowed = attr::kState | t.required[static_cast<int>(c.type)] |
                       t.optional[static_cast<int>(c.type)];
    for (int b = 0; b < 26; ++b) {
      AttrMask bit = 1u << b;
      Verdict v = Judge(c.type, c.from, c.to, c.mask | bit);
      if (allowed & bit) {
        EXPECT_TRUE(v.legal) << AttrBitName(bit);
        continue;
      }
      EXPECT_FALSE(v.legal) << b;
      if (bit == attr::kCurState && (c.from == S::kReset || c.from == S::kInit)) {
        EXPECT_TRUE(v.cur_state_misuse);
      } else {
        EXPECT_EQ(v.forbidden, bit);
        EXPECT_NE(v.Reason().find("forbidden"), std::string::npos);
      }
      EXPECT_EQ(v.fixed_mask, c.mask);
    }
  }
}

TEST(QpStateTable, ExactlyTheTwentyTwoValidPairs) {
  const std::set<std::pair<S, S>> expected = {
      {S::kReset, S::kReset}, {S::kReset, S::kInit}, {S::kInit, S::kReset}, {S::kInit, S::kErr},
      {S::kInit, S::kInit},   {S::kInit, S::kRtr},   {S::kRtr, S::kReset},  {S::kRtr, S::kErr},
      {S::kRtr, S::kRts},     {S::kRts, S::kReset},  {S::kRts, S::kErr},    {S::kRts, S::kRts},
      {S::kRts, S::kSqd},     {S::kSqd, S::kReset},  {S::kSqd, S::kErr},    {S::kSqd, S::kRts},
      {S::kSqd, S::kSqd},     {S::kSqe, S::kReset},  {S::kSqe, S::kErr},    {S::kSqe, S::kRts},
      {S::kErr, S::kReset},   {S::kErr, S::kErr},
  };
  int valid = 0;
  for (S a : AllQpStates()) {
    for (S b : AllQpStates()) {
      EXPECT_EQ(TransitionOf(a, b).valid, expected.count({a, b}) == 1)
          << ToName(a) << "->" << ToName(b);
      valid += TransitionOf(a, b).valid;
    }
  }
  EXPECT_EQ(valid, 22);
}

TEST(QpStateTable, ResetToErrIsIllegalInLinux) {
  Verdict v = Judge(T::kRc, S::kReset, S::kErr, attr::kState);
  EXPECT_FALSE(v.legal);
  EXPECT_TRUE(v.invalid_pair);
  EXPECT_EQ(v.Reason(), "invalid transition RESET->ERR");
  EXPECT_NE(v.Explain().find("IBTA allows"), std::string::npos);
  ASSERT_EQ(v.path.size(), 2u);  // RESET->INIT->ERR
  EXPECT_EQ(v.path[0].to, S::kInit);
  EXPECT_EQ(v.path[1].to, S::kErr);
}

TEST(QpStateTable, ResetToRtrSuggestsGoingThroughInit) {
  Verdict v = Judge(T::kRc, S::kReset, S::kRtr, MinimumMask(T::kRc, S::kInit, S::kRtr));
  EXPECT_FALSE(v.legal);
  ASSERT_EQ(v.path.size(), 2u);
  EXPECT_EQ(v.path[0].from, S::kReset);
  EXPECT_EQ(v.path[0].to, S::kInit);
  EXPECT_EQ(v.path[0].mask, MinimumMask(T::kRc, S::kReset, S::kInit));
  EXPECT_EQ(v.path[1].to, S::kRtr);
}

TEST(QpStateTable, NothingReachesSqeByModify) {
  Verdict v = Judge(T::kUd, S::kRts, S::kSqe, attr::kState);
  EXPECT_TRUE(v.invalid_pair);
  EXPECT_TRUE(v.path.empty());
  EXPECT_NE(v.Explain().find("only the device"), std::string::npos);
}

TEST(QpStateTable, CurStateAllowedOnlyFromRtrRtsSqdSqe) {
  for (S cur : AllQpStates()) {
    bool allowed = cur == S::kRtr || cur == S::kRts || cur == S::kSqd || cur == S::kSqe;
    // RTS->RTS and SQE->RTS list CUR_STATE as optional for UD; INIT->INIT does not.
    S next = (cur == S::kReset) ? S::kReset : (cur == S::kInit ? S::kInit : S::kRts);
    if (cur == S::kErr) next = S::kErr;
    Verdict v = Judge(T::kUd, cur, next, attr::kState | attr::kCurState |
                                             MinimumMask(T::kUd, cur, next));
    EXPECT_EQ(v.cur_state_misuse, !allowed) << ToName(cur);
  }
  EXPECT_TRUE(IsModifyOk(S::kRts, S::kRts, T::kRc, attr::kCurState));
  EXPECT_FALSE(IsModifyOk(S::kInit, S::kInit, T::kRc, attr::kCurState));
  // Allowed from SQD, yet SQD->SQD does not list CUR_STATE as optional: illegal as forbidden.
  Verdict sqd = Judge(T::kRc, S::kSqd, S::kSqd, attr::kCurState);
  EXPECT_FALSE(sqd.cur_state_misuse);
  EXPECT_EQ(sqd.forbidden, attr::kCurState);
}

TEST(QpStateTable, ModifyWithoutStateIsTheSelfTransition) {
  // No STATE: the kernel's callers judge cur->cur.
  EXPECT_EQ(NextState(S::kRts, S::kErr, attr::kAccessFlags), S::kRts);
  EXPECT_TRUE(IsModifyOk(S::kRts, S::kRts, T::kRc, attr::kAccessFlags | attr::kMinRnrTimer));
  EXPECT_TRUE(IsModifyOk(S::kReset, S::kReset, T::kRc, 0));
  EXPECT_FALSE(IsModifyOk(S::kRtr, S::kRtr, T::kRc, 0));  // RTR->RTR is not a valid pair
  EXPECT_FALSE(IsModifyOk(S::kSqe, S::kSqe, T::kUd, attr::kQkey));
  EXPECT_TRUE(IsModifyOk(S::kErr, S::kErr, T::kUc, 0));
}

TEST(QpStateTable, PathMtuCannotChangeOnALiveQp) {
  // Neither RTS->RTS nor SQD->SQD lists PATH_MTU as optional, for any type.
  for (T type : TableQpTypes()) {
    EXPECT_FALSE(IsModifyOk(S::kRts, S::kRts, type, attr::kPathMtu)) << ToName(type);
    EXPECT_FALSE(IsModifyOk(S::kSqd, S::kSqd, type, attr::kState | attr::kPathMtu));
  }
}

TEST(QpStateTable, XrcAndRawPacketRows) {
  EXPECT_TRUE(IsModifyOk(S::kRtr, S::kRts, T::kXrcRecv,
                         attr::kState | attr::kTimeout | attr::kSqPsn));
  EXPECT_FALSE(IsModifyOk(S::kRtr, S::kRts, T::kXrcRecv, attr::kState | attr::kSqPsn));
  EXPECT_TRUE(IsModifyOk(S::kReset, S::kInit, T::kRawPacket, attr::kState | attr::kPort));
  EXPECT_TRUE(IsModifyOk(S::kRts, S::kRts, T::kRawPacket, attr::kRateLimit));
  EXPECT_FALSE(IsModifyOk(S::kRts, S::kRts, T::kRc, attr::kRateLimit));
  // SQE->RTS: no optional attributes for RC (RC never sits in SQE).
  EXPECT_FALSE(IsModifyOk(S::kSqe, S::kRts, T::kRc, attr::kState | attr::kCurState));
  EXPECT_TRUE(IsModifyOk(S::kSqe, S::kRts, T::kUc, attr::kState | attr::kCurState));
}

TEST(QpStateTable, CapAndReservedBitsAreNeverAllowed) {
  for (T type : TableQpTypes()) {
    for (S a : AllQpStates()) {
      for (S b : AllQpStates()) {
        for (AttrMask bit : {attr::kCap, 1u << 21, 1u << 24, 1u << 31}) {
          EXPECT_FALSE(IsModifyOk(a, b, type, MinimumMask(type, a, b) | bit));
        }
      }
    }
  }
}

TEST(QpStateTable, ValuesOutsideTheEnumsAreIllegalNotUndefined) {
  const auto bad_state = static_cast<S>(7);
  const auto bad_type = static_cast<T>(11);
  EXPECT_FALSE(IsModifyOk(bad_state, S::kInit, T::kRc, attr::kState));
  EXPECT_FALSE(IsModifyOk(S::kReset, bad_state, T::kRc, attr::kState));
  EXPECT_FALSE(IsModifyOk(S::kReset, S::kReset, bad_type, 0));
  EXPECT_EQ(MinimumMask(bad_type, S::kReset, S::kInit), 0u);
  Verdict v = Judge(T::kRc, S::kReset, bad_state, attr::kState);
  EXPECT_FALSE(v.legal);
  EXPECT_TRUE(v.path.empty());
  EXPECT_FALSE(Judge(bad_type, S::kReset, S::kInit, attr::kState).legal);
}

TEST(QpStateTable, ExplainNamesTheFix) {
  Verdict v = Judge(T::kRc, S::kInit, S::kRtr, attr::kState | attr::kAv | attr::kQkey);
  std::string e = v.Explain();
  EXPECT_NE(e.find("illegal"), std::string::npos);
  EXPECT_NE(e.find("missing required attribute(s): PATH_MTU|RQ_PSN|MIN_RNR_TIMER|"
                   "MAX_DEST_RD_ATOMIC|DEST_QPN"),
            std::string::npos)
      << e;
  EXPECT_NE(e.find("drop QKEY"), std::string::npos) << e;
  EXPECT_EQ(v.fixed_mask, MinimumMask(T::kRc, S::kInit, S::kRtr));
}

}  // namespace
}  // namespace qptwin
