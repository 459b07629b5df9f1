// The .qps commands for queries, completion channels, SRQ changes and CQ resizing.
#include "gtest/gtest.h"
#include "spec/scenario/parser.h"

namespace qptwin::scenario {
namespace {

constexpr char kSetup[] =
    "device d profile=rxe\n"
    "pd p\n"
    "channel ch\n"
    "cq c cqe=32 channel=ch\n"
    "srq s pd=p max_wr=8\n";

Command Last(const std::string& line) {
  Scenario sc;
  ParseError err;
  EXPECT_TRUE(ParseScenario(std::string(kSetup) + line, &sc, &err)) << err.ToString();
  return sc.commands.empty() ? Command{} : sc.commands.back();
}

std::string Error(const std::string& line) {
  Scenario sc;
  ParseError err;
  EXPECT_FALSE(ParseScenario(std::string(kSetup) + line, &sc, &err)) << line;
  return err.ToString();
}

TEST(ParserEvents, CqNamesItsChannel) {
  Scenario sc;
  ParseError err;
  ASSERT_TRUE(ParseScenario(kSetup, &sc, &err)) << err.ToString();
  EXPECT_EQ(sc.commands[2].verb, Verb::kChannel);
  EXPECT_EQ(sc.commands[2].device, "d");
  EXPECT_EQ(sc.commands[3].channel, "ch");
}

TEST(ParserEvents, ModifySrqMaskIsTheKeysNamed) {
  Command c = Last("modify_srq s srq_limit=3\n");
  EXPECT_EQ(c.srq_mask, srq_attr::kLimit);
  EXPECT_EQ(c.srq_attr.srq_limit, 3u);
  c = Last("modify_srq s max_wr=20 srq_limit=0\n");
  EXPECT_EQ(c.srq_mask, srq_attr::kLimit | srq_attr::kMaxWr);
  EXPECT_EQ(c.srq_attr.max_wr, 20u);
  EXPECT_EQ(Last("modify_srq s\n").srq_mask, 0u);
}

TEST(ParserEvents, NotifyEventAckResize) {
  EXPECT_TRUE(Last("req_notify c solicited=1\n").solicited);
  EXPECT_FALSE(Last("req_notify c\n").solicited);
  EXPECT_EQ(Last("get_cq_event ch timeout_ms=5\n").timeout_ms, 5u);
  EXPECT_EQ(Last("ack_cq_events c\n").n, 1);
  EXPECT_EQ(Last("ack_cq_events c n=3\n").n, 3);
  EXPECT_EQ(Last("resize_cq c cqe=100\n").cqe, 100);
  EXPECT_EQ(Last("query_port port=2\n").port, 2);
  EXPECT_EQ(Last("query_device dev=d\n").device, "d");
}

TEST(ParserEvents, ReregMrFlagsAreTheKeysNamed) {
  std::string setup = "mr m pd=p len=64\n";
  EXPECT_EQ(Last(setup + "rereg_mr m\n").rereg_flags, 0);
  Command c = Last(setup + "rereg_mr m pd=p len=128 access=LOCAL_WRITE\n");
  EXPECT_EQ(c.rereg_flags,
            rereg_flag::kChangePd | rereg_flag::kChangeTranslation | rereg_flag::kChangeAccess);
  EXPECT_EQ(c.length, 128u);
  EXPECT_EQ(c.access, access::kLocalWrite);
}

TEST(ParserEvents, WrongKindsAndMissingKeysAreSyntaxErrors) {
  EXPECT_NE(Error("get_cq_event c\n").find("line 6"), std::string::npos);
  EXPECT_NE(Error("req_notify ch\n").find("line 6"), std::string::npos);
  EXPECT_NE(Error("resize_cq c\n").find("cqe"), std::string::npos);
  EXPECT_NE(Error("query_srq c\n").find("line 6"), std::string::npos);
  EXPECT_NE(Error("req_notify c solicited=2\n").find("solicited"), std::string::npos);
}

}  // namespace
}  // namespace qptwin::scenario
