#include "spec/posting_rules.h"

#include <cerrno>

#include <gtest/gtest.h>

namespace qptwin {
namespace {

PostQueue Rc(QpState s, size_t outstanding = 0, uint32_t depth = 4) {
  return PostQueue{QpType::kRc, s, false, outstanding, depth, 2, 64};
}
SendWrFacts Send(size_t sges = 1) {
  SendWrFacts f;
  f.num_sge = sges;
  f.length = 8 * sges;
  return f;
}

TEST(PostingRules, SendBelowRtsIsEinvalWithNothingQueuedOnIbta) {  // R2
  for (QpState s : {QpState::kReset, QpState::kInit, QpState::kRtr}) {
    PostVerdict v = JudgeSendList(Rc(s), {Send(), Send()}, Behaviour{});
    EXPECT_EQ(v.err, EINVAL);
    EXPECT_EQ(v.bad, 0u);
    EXPECT_EQ(v.queued, 0u);
    EXPECT_EQ(v.rule, PostRule::kSendBelowRts);
  }
  EXPECT_EQ(JudgeSendList(Rc(QpState::kRts), {Send()}, Behaviour{}).err, 0);
  EXPECT_EQ(JudgeSendList(Rc(QpState::kSqd), {Send()}, Behaviour{}).err, 0);
}

TEST(PostingRules, RxeQueuesASendBelowRtsAndTheDoorbellSaysEinval) {  // contract 3
  Behaviour rxe = FindDeviceDescription("rxe")->behaviour();
  PostVerdict all = JudgeSendList(Rc(QpState::kInit), {Send(), Send()}, rxe);
  EXPECT_EQ(all.err, EINVAL);
  EXPECT_EQ(all.bad, 2u);
  EXPECT_EQ(all.queued, 2u);
  // The queue fills at the third WR: ENOMEM's WR, but the doorbell's EINVAL.
  PostVerdict full = JudgeSendList(Rc(QpState::kInit, 2), {Send(), Send(), Send()}, rxe);
  EXPECT_EQ(full.err, EINVAL);
  EXPECT_EQ(full.bad, 2u);
  EXPECT_EQ(full.rule, PostRule::kQueueFull);
}

TEST(PostingRules, QueueFullIsEnomemAtTheFirstWrThatDoesNotFit) {  // R5
  PostVerdict v = JudgeSendList(Rc(QpState::kRts, 3), {Send(), Send()}, Behaviour{});
  EXPECT_EQ(v.err, ENOMEM);
  EXPECT_EQ(v.bad, 1u);
  EXPECT_EQ(v.queued, 1u);
}

TEST(PostingRules, TooManySgesIsEinvalAndNamesAFullQueueAsTheOtherPossibleAnswer) {  // R5
  PostVerdict v = JudgeSendList(Rc(QpState::kRts, 4), {Send(3)}, Behaviour{});
  EXPECT_EQ(v.err, EINVAL);
  EXPECT_EQ(v.rule, PostRule::kTooManySges);
  EXPECT_EQ(v.also, PostRule::kQueueFull);
}

TEST(PostingRules, ReceivesAreRefusedInResetAndOnAnSrqQp) {  // R4
  PostQueue q = Rc(QpState::kReset);
  EXPECT_EQ(JudgeRecvList(q, {1}).rule, PostRule::kRecvInReset);
  q.state = QpState::kInit;
  EXPECT_EQ(JudgeRecvList(q, {1, 1}).err, 0);
  q.has_srq = true;
  EXPECT_EQ(JudgeRecvList(q, {1}).err, EINVAL);
  EXPECT_EQ(JudgeRecvList(q, {1}).rule, PostRule::kRecvOnSrqQp);
}

TEST(PostingRules, OpcodeTheTypeLacksIsRefusedAtPostUnlessTheRequesterChecksIt) {
  PostQueue uc = Rc(QpState::kRts);
  uc.type = QpType::kUc;
  SendWrFacts read = Send();
  read.opcode = WrOpcode::kRdmaRead;
  EXPECT_EQ(CheckSendWr(uc, read, Behaviour{}), PostRule::kOpcodeNotForType);
  EXPECT_EQ(CheckSendWr(uc, read, FindDeviceDescription("rxe")->behaviour()), PostRule::kOk);
  EXPECT_FALSE(OpcodeAllowed(QpType::kUd, WrOpcode::kRdmaWrite));
  EXPECT_TRUE(OpcodeAllowed(QpType::kXrcSend, WrOpcode::kAtomicFetchAndAdd));
}

TEST(PostingRules, InlineAndAtomicLimits) {
  PostQueue q = Rc(QpState::kRts);
  SendWrFacts f = Send();
  f.is_inline = true;
  f.length = 65;
  EXPECT_EQ(CheckSendWr(q, f, Behaviour{}), PostRule::kInlineTooLong);
  f.length = 8;
  f.opcode = WrOpcode::kRdmaRead;
  EXPECT_EQ(CheckSendWr(q, f, Behaviour{}), PostRule::kInlineNotForOp);
  SendWrFacts atomic = Send();
  atomic.opcode = WrOpcode::kAtomicFetchAndAdd;
  atomic.remote_addr = 4;
  EXPECT_EQ(CheckSendWr(q, atomic, Behaviour{}), PostRule::kAtomicNotAligned);
  EXPECT_EQ(PostRuleErrno(PostRule::kAtomicNotAligned), EINVAL);
}

TEST(PostingRules, WrsPostedInErrAreFlushedAtOnceExceptReceivesOnRxe) {  // R4, R6
  EXPECT_TRUE(FlushedAtPost(true, QpState::kErr, Behaviour{}));
  EXPECT_TRUE(FlushedAtPost(true, QpState::kSqe, Behaviour{}));
  EXPECT_TRUE(FlushedAtPost(false, QpState::kErr, Behaviour{}));
  EXPECT_FALSE(FlushedAtPost(false, QpState::kErr, FindDeviceDescription("rxe")->behaviour()));
  EXPECT_FALSE(FlushedAtPost(false, QpState::kSqe, Behaviour{}));
}

TEST(PostingRules, EveryRuleHasANameAndAReason) {
  for (size_t i = 0; i < static_cast<size_t>(PostRule::kCount); ++i) {
    const PostRule r = static_cast<PostRule>(i);
    EXPECT_FALSE(PostRuleName(r).empty());
    EXPECT_FALSE(PostRuleReason(r).empty());
    EXPECT_EQ(PostRuleErrno(r) == 0, r == PostRule::kOk);
  }
}

}  // namespace
}  // namespace qptwin
