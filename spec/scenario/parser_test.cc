#include "spec/scenario/parser.h"

#include <cerrno>
#include <sstream>
#include <vector>
#include <string>

#include "gtest/gtest.h"
#include "spec/scenario/verb_table.h"

namespace qptwin::scenario {
namespace {

// Objects every test can refer to: lines 1..9.
constexpr char kSetup[] =
    "device d profile=rxe\n"
    "pd p\n"
    "mr m pd=p len=4096 access=LOCAL_WRITE|REMOTE_WRITE\n"
    "cq c cqe=32\n"
    "srq s pd=p max_wr=8 max_sge=2\n"
    "qp a type=RC pd=p send_cq=c recv_cq=c max_send_wr=3\n"
    "qp b type=UD pd=p send_cq=c recv_cq=c srq=s sq_sig_all=1\n"
    "# a comment line\n"
    "\n";

Command ParseOne(const std::string& line) {
  Scenario sc;
  ParseError err;
  bool ok = ParseScenario(std::string(kSetup) + line, &sc, &err);
  EXPECT_TRUE(ok) << err.ToString();
  if (!ok || sc.commands.empty()) return Command{};
  return sc.commands.back();
}

ParseError ParseBad(const std::string& text) {
  Scenario sc;
  ParseError err;
  EXPECT_FALSE(ParseScenario(text, &sc, &err)) << text;
  return err;
}

// The error for `line` appended after kSetup (so on line 10).
std::string BadLine(const std::string& line) {
  ParseError err = ParseBad(std::string(kSetup) + line);
  EXPECT_EQ(err.line, 10) << err.message;
  return err.message;
}

TEST(VerbTable, IsIndexedByVerb) {
  for (int i = 0; i < kNumVerbs; ++i) {
    EXPECT_EQ(static_cast<int>(SpecOf(static_cast<Verb>(i)).verb), i);
  }
}

TEST(Parser, SetupCommandsKeepLineNumbersAndValues) {
  Scenario sc;
  ParseError err;
  ASSERT_TRUE(ParseScenario(kSetup, &sc, &err)) << err.ToString();
  ASSERT_EQ(sc.commands.size(), 7u);
  EXPECT_EQ(sc.device_lines, 1);
  EXPECT_EQ(sc.first_profile, "rxe");
  const Command& mr = sc.commands[2];
  EXPECT_EQ(mr.line, 3);
  EXPECT_EQ(mr.verb, Verb::kMr);
  EXPECT_EQ(mr.pd, "p");
  EXPECT_EQ(mr.length, 4096u);
  EXPECT_EQ(mr.access, access::kLocalWrite | access::kRemoteWrite);
  EXPECT_EQ(sc.commands[1].device, "d");  // pd on the latest device
  EXPECT_EQ(sc.commands[3].cqe, 32);
  EXPECT_EQ(sc.commands[4].max_wr, 8u);
  EXPECT_EQ(sc.commands[4].max_sge, 2u);
  const Command& qp = sc.commands[5];
  EXPECT_EQ(qp.init.qp_type, QpType::kRc);
  EXPECT_EQ(qp.send_cq, "c");
  EXPECT_EQ(qp.init.cap.max_send_wr, 3u);
  EXPECT_EQ(qp.init.cap.max_recv_wr, 16u);  // default
  const Command& ud = sc.commands[6];
  EXPECT_EQ(ud.init.qp_type, QpType::kUd);
  EXPECT_EQ(ud.srq, "s");
  EXPECT_TRUE(ud.init.sq_sig_all);
}

TEST(Parser, ModifyMaskIsExactlyTheNamedAttributes) {
  Command c = ParseOne("modify a state=RTR path_mtu=1024 dest=a rq_psn=0 min_rnr_timer=12 "
                       "max_dest_rd_atomic=1");
  EXPECT_EQ(c.mask, attr::kState | attr::kPathMtu | attr::kAv | attr::kDestQpn | attr::kRqPsn |
                        attr::kMinRnrTimer | attr::kMaxDestRdAtomic);
  EXPECT_EQ(c.attr.qp_state, QpState::kRtr);
  EXPECT_EQ(c.attr.path_mtu, Mtu::k1024);
  EXPECT_EQ(c.attr.min_rnr_timer, 12);
  EXPECT_EQ(c.dest, "a");
  c = ParseOne("modify a pkey_index=0 port=1 access=REMOTE_READ qkey=0x11 cur_state=RTS "
               "sq_psn=5 timeout=14 retry_cnt=7 rnr_retry=6 max_rd_atomic=2 "
               "en_sqd_async_notify=1 path_mtu=IBV_MTU_256");
  EXPECT_EQ(c.mask, attr::kPkeyIndex | attr::kPort | attr::kAccessFlags | attr::kQkey |
                        attr::kCurState | attr::kSqPsn | attr::kTimeout | attr::kRetryCnt |
                        attr::kRnrRetry | attr::kMaxQpRdAtomic | attr::kEnSqdAsyncNotify |
                        attr::kPathMtu);
  EXPECT_EQ(c.attr.qkey, 0x11u);
  EXPECT_EQ(c.attr.cur_qp_state, QpState::kRts);
  EXPECT_EQ(c.attr.path_mtu, Mtu::k256);
  EXPECT_TRUE(c.attr.en_sqd_async_notify);
  EXPECT_EQ(ParseOne("modify a").mask, 0u);
}

TEST(Parser, PostSendResolvesEveryArgument) {
  Command c = ParseOne("post_send a wr_id=7 op=WRITE_IMM sge=m:0:8,m:64:16 remote=m:128 imm=5 "
                       "flags=SIGNALED|FENCE count=2 expect=ENOMEM");
  EXPECT_EQ(c.send.wr_id, 7u);
  EXPECT_EQ(c.send.opcode, WrOpcode::kRdmaWriteWithImm);
  ASSERT_EQ(c.sges.size(), 2u);
  EXPECT_EQ(c.sges[1].offset, 64u);
  EXPECT_EQ(c.sges[1].length, 16u);
  ASSERT_TRUE(c.remote.has_value());
  EXPECT_EQ(c.remote->offset, 128u);
  EXPECT_EQ(c.send.imm_data, 5u);
  EXPECT_EQ(c.send.send_flags, send_flag::kSignaled | send_flag::kFence);
  EXPECT_EQ(c.count, 2u);
  EXPECT_EQ(c.expect.kind, Expect::Kind::kErrno);
  EXPECT_EQ(c.expect.err, ENOMEM);
  c = ParseOne("post_send b wr_id=1 op=SEND ah=a qkey=9");
  EXPECT_EQ(c.ah, "a");
  EXPECT_TRUE(c.remote_qkey_given);
  EXPECT_EQ(c.send.remote_qkey, 9u);
  c = ParseOne("post_send a wr_id=2 op=CMP_SWP compare=1 swap=2 remote=m:0");
  EXPECT_EQ(c.send.opcode, WrOpcode::kAtomicCmpAndSwp);
  EXPECT_EQ(c.send.compare_add, 1u);
  EXPECT_EQ(c.send.swap, 2u);
  EXPECT_EQ(ParseOne("post_send a wr_id=3 op=FETCH_ADD add=9").send.compare_add, 9u);
  EXPECT_EQ(ParseOne("post_send a wr_id=3 op=RDMA_READ").send.opcode, WrOpcode::kRdmaRead);
}

TEST(Parser, PostRecvTakesQpOrSrq) {
  Command c = ParseOne("post_recv s wr_id=3 sge=m:0:64");
  EXPECT_EQ(c.name, "s");
  EXPECT_EQ(c.wr_id, 3u);
  ASSERT_EQ(c.sges.size(), 1u);
  EXPECT_EQ(ParseOne("post_recv a wr_id=4").name, "a");
}

TEST(Parser, PollQueryEventsExpectations) {
  Command c = ParseOne("poll c n=2 timeout_ms=50 expect=SUCCESS,WR_FLUSH_ERR");
  EXPECT_EQ(c.n, 2);
  EXPECT_EQ(c.timeout_ms, 50u);
  EXPECT_EQ(c.expect.statuses,
            (std::vector<WcStatus>{WcStatus::kSuccess, WcStatus::kWrFlushErr}));
  c = ParseOne("poll c");
  EXPECT_EQ(c.n, 1);
  EXPECT_EQ(c.timeout_ms, 1000u);
  EXPECT_EQ(c.expect.kind, Expect::Kind::kNone);
  c = ParseOne("poll c expect=none");
  EXPECT_EQ(c.expect.kind, Expect::Kind::kStatuses);
  EXPECT_TRUE(c.expect.statuses.empty());
  c = ParseOne("query a expect=RTS");
  EXPECT_EQ(c.expect.kind, Expect::Kind::kState);
  EXPECT_EQ(c.expect.state, QpState::kRts);
  c = ParseOne("events wait=SQ_DRAINED timeout_ms=10 expect=SQ_DRAINED");
  ASSERT_TRUE(c.wait_for.has_value());
  EXPECT_EQ(*c.wait_for, EventType::kSqDrained);
  EXPECT_EQ(c.expect.events, std::vector<EventType>{EventType::kSqDrained});
  EXPECT_EQ(ParseOne("events expect=none").expect.kind, Expect::Kind::kEvents);
  EXPECT_EQ(ParseOne("modify a state=ERR expect=ok").expect.kind, Expect::Kind::kOk);
}

TEST(Parser, FillCheckDestroyAdvance) {
  Command c = ParseOne("fill m 16 32 0xab");
  EXPECT_EQ(c.verb, Verb::kFill);
  EXPECT_EQ(c.name, "m");
  EXPECT_EQ(c.offset, 16u);
  EXPECT_EQ(c.length, 32u);
  EXPECT_EQ(c.byte, 0xab);
  EXPECT_EQ(ParseOne("check m 0 1 7").verb, Verb::kCheck);
  EXPECT_EQ(ParseOne("destroy a expect=ok").name, "a");
  EXPECT_EQ(ParseOne("advance us=20").advance_ns, 20000u);
}

TEST(Parser, SecondDeviceAndExplicitDev) {
  Scenario sc;
  ParseError err;
  ASSERT_TRUE(ParseScenario("device x\ndevice y\npd p1\npd p0 dev=x\ncq c dev=x\n", &sc, &err));
  EXPECT_EQ(sc.device_lines, 2);
  EXPECT_EQ(sc.commands[2].device, "y");
  EXPECT_EQ(sc.commands[3].device, "x");
  EXPECT_EQ(sc.commands[4].device, "x");
}

TEST(ParserErrors, UnknownCommandListsTheCommands) {
  EXPECT_NE(BadLine("frobnicate a").find("expected one of device, pd, mr"), std::string::npos);
}

TEST(ParserErrors, UnknownNameIsASyntaxError) {
  EXPECT_NE(BadLine("modify zz state=INIT").find("unknown name 'zz'"), std::string::npos);
  EXPECT_NE(BadLine("post_send a wr_id=1 op=SEND sge=nope:0:1").find("unknown name 'nope'"),
            std::string::npos);
}

TEST(ParserErrors, WrongKindNamesBoth) {
  std::string m = BadLine("poll a");
  EXPECT_NE(m.find("'a' is a QP"), std::string::npos) << m;
  EXPECT_NE(m.find("expected a CQ"), std::string::npos) << m;
}

TEST(ParserErrors, DuplicateName) {
  EXPECT_NE(BadLine("pd p").find("already declared at line 2"), std::string::npos);
}

TEST(ParserErrors, UnknownKeyListsTheKeys) {
  std::string m = BadLine("cq c2 depth=4");
  EXPECT_NE(m.find("unknown key 'depth'"), std::string::npos) << m;
  EXPECT_NE(m.find("cqe, dev, channel, expect"), std::string::npos) << m;
}

TEST(ParserErrors, DuplicateKeyAndEmptyValue) {
  EXPECT_NE(BadLine("poll c n=1 n=2").find("given twice"), std::string::npos);
  EXPECT_NE(BadLine("poll c n=").find("has no value"), std::string::npos);
}

TEST(ParserErrors, MissingRequiredKeyShowsUsage) {
  std::string m = BadLine("mr m2 pd=p");
  EXPECT_NE(m.find("missing len="), std::string::npos) << m;
  EXPECT_NE(m.find("expected: mr NAME pd=PD len=N"), std::string::npos) << m;
}

TEST(ParserErrors, WrongNumberOfWords) {
  EXPECT_NE(BadLine("fill m 0 4").find("expected 4 word(s)"), std::string::npos);
  EXPECT_NE(BadLine("pd").find("expected 1 word(s)"), std::string::npos);
  EXPECT_NE(BadLine("poll c n=1 extra").find("after key=value"), std::string::npos);
}

TEST(ParserErrors, BadValues) {
  EXPECT_NE(BadLine("poll c n=many").find("bad n 'many'"), std::string::npos);
  EXPECT_NE(BadLine("fill m 0 4 256").find("bad BYTE '256'"), std::string::npos);
  EXPECT_NE(BadLine("modify a timeout=300").find("bad timeout"), std::string::npos);
  EXPECT_NE(BadLine("modify a state=FOO").find("bad state"), std::string::npos);
  EXPECT_NE(BadLine("modify a path_mtu=1000").find("bad path_mtu"), std::string::npos);
  EXPECT_NE(BadLine("mr m3 pd=p len=1 access=WRITE").find("bad access"), std::string::npos);
  EXPECT_NE(BadLine("qp q type=XX pd=p send_cq=c recv_cq=c").find("bad type"),
            std::string::npos);
  EXPECT_NE(BadLine("post_send a wr_id=1 op=JUMP").find("bad op 'JUMP'"), std::string::npos);
  EXPECT_NE(BadLine("post_send a wr_id=1 op=SEND flags=LOUD").find("bad flags"),
            std::string::npos);
  EXPECT_NE(BadLine("post_send a wr_id=1 op=SEND sge=m:0").find("bad sge"), std::string::npos);
  EXPECT_NE(BadLine("post_send a wr_id=1 op=READ remote=m").find("bad remote"),
            std::string::npos);
  EXPECT_NE(BadLine("post_send a wr_id=1 op=FETCH_ADD compare=1 add=1").find("both"),
            std::string::npos);
  EXPECT_NE(BadLine("events wait=NOPE").find("bad wait"), std::string::npos);
  EXPECT_NE(BadLine("pd p9 dev=nodev").find("unknown name 'nodev'"), std::string::npos);
}

TEST(ParserErrors, BadExpectSaysWhatFits) {
  EXPECT_NE(BadLine("query a expect=FAST").find("a QP state"), std::string::npos);
  EXPECT_NE(BadLine("poll c expect=SUCCESS,BOGUS").find("completion statuses"),
            std::string::npos);
  EXPECT_NE(BadLine("pd p2 expect=RTS").find("ok or an errno name"), std::string::npos);
  EXPECT_NE(BadLine("events expect=WHATEVER").find("async event types"), std::string::npos);
}

TEST(ParserErrors, BadName) {
  EXPECT_NE(BadLine("pd 9lives").find("bad name"), std::string::npos);
}

TEST(ParserErrors, ObjectBeforeAnyDevice) {
  ParseError err = ParseBad("# nothing yet\npd p\n");
  EXPECT_EQ(err.line, 2);
  EXPECT_NE(err.message.find("no device yet"), std::string::npos);
  EXPECT_EQ(err.ToString().rfind("line 2: ", 0), 0u);
}

TEST(Parser, EmptyAndCommentOnlyTextsAreEmptyScenarios) {
  Scenario sc;
  ParseError err;
  EXPECT_TRUE(ParseScenario("", &sc, &err));
  EXPECT_TRUE(ParseScenario("# only\n\n   \n", &sc, &err));
  EXPECT_TRUE(sc.commands.empty());
}

}  // namespace
}  // namespace qptwin::scenario

namespace qptwin::scenario {
namespace {

TEST(ScenarioStream, GivesTheSameCommandsAsParseScenarioOneAtATime) {
  const std::string text = "device d\n\n# comment\npd p\ncq c   # trailing\nadvance us=3";
  Scenario whole;
  ParseError pe;
  ASSERT_TRUE(ParseScenario(text, &whole, &pe));
  std::istringstream in(text);
  ScenarioStream stream(&in);
  Command c;
  std::vector<int> lines;
  while (stream.Next(&c, &pe)) lines.push_back(c.line);
  EXPECT_FALSE(stream.failed());
  ASSERT_EQ(lines.size(), whole.commands.size());
  for (size_t i = 0; i < lines.size(); ++i) EXPECT_EQ(lines[i], whole.commands[i].line);
  EXPECT_EQ(stream.header().device_lines, 1);
}

TEST(ScenarioStream, AnEndlessLineIsALimitErrorWithItsLineNumber) {
  std::istringstream in("device d\n" + std::string(kMaxLineBytes + 1, 'a'));
  ScenarioStream stream(&in);
  Command c;
  ParseError pe;
  EXPECT_TRUE(stream.Next(&c, &pe));
  EXPECT_FALSE(stream.Next(&c, &pe));
  EXPECT_TRUE(stream.failed());
  EXPECT_EQ(pe.line, 2);
  EXPECT_NE(pe.message.find("line longer than 65536 bytes"), std::string::npos) << pe.message;
}

TEST(ScenarioStream, ASyntaxErrorStopsAtItsLine) {
  ScenarioStream stream(std::string_view("device d\npd p\nbogus x\npd q\n"));
  Command c;
  ParseError pe;
  int n = 0;
  while (stream.Next(&c, &pe)) ++n;
  EXPECT_EQ(n, 2);
  EXPECT_TRUE(stream.failed());
  EXPECT_EQ(pe.line, 3);
}

}  // namespace
}  // namespace qptwin::scenario
