// The run trace (trace.h), its narration (narrate.h) and its VCD/JSON renderings, on real runs
// of small scenarios on the model.
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <malloc.h>
#include <map>
#include <set>
#include <sstream>

#include "gtest/gtest.h"
#include "spec/scenario/narrate.h"
#include "spec/scenario/parser.h"
#include "tools/scenario/run_command.h"
#include "spec/scenario/runner.h"
#include "spec/scenario/stream_run.h"
#include "spec/scenario/trace_json.h"
#include "spec/scenario/trace_vcd.h"
#include "spec/scenario/transcript.h"

namespace qptwin::scenario {
namespace {

constexpr char kSetup[] = R"(device d0 profile=rxe
pd p
mr ma pd=p len=4096 access=LOCAL_WRITE
mr mb pd=p len=4096 access=LOCAL_WRITE|REMOTE_WRITE
cq ca
cq cb
qp a type=RC pd=p send_cq=ca recv_cq=ca max_send_wr=3
qp b type=RC pd=p send_cq=cb recv_cq=cb
modify a state=INIT pkey_index=0 port=1 access=0
modify b state=INIT pkey_index=0 port=1 access=REMOTE_WRITE
modify a state=RTR path_mtu=1024 dest=b rq_psn=0 max_dest_rd_atomic=0 min_rnr_timer=12
modify b state=RTR path_mtu=1024 dest=a rq_psn=0 max_dest_rd_atomic=0 min_rnr_timer=12
)";
constexpr char kToRts[] = R"(modify a state=RTS sq_psn=0 timeout=14 retry_cnt=7 rnr_retry=7 max_rd_atomic=0
modify b state=RTS sq_psn=0 timeout=14 retry_cnt=7 rnr_retry=7 max_rd_atomic=0
)";

RunResult RunText(const std::string& text) {
  Scenario sc;
  ParseError pe;
  EXPECT_TRUE(ParseScenario(text, &sc, &pe)) << pe.line << ": " << pe.message;
  std::string why;
  std::unique_ptr<Backend> backend =
      MakeScenarioBackend(BackendChoice{"model", "rxe", std::max(1, sc.device_lines), ""}, &why);
  EXPECT_NE(backend, nullptr) << why;
  return Runner(backend.get()).Run(sc);
}

const Step& StepAt(const RunResult& r, int line) {
  for (const Step& s : r.steps) {
    if (s.line == line) return s;
  }
  ADD_FAILURE() << "no step at line " << line;
  return r.steps.front();
}

bool Has(const std::vector<std::string>& lines, const std::string& part) {
  for (const std::string& l : lines) {
    if (l.find(part) != std::string::npos) return true;
  }
  return false;
}

std::string Why(const Step& s) {
  std::string out;
  for (const std::string& w : s.why) out += w + "\n";
  return out;
}

// The wr_ids of the completions a step polled, in the order it polled them.
std::vector<uint64_t> WrIds(const Step& s) {
  std::vector<uint64_t> ids;
  for (const Outcome& o : s.outcomes) {
    if (o.kind == Outcome::Kind::kWc) ids.push_back(o.wc.wr_id);
  }
  return ids;
}

// A set-up on rxe for the flush-order and walk tests: two RC QPs connected to each other and
// moved to RTS (path_mtu 1024, min_rnr_timer 17, timeout 11), made in the order given. With
// `second_device`, the second has a PD p1, a region m1 and a CQ c1 of its own on that device
// (d0 and d1 both declared); else both use d0's p0, m0 and c0. `second_moves_first`: the
// second QP's three modifies come before the first's.
struct RcQp {
  const char* name;
  int retry_cnt;
  int rnr_retry;
};
std::string RxeRcPair(const RcQp& first, const RcQp& second, const char* second_device = nullptr,
                      bool second_moves_first = false) {
  const std::string qp_caps =
      " max_send_wr=15 max_recv_wr=15 max_send_sge=2 max_recv_sge=2\n";
  std::string text = "device d0 profile=rxe\n";
  if (second_device) text += "device d1 profile=rxe\n";
  text += "pd p0 dev=d0\nmr m0 pd=p0 len=65536 access=LOCAL_WRITE|REMOTE_WRITE\n";
  std::string second_res = "p0", second_cq = "c0";
  if (second_device) {
    text += std::string("pd p1 dev=") + second_device +
            "\nmr m1 pd=p1 len=65536 access=LOCAL_WRITE|REMOTE_WRITE\n";
    second_res = "p1";
    second_cq = "c1";
  }
  text += "cq c0 cqe=63 dev=d0\n";
  if (second_device) text += std::string("cq c1 cqe=63 dev=") + second_device + "\n";
  text += std::string("qp ") + first.name + " type=RC pd=p0 send_cq=c0 recv_cq=c0" + qp_caps;
  text += std::string("qp ") + second.name + " type=RC pd=" + second_res + " send_cq=" +
          second_cq + " recv_cq=" + second_cq + qp_caps;
  auto moves = [](const RcQp& q, const RcQp& peer) {
    const std::string n = q.name;
    return "modify " + n + " state=INIT pkey_index=0 port=1 access=LOCAL_WRITE|REMOTE_WRITE\n" +
           "modify " + n + " state=RTR path_mtu=1024 dest=" + peer.name +
           " rq_psn=0 max_dest_rd_atomic=1 min_rnr_timer=17\n" + "modify " + n +
           " state=RTS sq_psn=0 timeout=11 retry_cnt=" + std::to_string(q.retry_cnt) +
           " rnr_retry=" + std::to_string(q.rnr_retry) + " max_rd_atomic=1\n";
  };
  text += second_moves_first ? moves(second, first) + moves(first, second)
                             : moves(first, second) + moves(second, first);
  return text;
}


TEST(Narration, PostSendBeforeRtsCitesR2AndTheState) {
  RunResult r = RunText(std::string(kSetup) + "post_send a wr_id=1 op=SEND sge=ma:0:16\n");
  const Step& s = StepAt(r, 13);
  EXPECT_TRUE(Has(s.why, "post_send needs RTS or later: the QP is in RTR (rdma-facts R2")) << Why(s);
}

TEST(Narration, IllegalModifyGivesTheOracleReasonAndTheRoute) {
  RunResult r = RunText(
      "device d\npd p\ncq c\nqp a type=RC pd=p send_cq=c recv_cq=c\nmodify a state=RTS sq_psn=0\n");
  const Step& s = StepAt(r, 5);
  EXPECT_TRUE(Has(s.why, "refused by the state table (kernel verbs.c ib_modify_qp_is_ok)")) << Why(s);
  EXPECT_TRUE(Has(s.why, "the legal route is RESET -> INIT [")) << Why(s);
  EXPECT_TRUE(Has(s.why, "stays in RESET")) << Why(s);
}

TEST(Narration, MissingAttributeNamesTheFixedMask) {
  RunResult r = RunText(std::string(kSetup) + "modify a state=RTS sq_psn=0\n");
  const Step& s = StepAt(r, 13);
  EXPECT_TRUE(Has(s.why, "a mask the table accepts for RC RTR->RTS: ")) << Why(s);
  EXPECT_TRUE(Has(s.why, "TIMEOUT")) << Why(s);
}

TEST(Narration, FullQueueAndPartialListAreExplained) {
  RunResult r = RunText(std::string(kSetup) + kToRts +
                        "post_send a wr_id=1 count=5 op=WRITE sge=ma:0:8 remote=mb:0\n");
  const Step& s = StepAt(r, 15);
  EXPECT_TRUE(Has(s.why, "the send queue is full: 0 of 3 outstanding when the list started (R5)") ||
              Has(s.why, "queue is full"))
      << Why(s);
  EXPECT_TRUE(Has(s.why, "the WRs before bad_wr were posted (3 here)")) << Why(s);
  EXPECT_TRUE(Has(s.why, "outstanding WRs: a SQ 0->3/3")) << Why(s);
}

TEST(Narration, ErrFlushesAndCqesAreExplained) {
  RunResult r = RunText(std::string(kSetup) + kToRts +
                        "post_recv a wr_id=7 sge=ma:100:8\nmodify a state=ERR\npoll ca\n");
  EXPECT_TRUE(Has(StepAt(r, 16).why, "ERR flushes every outstanding WR with WR_FLUSH_ERR")) << Why(StepAt(r, 16));
  EXPECT_TRUE(Has(StepAt(r, 17).why, "wr_id=7 on a: WR_FLUSH_ERR: flushed because the QP is in ERR"));
}

// rxe: a receive too small is a malformed WQE (REM_OP_ERR at the sender, LOC_QP_OP_ERR at the
// receiver; Behaviour::recv_error_is_malformed_wqe, examples/fidelity/03).
TEST(Narration, RemOpErrOnSendBlamesTheReceiveThatCouldNotTakeTheData) {
  RunResult r = RunText(std::string(kSetup) + kToRts +
                        "post_recv b wr_id=1 sge=mb:0:8\n"
                        "post_send a wr_id=2 op=SEND sge=ma:0:64 flags=SIGNALED\n"
                        "poll ca\npoll cb\n");
  const Step& s = StepAt(r, 17);
  ASSERT_EQ(s.outcomes.front().wc.status, WcStatus::kRemOpErr);
  EXPECT_TRUE(Has(s.why, "its receive could not take the data")) << Why(s);
  EXPECT_FALSE(Has(s.why, "access flags")) << Why(s);
  EXPECT_TRUE(Has(StepAt(r, 18).why, "this receive could not take the data")) << Why(StepAt(r, 18));
}

TEST(Narration, WrongCurStateIsNamedNotCalledLegal) {
  RunResult r = RunText(std::string(kSetup) + kToRts + "modify b state=ERR cur_state=RTR\n");
  const Step& s = StepAt(r, 15);
  EXPECT_EQ(s.outcomes.front().err, EINVAL);
  EXPECT_NE(s.note.find("IBV_QP_CUR_STATE does not match: cur_state=RTR but the QP is in RTS"),
            std::string::npos)
      << s.note;
  EXPECT_EQ(s.note.find("legal per the table"), std::string::npos) << s.note;
  EXPECT_TRUE(Has(s.why, "forbidden CUR_STATE")) << Why(s);
}

// A device destroyed takes its regions along: fill/check of one afterwards is out of range
// (as after destroy of the region), never a write into memory the backend freed or reuses
// (the model recycles region buffers; before, this wrote into an unmapped page).
TEST(Trace, FillOfARegionOfADestroyedDeviceIsOutOfRange) {
  RunResult r = RunText(
      "device d0 profile=rxe\npd p dev=d0\nmr m pd=p len=4096 access=LOCAL_WRITE\n"
      "destroy d0\nfill m 0 16 0x01\ncheck m 0 16 0x01\n");
  ASSERT_EQ(r.steps.size(), 6u);
  for (int line : {5, 6}) {
    const Step& s = StepAt(r, line);
    ASSERT_EQ(s.outcomes.size(), 1u);
    EXPECT_EQ(s.outcomes[0].kind, Outcome::Kind::kError);
    EXPECT_EQ(s.outcomes[0].err, EINVAL);
    ASSERT_EQ(s.failures.size(), 1u);
    EXPECT_NE(s.failures[0].find("outside MR m (length 0)"), std::string::npos) << s.failures[0];
  }
}

TEST(Trace, EveryPostedWrEndsExactlyOnce) {
  // wr 1,2 unsignaled, 3 signaled: 1 and 2 retire implicitly with 3's CQE; 4 is flushed by
  // ERR; the receive on b is discarded by RESET.
  RunResult r = RunText(std::string(kSetup) + kToRts +
                        "post_recv b wr_id=50 sge=mb:0:8\n"
                        "post_send a wr_id=1 count=2 op=WRITE sge=ma:0:8 remote=mb:64\n"
                        "post_send a wr_id=3 op=WRITE sge=ma:0:8 remote=mb:64 flags=SIGNALED\n"
                        "poll ca\n"
                        "modify b state=RESET\n");
  ASSERT_EQ(r.trace.wqes.size(), 4u);
  std::map<uint64_t, Wqe::End> end;
  for (const Wqe& w : r.trace.wqes) end[w.wr_id] = w.end;
  EXPECT_EQ(end[1], Wqe::End::kImplicit);
  EXPECT_EQ(end[2], Wqe::End::kImplicit);
  EXPECT_EQ(end[3], Wqe::End::kCqe);
  EXPECT_EQ(end[50], Wqe::End::kDiscarded);
  EXPECT_EQ(r.steps.back().qps.size(), 2u);
  for (const QpView& v : r.steps.back().qps) {
    EXPECT_EQ(v.sq, 0) << v.name;
    EXPECT_EQ(v.rq, 0) << v.name;
  }
}

// Issue 14: accounting by queue position, whatever the wr_ids (accounting.h).
TEST(Trace, RepeatedWrIdsGiveTheCqeToTheSignaledWr) {
  RunResult r = RunText(std::string(kSetup) + kToRts +
                        "post_send a wr_id=0 op=WRITE sge=ma:0:8 remote=mb:64\n"
                        "post_send a wr_id=0 op=WRITE sge=ma:0:8 remote=mb:64 flags=SIGNALED\n"
                        "poll ca\n");
  ASSERT_EQ(r.trace.wqes.size(), 2u);
  EXPECT_EQ(r.trace.wqes[0].end, Wqe::End::kImplicit);
  EXPECT_EQ(r.trace.wqes[1].end, Wqe::End::kCqe);
  EXPECT_EQ(r.trace.wqes[1].status, WcStatus::kSuccess);
}

TEST(Trace, SharedCqFlushesOfBothQueuesWithOneWrIdAreEachCharged) {
  // a's CQ ca serves both of its queues; every WR has wr_id 0.
  RunResult r = RunText(std::string(kSetup) + kToRts +
                        "post_recv a wr_id=0 sge=ma:100:8\n"
                        "post_send a wr_id=0 op=SEND sge=ma:0:8 flags=SIGNALED\n"
                        "modify a state=ERR\n"
                        "poll ca n=3 timeout_ms=10\n");
  int cqes = 0;
  for (const Wqe& w : r.trace.wqes) {
    if (w.qp != "a") continue;
    EXPECT_NE(w.end, Wqe::End::kOutstanding) << w.queue;
    cqes += w.end == Wqe::End::kCqe;
  }
  int polled = 0;
  for (const Outcome& o : StepAt(r, 18).outcomes) polled += o.kind == Outcome::Kind::kWc && o.qp == "a";
  EXPECT_EQ(cqes, polled);
}

TEST(Trace, CqePolledAfterDestroyIsRecorded) {
  RunResult r = RunText(std::string(kSetup) + kToRts +
                        "post_recv a wr_id=9 sge=ma:100:8\n"
                        "modify a state=ERR\n"
                        "destroy a\n"
                        "poll ca timeout_ms=10\n");
  ASSERT_EQ(r.trace.wqes.size(), 1u);
  const Wqe& w = r.trace.wqes[0];
  bool polled = false;
  for (const Outcome& o : StepAt(r, 18).outcomes) polled |= o.kind == Outcome::Kind::kWc;
  if (polled) {
    EXPECT_EQ(w.end, Wqe::End::kCqe);
    EXPECT_EQ(w.status, WcStatus::kWrFlushErr);
    EXPECT_EQ(w.end_line, 18);
  } else {
    EXPECT_EQ(w.end, Wqe::End::kDestroyed);
  }
}

// docs/differences.md row 150 (differential seed 308692050115 sequence 395; examples/fidelity/37):
// an RC QP in an RNR loop towards a QP of another device whose receive is too small. When the
// NAK answers a request the RNR timer's retry sent, rxe flushes the requester's send queue
// before its receive queue (Behaviour::retried_request_nak_flushes_sq_first); when it answers
// a request a post sent, the receive queue first (rxe_qp_error's order).
TEST(FlushOrder, ANakToARetryFromAnotherDeviceFlushesTheSendQueueFirst) {
  const std::string setup = RxeRcPair({"r", 1, 0}, {"s", 1, 7}, "d1") +
                            "post_recv s wr_id=10 sge=m1:0:240\n";
  const std::string send = "post_send s wr_id=1 op=SEND count=3 sge=m1:1024:64 flags=SIGNALED\n";
  const std::string small_recv = "post_recv r wr_id=20 sge=m0:0:8\n";
  struct Case {
    const char* name;
    std::string steps;
    std::vector<uint64_t> order;
  };
  const Case cases[] = {
      {"retry", send + "advance us=30000\n" + small_recv + "advance us=30000\n", {1, 2, 3, 10}},
      {"post", small_recv + send + "advance us=30000\n", {1, 10, 2, 3}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    RunResult r = RunText(setup + c.steps + "poll c1 n=64 timeout_ms=0\n");
    EXPECT_EQ(WrIds(r.steps.back()), c.order);
  }
}

// docs/differences.md row 153 (probes rnrexc-*; examples/fidelity/40): the same order for an
// RNR NAK one past rnr_retry (RNR_RETRY_EXC_ERR), from another device or this one. When it
// answers the RNR timer's retry (rnr_retry 1), rxe flushes the send queue first; when it
// answers the post's own request (rnr_retry 0), the receive queue first.
TEST(FlushOrder, AnRnrNakPastRnrRetryToARetryFlushesTheSendQueueFirst) {
  for (const bool same_device : {false, true}) {
    for (const int rnr_retry : {0, 1, 2}) {
      const std::string d = same_device ? "d0" : "d1";
      const std::string text = RxeRcPair({"r", 1, 0}, {"s", 1, rnr_retry}, d.c_str()) +
                               "post_recv s wr_id=10 sge=m1:0:240\n"
                               "post_send s wr_id=1 op=SEND count=3 sge=m1:1024:64 flags=SIGNALED\n"
                               "advance us=30000\n"
                               "poll c1 n=64 timeout_ms=0\n";
      SCOPED_TRACE((same_device ? "one device, rnr_retry " : "two devices, rnr_retry ") +
                   std::to_string(rnr_retry));
      RunResult r = RunText(text);
      const std::vector<uint64_t> want =
          rnr_retry == 0 ? std::vector<uint64_t>{1, 10, 2, 3} : std::vector<uint64_t>{1, 2, 3, 10};
      EXPECT_EQ(WrIds(r.steps.back()), want);
    }
  }
  // A 3-packet WRITE_WITH_IMM posted in SQD, sent by the next post after SQD -> RTS and
  // NAKed at its last packet (differential seed 20261282 sequence 1783, rxe 3 of 3): that
  // NAK answers a request a post sent, so the receives go first.
  RunResult r = RunText(RxeRcPair({"r", 1, 0}, {"s", 1, 0}) + R"(
post_recv s wr_id=10 sge=m0:0:240
modify s state=SQD
advance us=2000
post_send s wr_id=1 op=WRITE_IMM sge=m0:8192:3000 remote=m0:16384 imm=5 flags=SIGNALED
advance us=2000
modify s state=RTS
post_send s wr_id=2 op=SEND sge=m0:1024:64 flags=SIGNALED|FENCE
advance us=30000
poll c0 n=64 timeout_ms=0
)");
  EXPECT_EQ(WrIds(r.steps.back()), (std::vector<uint64_t>{1, 10, 2}))
      << "a multi-packet message's last packet";
}

// docs/differences.md row 154 (campaign 20261283 sequence 343; examples/fidelity/41): a FENCE
// WRITE_WITH_IMM RNR-NAKed at its last packet, a READ behind it NAKed for its PSN, which
// acknowledges the WRITE's first two packets; the RNR timer's retry stalls at the fence at
// comp.psn, so ibv_query_qp's sq_psn reads 2 (rxe 3 of 3), not the WRITE's first PSN, in RTS
// and after SQD -> SQ_DRAINED.
TEST(FencedRetry, AStallAtTheFenceReadsThePsnTheSequenceNakAcknowledged) {
  std::string text = RxeRcPair({"r", 1, 0}, {"s", 1, 7}, "d1") +
                     "post_send s wr_id=1 op=WRITE_IMM sge=m1:8192:3001 remote=m0:4096 imm=7 "
                     "flags=SIGNALED|FENCE\n"
                     "post_send s wr_id=2 op=READ sge=m1:0:8 remote=m0:0 flags=SIGNALED\n"
                     "advance us=60000\nquery s\nmodify s state=SQD\n"
                     "events wait=SQ_DRAINED timeout_ms=30\nquery s\n";
  // RxeRcPair's regions allow LOCAL_WRITE|REMOTE_WRITE: the READ never executes (NAKed).
  // The sq_psn of every query, in order.
  auto sq_psns = [](const RunResult& run) {
    std::vector<std::string> psns;
    for (const Step& s : run.steps) {
      for (const Outcome& o : s.outcomes) {
        if (o.kind != Outcome::Kind::kAttrs || o.text.rfind("qp_attr ", 0) != 0) continue;
        const size_t at = o.text.find(" sq_psn=");
        psns.push_back(o.text.substr(at + 1, o.text.find(' ', at + 1) - at - 1));
      }
    }
    return psns;
  };
  const std::vector<std::string> psns = sq_psns(RunText(text));
  EXPECT_EQ(psns, (std::vector<std::string>{"sq_psn=2", "sq_psn=2"}));
  // Behind a head the timeout's retry resent (tests/differential/probes/
  // fence-stall-behind-head, rxe 3 of 3): req.psn has moved on to the stalled WR's first PSN.
  std::string behind = R"(device d0 profile=rxe
device d1 profile=rxe
pd p0 dev=d0
mr m0 pd=p0 len=65536 access=LOCAL_WRITE|REMOTE_WRITE|REMOTE_READ
pd p1 dev=d1
mr m1 pd=p1 len=65536 access=LOCAL_WRITE|REMOTE_WRITE|REMOTE_READ
cq c0 cqe=63 dev=d0
cq c1 cqe=63 dev=d1
qp q0 type=RC pd=p0 send_cq=c0 recv_cq=c0 max_send_wr=15 max_recv_wr=15
qp q1 type=RC pd=p1 send_cq=c1 recv_cq=c1 max_send_wr=15 max_recv_wr=15
modify q1 state=INIT pkey_index=0 port=1 access=LOCAL_WRITE|REMOTE_WRITE|REMOTE_READ
modify q1 state=RTR path_mtu=1024 dest=q0 rq_psn=0 max_dest_rd_atomic=1 min_rnr_timer=12
modify q1 state=ERR
modify q0 state=INIT pkey_index=0 port=1 access=LOCAL_WRITE|REMOTE_WRITE|REMOTE_READ
modify q0 state=RTR path_mtu=1024 dest=q1 rq_psn=0 max_dest_rd_atomic=1 min_rnr_timer=12
modify q0 state=RTS sq_psn=0 timeout=14 retry_cnt=7 rnr_retry=0 max_rd_atomic=1
post_send q0 wr_id=1 op=SEND sge=m0:0:8 flags=SIGNALED
post_send q0 wr_id=2 op=WRITE sge=m0:64:8 remote=m1:4096 flags=SIGNALED|FENCE
post_send q0 wr_id=3 op=READ sge=m0:128:8 remote=m1:8192 flags=SIGNALED
advance us=100000
query q0
advance us=100000
query q0
)";
  EXPECT_EQ(sq_psns(RunText(behind)), (std::vector<std::string>{"sq_psn=1", "sq_psn=1"}))
      << "behind the head";
}

// docs/differences.md row 151 (differential seed 20261276 sequence 2852; examples/fidelity/38):
// a post that fills the send queue and fails inside it (RNR_RETRY_EXC_ERR) leaves rxe's
// requester index two WQEs on; SENDs posted in ERR that bring the producer one whole ring past
// it are not seen (req_next_wqe), so they wait for the next modify to ERR. A shorter first post
// leaves them visible: flushed at once. (A first version walked the requester once more for
// the refused post's doorbell, which had already run it.)
TEST(WalkInError, SendsPostedInErrAWholeRingPastTheRequesterWaitForTheNextErr) {
  const std::string setup = RxeRcPair({"q0", 1, 7}, {"q1", 0, 0}, nullptr, true);
  for (const int first : {3, 18}) {
    SCOPED_TRACE(first);
    RunResult r = RunText(setup + "post_send q1 wr_id=100 op=SEND count=" + std::to_string(first) +
                          " sge=m0:0:64 flags=SIGNALED\nadvance us=60000\n"
                          "poll c0 n=64 timeout_ms=0\n"
                          "post_send q1 wr_id=1 op=SEND count=3 sge=m0:0:8\nadvance us=60000\n"
                          "poll c0 n=64 timeout_ms=0\nmodify q1 state=ERR\n"
                          "poll c0 n=64 timeout_ms=0\n");
    auto wr_ids = [&r](int line) { return WrIds(StepAt(r, line)); };
    EXPECT_EQ(wr_ids(15).size(), first == 18 ? 15u : 3u) << "the first post's WRs, all completed";
    const std::vector<uint64_t> three{1, 2, 3};
    EXPECT_EQ(wr_ids(18), first == 18 ? std::vector<uint64_t>{} : three) << "at their post";
    EXPECT_EQ(wr_ids(20), first == 18 ? three : std::vector<uint64_t>{}) << "at the next ERR";
  }
}

// docs/differences.md row 152 (differential seed 20261277 sequence 1015; examples/fidelity/39):
// UD SENDs the requester sent behind a head it never takes (after ERR -> RTS the producer went
// round onto stale slots) complete neither in RTS nor with SUCCESS: the move to ERR flushes
// them with the rest (rxe_comp.c flush_send_queue). A first version reported them SUCCESS.
TEST(WalkInError, UdSendsSentBehindAHeadNeverTakenAreFlushed) {
  RunResult r = RunText(R"(device d0 profile=rxe
pd p0 dev=d0
mr m0 pd=p0 len=65536 access=LOCAL_WRITE|REMOTE_WRITE|REMOTE_READ|REMOTE_ATOMIC
cq c0 cqe=63 dev=d0
qp q2 type=UD pd=p0 send_cq=c0 recv_cq=c0 max_send_wr=15 max_recv_wr=15 max_send_sge=2 max_recv_sge=2
qp q3 type=UD pd=p0 send_cq=c0 recv_cq=c0 max_send_wr=15 max_recv_wr=15 max_send_sge=2 max_recv_sge=2
modify q2 state=INIT pkey_index=0 port=1 qkey=0x11111111
modify q2 state=RTR
modify q2 state=RTS sq_psn=0
modify q3 state=INIT pkey_index=0 port=1 qkey=0x11111111
modify q3 state=RTR
modify q3 state=RTS sq_psn=0
post_send q3 wr_id=4 op=FETCH_ADD sge=m0:24824:8 remote=m0:488 add=224 ah=q2 flags=SIGNALED
advance us=30000
poll c0 n=64 timeout_ms=0
post_send q3 wr_id=7 op=SEND count=10 sge=m0:24936:8 ah=q2 flags=SIGNALED
advance us=2000
poll c0 n=64 timeout_ms=30
modify q3 state=RTS cur_state=RTS
post_send q3 wr_id=17 op=SEND count=13 sge=m0:25021:64 ah=q2 flags=SIGNALED
advance us=30000
poll c0 n=64 timeout_ms=30
query q3
modify q3 state=ERR
advance us=30000
poll c0 n=64 timeout_ms=30)");
  auto statuses = [&r](int line) {
    std::vector<WcStatus> got;
    for (const Outcome& o : StepAt(r, line).outcomes) {
      if (o.kind == Outcome::Kind::kWc) got.push_back(o.wc.status);
    }
    return got;
  };
  EXPECT_TRUE(statuses(22).empty()) << "nothing completes in RTS";
  EXPECT_EQ(statuses(26), std::vector<WcStatus>(13, WcStatus::kWrFlushErr));
}

TEST(Trace, StateChangesIncludeWhatTheDeviceDid) {
  RunResult r = RunText(std::string(kSetup) + kToRts +
                        "post_send a wr_id=1 op=WRITE sge=ma:0:64 remote=mb:4064 flags=SIGNALED\n"
                        "poll ca\n");
  std::vector<std::string> seen;
  uint64_t last = 0;
  for (const StateEvent& e : r.trace.states) {
    EXPECT_GE(e.time_ns, last) << "state changes out of time order";
    last = e.time_ns;
    seen.push_back(e.qp + ":" + std::string(ToName(e.to)) + ":" + e.cause);
  }
  EXPECT_EQ(seen.front(), "a:RESET:created");
  EXPECT_EQ(seen[2], "a:INIT:modify");
  EXPECT_NE(r.trace.states.back().cause, "modify");  // the device moved a QP to ERR
  EXPECT_EQ(r.trace.states.back().to, QpState::kErr);
}

// A small VCD reader: declarations, then time-ordered changes of declared codes only.
void ValidateVcd(const std::string& vcd, int* vars, int* changes) {
  std::istringstream in(vcd);
  std::set<std::string> codes;
  bool defs_done = false, timescale = false;
  long long last_time = -1;
  *vars = *changes = 0;
  for (std::string line; std::getline(in, line);) {
    if (line.empty()) continue;
    if (!defs_done) {
      if (line == "$timescale 1ns $end") timescale = true;
      if (line.rfind("$var ", 0) == 0) {
        std::istringstream v(line);
        std::string tag, type, width, code, name, end;
        v >> tag >> type >> width >> code >> name >> end;
        EXPECT_TRUE(type == "integer" || type == "wire" || type == "real") << line;
        EXPECT_EQ(end, "$end") << line;
        EXPECT_TRUE(codes.insert(code).second) << "duplicate code " << code;
        ++*vars;
      }
      if (line == "$enddefinitions $end") defs_done = true;
      continue;
    }
    if (line[0] == '#') {
      long long t = std::stoll(line.substr(1));
      EXPECT_GT(t, last_time) << "times must increase";
      last_time = t;
      continue;
    }
    if (line[0] == '$') continue;  // $dumpvars / $end
    std::string code = line[0] == 'b' ? line.substr(line.find(' ') + 1) : line.substr(1);
    EXPECT_TRUE(codes.count(code)) << "undeclared code in " << line;
    ++*changes;
  }
  EXPECT_TRUE(timescale);
  EXPECT_TRUE(defs_done);
}

TEST(Vcd, IsWellFormedAndShowsStatesAndDepths) {
  RunResult r = RunText(std::string(kSetup) + kToRts +
                        "post_send a wr_id=1 op=WRITE sge=ma:0:8 remote=mb:0 flags=SIGNALED\n"
                        "poll ca\nmodify a state=ERR\n");
  std::string vcd = RenderVcd(r, "t.qps");
  int vars = 0, changes = 0;
  ValidateVcd(vcd, &vars, &changes);
  EXPECT_EQ(vars, 2 + 2 * 4);  // line, failures; 4 per QP
  EXPECT_GT(changes, 20);
  EXPECT_NE(vcd.find("$var integer 8 # state $end"), std::string::npos);
  EXPECT_NE(vcd.find("b110 #"), std::string::npos);  // a reached ERR (6)
  EXPECT_NE(vcd.find("b1 %"), std::string::npos);    // a's SQ held one WR
}

TEST(TraceJson, HasSchemaAndEventsOfEveryKind) {
  RunResult r = RunText(std::string(kSetup) + kToRts +
                        "post_send a wr_id=1 op=WRITE sge=ma:0:8 remote=mb:0 flags=SIGNALED\n"
                        "poll ca\nevents\n");
  std::string json = RenderTraceJson(r, "t \"q\".qps", "model/rxe", "simulated");
  EXPECT_NE(json.find("\"schema\": \"qptwin-trace/1\""), std::string::npos);
  EXPECT_NE(json.find("\"scenario\": \"t \\\"q\\\".qps\""), std::string::npos);
  for (const char* kind : {"call", "post", "completion", "state", "depth"}) {
    EXPECT_NE(json.find(std::string("\"kind\": \"") + kind + "\""), std::string::npos) << kind;
  }
  EXPECT_NE(json.find("\"status\": \"SUCCESS\", \"opcode\": \"RDMA_WRITE\""), std::string::npos);
  // Balanced braces and brackets outside strings: a cheap well-formedness check.
  int depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < json.size(); ++i) {
    char c = json[i];
    if (in_string) {
      if (c == '\\') ++i;
      else if (c == '"') in_string = false;
      continue;
    }
    if (c == '"') in_string = true;
    if (c == '{' || c == '[') ++depth;
    if (c == '}' || c == ']') --depth;
    ASSERT_GE(depth, 0);
  }
  EXPECT_EQ(depth, 0);
}

// Issue 14: a streamed run costs its objects and outstanding WRs, not its lines. The heap in
// use while a scenario of post/poll pairs runs (the text itself allocated before) grows by
// less than 4 bytes per line between 20,000 and 200,000 lines.
size_t StreamedPeakHeap(int pairs) {
  std::string text = std::string(kSetup) + kToRts;
  for (int i = 0; i < pairs; ++i) {
    text += "post_send a wr_id=0 op=WRITE sge=ma:0:8 remote=mb:0 flags=SIGNALED\npoll ca\n";
  }
  struct PeakBuf : std::streambuf {
    size_t base = 0, peak = 0;
    void Sample() { peak = std::max(peak, static_cast<size_t>(mallinfo2().uordblks)); }
    std::streamsize xsputn(const char*, std::streamsize n) override { return Sample(), n; }
    int overflow(int c) override { return Sample(), c; }
  } buf;
  std::ostream out(&buf);
  ScenarioStream stream{std::string_view(text)};
  StreamResult r = StreamRun(
      &stream,
      [&](const Scenario&) {
        std::string why;
        auto b = MakeScenarioBackend(BackendChoice{"model", "rxe", 1, ""}, &why);
        buf.base = buf.peak = mallinfo2().uordblks;
        return b;
      },
      StreamOptions{/*canonical=*/false, /*explain=*/true}, out, [](const std::string&) {});
  EXPECT_EQ(r.steps, 14u + 2u * pairs);
  return buf.peak - buf.base;
}

TEST(Stream, HeapDoesNotGrowWithTheScenarioLength) {
  const size_t small = StreamedPeakHeap(10000), large = StreamedPeakHeap(100000);
  std::printf("streamed peak heap: %zu B for 20,014 lines, %zu B for 200,014 lines\n", small, large);
  EXPECT_LT(large, small + 4 * 180000) << "small " << small << " B, large " << large << " B";
}

TEST(Cli, RunWritesVcdAndJsonAndNarrates) {
  const char* tmp = std::getenv("TEST_TMPDIR");
  std::string dir = tmp ? tmp : "/tmp";
  std::istringstream in(std::string(kSetup) + "post_send a wr_id=1 op=SEND sge=ma:0:8\n");
  std::ostringstream out, err;
  int rc = RunScenarioCli({"--narrate", "--vcd", dir + "/t.vcd", "--trace-json", dir + "/t.json",
                           "-"},
                          in, out, err);
  EXPECT_EQ(rc, 0) << err.str();
  EXPECT_NE(out.str().find("- post_send needs RTS or later"), std::string::npos) << out.str();
  std::istringstream in2("");
  std::ostringstream out2, err2;
  EXPECT_EQ(RunScenarioCli({"--vcd", dir + "/x.vcd", "a.qps", "b.qps"}, in2, out2, err2), 2);
  EXPECT_EQ(RunScenarioCli({"--canonical", "--narrate", "a.qps"}, in2, out2, err2), 2);
}

}  // namespace
}  // namespace qptwin::scenario
