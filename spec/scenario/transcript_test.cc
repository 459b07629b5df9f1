#include "spec/scenario/transcript.h"

#include <cerrno>

#include "gtest/gtest.h"

namespace qptwin::scenario {
namespace {

Outcome Wc(WcStatus status, WcOpcode opcode, uint32_t len, uint32_t flags = 0) {
  Outcome o;
  o.kind = Outcome::Kind::kWc;
  o.wc.wr_id = 7;
  o.wc.status = status;
  o.wc.opcode = opcode;
  o.wc.byte_len = len;
  o.wc.wc_flags = flags;
  o.wc.imm_data = 99;
  o.wc.qp_num = 1234;  // never printed in canonical form
  o.qp = "b";
  o.src_qp = "a";
  return o;
}

TEST(Transcript, CanonicalLinesHaveNoNumbersOfTheMachine) {
  Outcome ok;
  EXPECT_EQ(CanonicalLine(3, ok), "L3 ok");
  Outcome err;
  err.kind = Outcome::Kind::kError;
  err.err = EINVAL;
  EXPECT_EQ(CanonicalLine(4, err), "L4 error EINVAL");
  Outcome st;
  st.kind = Outcome::Kind::kState;
  st.state = QpState::kRts;
  EXPECT_EQ(CanonicalLine(5, st), "L5 state RTS");
  EXPECT_EQ(CanonicalLine(6, Wc(WcStatus::kSuccess, WcOpcode::kRecv, 64)),
            "L6 wc wr_id=7 status=SUCCESS opcode=RECV qp=b len=64 flags=0 src_qp=a pkey_index=0 "
            "slid=0 sl=0 dlid_path_bits=0");
  EXPECT_EQ(CanonicalLine(6, Wc(WcStatus::kSuccess, WcOpcode::kRecv, 64,
                                wc_flag::kWithImm | wc_flag::kGrh)),
            "L6 wc wr_id=7 status=SUCCESS opcode=RECV qp=b len=64 imm=99 flags=GRH|WITH_IMM "
            "src_qp=a pkey_index=0 slid=0 sl=0 dlid_path_bits=0");
}

TEST(Transcript, SendCompletionsCarryFlagsButNoReceiveFields) {
  EXPECT_EQ(CanonicalLine(2, Wc(WcStatus::kSuccess, WcOpcode::kFetchAdd, 8)),
            "L2 wc wr_id=7 status=SUCCESS opcode=FETCH_ADD qp=b len=8 flags=0");
}

TEST(Transcript, InvalidatedKeyIsNamed) {
  Outcome o = Wc(WcStatus::kSuccess, WcOpcode::kRecv, 4, wc_flag::kWithInv);
  o.invalidated = "mr1";
  EXPECT_EQ(CanonicalLine(1, o),
            "L1 wc wr_id=7 status=SUCCESS opcode=RECV qp=b len=4 inv=mr1 flags=WITH_INV "
            "src_qp=a pkey_index=0 slid=0 sl=0 dlid_path_bits=0");
}

TEST(Transcript, AttributeLinesPrintAsGiven) {
  Outcome o;
  o.kind = Outcome::Kind::kAttrs;
  o.text = "srq_attr max_wr=15 max_sge=1 srq_limit=0";
  EXPECT_EQ(CanonicalLine(4, o), "L4 srq_attr max_wr=15 max_sge=1 srq_limit=0");
}

TEST(Transcript, ErrorCompletionsOmitOpcodeAndLength) {
  // IBTA: opcode and byte_len are undefined for a completion in error.
  EXPECT_EQ(CanonicalLine(9, Wc(WcStatus::kWrFlushErr, WcOpcode::kRdmaRead, 5, wc_flag::kWithImm)),
            "L9 wc wr_id=7 status=WR_FLUSH_ERR qp=b");
}

TEST(Transcript, PolledEventMismatch) {
  Outcome p;
  p.kind = Outcome::Kind::kPolled;
  p.count = 2;
  EXPECT_EQ(CanonicalLine(1, p), "L1 polled 2");
  Outcome e;
  e.kind = Outcome::Kind::kEvent;
  e.event = EventType::kSqDrained;
  e.object = "qp=a";
  EXPECT_EQ(CanonicalLine(2, e), "L2 event SQ_DRAINED qp=a");
  Outcome m;
  m.kind = Outcome::Kind::kMismatch;
  m.offset = 17;
  m.got = 0;
  m.want = 0xab;
  EXPECT_EQ(CanonicalLine(3, m), "L3 mismatch at=17 got=0x00 want=0xab");
}

TEST(Transcript, NarratedShowsTimeNoteAndFailures) {
  RunResult r;
  Step s;
  s.line = 12;
  s.text = "modify a state=RTR";
  s.start_ns = s.end_ns = 1500;
  Outcome err;
  err.kind = Outcome::Kind::kError;
  err.err = EINVAL;
  s.outcomes.push_back(err);
  s.note = "invalid transition RESET->RTR";
  s.failures.push_back("expected ok, got EINVAL");
  r.steps.push_back(s);
  std::string text = NarratedTranscript(r, "simulated");
  EXPECT_NE(text.find("[       1.500 us] L12  modify a state=RTR  -> error EINVAL  "
                      "(invalid transition RESET->RTR)"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("!! expectation failed: expected ok, got EINVAL"), std::string::npos);
  EXPECT_NE(text.find("1 failed expectation(s)"), std::string::npos);
  EXPECT_EQ(FailureReport(r), "line 12: expected ok, got EINVAL  [modify a state=RTR]\n");
  EXPECT_EQ(CanonicalTranscript(r), "L12 error EINVAL\n");
}

}  // namespace
}  // namespace qptwin::scenario
