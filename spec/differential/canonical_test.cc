#include "spec/differential/canonical.h"

#include <gtest/gtest.h>

#include <string>

namespace qptwin::differential {
namespace {

using scenario::Outcome;
using scenario::RunResult;
using scenario::Step;

Outcome Wc(const std::string& qp, uint64_t wr_id, const std::string& wr_opcode) {
  Outcome o;
  o.kind = Outcome::Kind::kWc;
  o.qp = qp;
  o.wr_opcode = wr_opcode;
  o.wc.wr_id = wr_id;
  o.wc.status = WcStatus::kWrFlushErr;
  return o;
}

Outcome Polled(int k) {
  Outcome o;
  o.kind = Outcome::Kind::kPolled;
  o.count = k;
  return o;
}

TEST(ComparableTranscript, OnePollSortedByQueueKeepingEachQueuesOrder) {
  RunResult r;
  Step s;
  s.line = 9;
  s.outcomes = {Wc("b", 1, "SEND"), Wc("a", 10001, "RECV"), Wc("a", 3, "SEND"),
                Wc("a", 10000, "RECV"), Wc("b", 2, "SEND"), Polled(5)};
  r.steps.push_back(s);
  const std::string t = ComparableTranscript(r);
  EXPECT_EQ(t,
            "# L9 5 completions of 3 queues sorted by (qp, queue); each queue's order kept "
            "(across queues the order is the wire's)\n"
            "L9 wc wr_id=10001 status=WR_FLUSH_ERR qp=a\n"
            "L9 wc wr_id=10000 status=WR_FLUSH_ERR qp=a\n"
            "L9 wc wr_id=3 status=WR_FLUSH_ERR qp=a\n"
            "L9 wc wr_id=1 status=WR_FLUSH_ERR qp=b\n"
            "L9 wc wr_id=2 status=WR_FLUSH_ERR qp=b\n"
            "L9 polled 5\n");
}

TEST(ComparableTranscript, OneQueueIsLeftAsItIs) {
  RunResult r;
  Step s;
  s.line = 4;
  s.outcomes = {Wc("a", 2, "SEND"), Wc("a", 1, "SEND"), Polled(2)};
  r.steps.push_back(s);
  EXPECT_EQ(ComparableTranscript(r),
            "L4 wc wr_id=2 status=WR_FLUSH_ERR qp=a\nL4 wc wr_id=1 status=WR_FLUSH_ERR qp=a\n"
            "L4 polled 2\n");
}

TEST(ComparableTranscript, CompletionsOfDifferentPollsAreNeverMerged) {
  RunResult r;
  Step s1, s2;
  s1.line = 1;
  s1.outcomes = {Wc("b", 1, "SEND"), Polled(1)};
  s2.line = 2;
  s2.outcomes = {Wc("a", 1, "SEND"), Polled(1)};
  r.steps = {s1, s2};
  RunResult swapped;
  s1.outcomes = {Wc("a", 1, "SEND"), Polled(1)};
  s2.outcomes = {Wc("b", 1, "SEND"), Polled(1)};
  swapped.steps = {s1, s2};
  auto d = FirstDifference(ComparableTranscript(r), ComparableTranscript(swapped));
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->line, 1);
}

TEST(ComparableTranscript, EventsSortedByObject) {
  RunResult r;
  Step s;
  s.line = 3;
  Outcome e1, e2;
  e1.kind = e2.kind = Outcome::Kind::kEvent;
  e1.event = EventType::kSqDrained;
  e1.object = "qp=b";
  e2.event = EventType::kCqErr;
  e2.object = "cq=c";
  s.outcomes = {e1, e2};
  r.steps.push_back(s);
  const std::string t = ComparableTranscript(r);
  EXPECT_NE(t.find("# L3 2 events of 2 objects sorted by object"), std::string::npos) << t;
  EXPECT_LT(t.find("cq=c"), t.find("qp=b")) << t;
}

TEST(FirstDifference, NamesTheLineAndBothSides) {
  EXPECT_FALSE(FirstDifference("a\nb\n", "a\nb\n").has_value());
  auto d = FirstDifference("a\nb\n", "a\nc\n");
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->line, 2);
  EXPECT_EQ(d->a, "b");
  EXPECT_EQ(d->b, "c");
  d = FirstDifference("# 2 sorted\na\nb\n", "# 3 sorted\na\nc\n");
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->line, 3);
  EXPECT_EQ(d->b, "c");
  d = FirstDifference("a\n", "a\nx\n");
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->a, "(end)");
  EXPECT_EQ(d->b, "x");
}

}  // namespace
}  // namespace qptwin::differential
