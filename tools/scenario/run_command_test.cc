// `qptwin run` / `qptwin diff` end to end on the model (and hw when a device exists).
#include "tools/scenario/run_command.h"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "gtest/gtest.h"
#include "hw/verbs_backend.h"

namespace qptwin::scenario {
namespace {

constexpr char kGood[] =
    "device d profile=rxe\n"
    "pd p\n"
    "cq c\n"
    "qp a type=RC pd=p send_cq=c recv_cq=c\n"
    "modify a state=INIT pkey_index=0 port=1 access=0 expect=ok\n"
    "query a expect=INIT\n"
    "modify a state=RTS expect=EINVAL\n";

struct Cli {
  int code = 0;
  std::string out, err;
};

Cli RunCli(const std::vector<std::string>& args, const std::string& stdin_text = "") {
  std::istringstream in(stdin_text);
  std::ostringstream out, err;
  Cli r;
  r.code = RunScenarioCli(args, in, out, err);
  r.out = out.str();
  r.err = err.str();
  return r;
}

std::string TempFile(const std::string& name, const std::string& text) {
  const char* dir = std::getenv("TEST_TMPDIR");
  std::string path = std::string(dir ? dir : "/tmp") + "/" + name;
  std::ofstream(path) << text;
  return path;
}

TEST(RunCommand, CanonicalTranscriptFromStdin) {
  Cli r = RunCli({"--backend", "model", "--canonical", "-"}, kGood);
  EXPECT_EQ(r.code, 0) << r.err;
  // query prints the state, then every attribute group (FORMAT.md "Queries").
  EXPECT_EQ(r.out.rfind("L1 ok\nL2 ok\nL3 ok\nL4 ok\nL5 ok\nL6 state INIT\nL6 qp_attr ", 0), 0u)
      << r.out;
  for (const char* group : {"\nL6 qp_ah ", "\nL6 qp_alt ", "\nL6 qp_cap ", "\nL6 qp_init type=RC "}) {
    EXPECT_NE(r.out.find(group), std::string::npos) << group << r.out;
  }
  EXPECT_EQ(r.out.substr(r.out.size() - 17), "\nL7 error EINVAL\n") << r.out;
}

// --compared: what the differential compares. A poll of a CQ that serves two queues is
// one window, sorted by (QP, queue) and announced by a comment line.
TEST(RunCommand, ComparedFormSortsAPollOfTwoQueues) {
  const std::string text =
      "device d0 profile=rxe\n"
      "pd p\n"
      "mr m pd=p len=4096 access=LOCAL_WRITE\n"
      "cq c\n"
      "qp b type=RC pd=p send_cq=c recv_cq=c\n"
      "qp a type=RC pd=p send_cq=c recv_cq=c\n"
      "modify a state=INIT pkey_index=0 port=1 access=0\n"
      "modify b state=INIT pkey_index=0 port=1 access=0\n"
      "modify a state=ERR\n"
      "modify b state=ERR\n"
      "post_recv b wr_id=10000 sge=m:0:64\n"
      "post_recv a wr_id=10001 sge=m:64:64\n"
      "modify b state=ERR\n"
      "modify a state=ERR\n"
      "poll c n=8 timeout_ms=10\n";
  Cli plain = RunCli({"--canonical", "-"}, text);
  Cli r = RunCli({"--compared", "-"}, text);
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(plain.out.find("L15 wc wr_id=10000 status=WR_FLUSH_ERR qp=b\nL15 wc wr_id=10001"),
            std::string::npos) << plain.out;
  EXPECT_NE(r.out.find("# L15 2 completions of 2 queues sorted by (qp, queue)"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("L15 wc wr_id=10001 status=WR_FLUSH_ERR qp=a\nL15 wc wr_id=10000"),
            std::string::npos) << r.out;
}

TEST(RunCommand, NarratedTraceShowsTimesAndTheOracleReason) {
  Cli r = RunCli({"-"}, kGood);
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("time is simulated"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("0.000 us] L7  modify a state=RTS"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("invalid transition INIT->RTS"), std::string::npos) << r.out;
}

TEST(RunCommand, FailedExpectationExitsOneWithTheLine) {
  Cli r = RunCli({"--canonical", "-"}, std::string(kGood) + "query a expect=RTS\n");
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err.rfind("qptwin: run: -: line 8: expected RTS, got INIT", 0), 0u) << r.err;
}

TEST(RunCommand, FailedCheckExitsOne) {
  Cli r = RunCli({"--canonical", "-"},
              "device d\npd p\nmr m pd=p len=64 access=LOCAL_WRITE\nfill m 0 8 7\n"
              "check m 4 8 7\n");
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.out.find("L5 mismatch at=8 got=0x00 want=0x07"), std::string::npos) << r.out;
}

TEST(RunCommand, SyntaxErrorExitsTwoWithFileAndLine) {
  std::string path = TempFile("bad.qps", "device d\npd p\nmr m pd=p\n");
  Cli r = RunCli({path});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err.rfind("qptwin: run: " + path + ":3: missing len=; expected: mr NAME", 0), 0u)
      << r.err;
  EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << r.err;
}

// Exit 2, nothing on stdout, exactly `line` (one "qptwin: " line) on stderr.
void ExpectBadInput(const Cli& r, const std::string& line) {
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, line + "\n");
}

TEST(RunCommand, UsageErrorsAreOneLineAndExitTwo) {
  ExpectBadInput(RunCli({}), "qptwin: run: no scenario FILE given (see qptwin run --help)");
  ExpectBadInput(RunCli({"--backend", "fpga", "x.qps"}),
                 "qptwin: run: unknown backend 'fpga' (valid: model, hw)");
  EXPECT_EQ(RunCli({"--frobnicate", "x.qps"}).err.rfind("qptwin: run: unknown flag '--frobnicate' "
                                                        "(valid: --backend VALUE",
                                                        0),
            0u);
  ExpectBadInput(RunCli({"--canonical", "--narrate", "-"}),
                 "qptwin: run: --canonical, --compared and --narrate exclude each other");
  ExpectBadInput(RunCli({"--compared", "--canonical", "-"}),
                 "qptwin: run: --canonical, --compared and --narrate exclude each other");
  ExpectBadInput(RunCli({"/nonexistent/x.qps"}),
                 "qptwin: run: cannot read /nonexistent/x.qps: no such file or directory");
  ExpectBadInput(RunCli({::testing::TempDir()}),
                 "qptwin: run: cannot read " + ::testing::TempDir() + ": is a directory");
}

TEST(RunCommand, HelpIsUsageOnStdoutAndExitZero) {
  Cli r = RunCli({"--help"});
  EXPECT_EQ(r.code, 0);
  EXPECT_EQ(r.out.rfind("usage: qptwin run ", 0), 0u) << r.out;
  EXPECT_EQ(r.err, "");
}

TEST(RunCommand, ControlBytesInAFileNameAreEscaped) {
  ExpectBadInput(RunCli({"/nonexistent/\x1b[2J.qps"}),
                 "qptwin: run: cannot read /nonexistent/\\x1b[2J.qps: no such file or directory");
}

TEST(RunCommand, AFileNameWithControlBytesIsEchoedEscaped) {
  const std::string path = TempFile("esc\x1b[2J.qps", kGood);
  Cli r = RunCli({path});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out.find('\x1b'), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("esc\\x1b[2J.qps on model/rxe"), std::string::npos) << r.out;
  std::istringstream in;
  std::ostringstream out, err;
  EXPECT_EQ(DiffScenarioCli({"--against", "model", path}, in, out, err), 0) << err.str();
  EXPECT_NE(out.str().find("esc\\x1b[2J.qps: same"), std::string::npos) << out.str();
}

TEST(RunCommand, TraceToStdoutAndUnwritableTraceFiles) {
  Cli r = RunCli({"--canonical", "--trace-json", "-", "-"}, kGood);
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("L7 error EINVAL\n{"), std::string::npos) << r.out;
  r = RunCli({"--canonical", "--vcd", "/dev/full", "-"}, kGood);
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err, "qptwin: run: --vcd: cannot write /dev/full: no space left on device\n");
}

TEST(RunCommand, UnknownProfileExitsTwo) {
  Cli r = RunCli({"--profile", "nosuch", "-"}, kGood);
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err.rfind("qptwin: run: unknown model profile 'nosuch' (valid: rxe, ibta", 0), 0u)
      << r.err;
}

TEST(RunCommand, HwWithoutDeviceIsOneClearLine) {
  if (!hw::MakeVerbsBackend(hw::VerbsOptions{})->ListDevices().empty()) {
    GTEST_SKIP() << "an RDMA device is present; this test is about having none";
  }
  Cli r = RunCli({"--backend", "hw", "-"}, kGood);
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_NE(r.err.find("no RDMA device"), std::string::npos) << r.err;
}

TEST(DiffCommand, SameBackendTwiceIsTheSame) {
  std::string path = TempFile("good.qps", kGood);
  std::istringstream in;
  std::ostringstream out, err;
  int code = DiffScenarioCli({"--backend", "model", "--against", "model:rxe", path}, in, out, err);
  EXPECT_EQ(code, 0) << err.str();
  EXPECT_EQ(out.str(), path + ": same (12 lines)\n");
}

TEST(DiffCommand, NeedsFilesAndAgainst) {
  std::string path = TempFile("good2.qps", kGood);
  std::istringstream in;
  std::ostringstream out, err;
  EXPECT_EQ(DiffScenarioCli({"--against", "model"}, in, out, err), 2);
  EXPECT_EQ(DiffScenarioCli({path}, in, out, err), 2);
  EXPECT_EQ(DiffScenarioCli({"--against", "fpga", path}, in, out, err), 2);
  EXPECT_EQ(DiffScenarioCli({"--against", "hw:rxe", path}, in, out, err), 2);
  EXPECT_EQ(out.str(), "");
  EXPECT_EQ(err.str(),
            "qptwin: diff: no scenario FILE given (see qptwin diff --help)\n"
            "qptwin: diff: missing --against (valid: model[:PROFILE], hw)\n"
            "qptwin: diff: --against: unknown backend 'fpga' (valid: model, hw)\n"
            "qptwin: diff: --against hw takes no profile (valid: model[:PROFILE], hw)\n");
}

// rxe 6.1 oopses on a LOCAL_INV of an unbound type 2 window (Behaviour::
// invalidate_free_type2_window_faults): diff runs the model first and spares the device,
// whichever side it is on. The model alone still runs it.
TEST(DiffCommand, AScenarioTheModelSaysWouldCrashTheDeviceIsNotRunOnIt) {
  const std::string path = TempFile("fault.qps",
      "device d profile=rxe\npd p\ncq c\n"
      "qp a type=RC pd=p send_cq=c recv_cq=c\nqp b type=RC pd=p send_cq=c recv_cq=c\n"
      "modify a state=INIT pkey_index=0 port=1 access=0\n"
      "modify b state=INIT pkey_index=0 port=1 access=0\n"
      "modify a state=RTR path_mtu=1024 dest=b rq_psn=0 max_dest_rd_atomic=1 min_rnr_timer=12\n"
      "modify b state=RTR path_mtu=1024 dest=a rq_psn=0 max_dest_rd_atomic=1 min_rnr_timer=12\n"
      "modify a state=RTS sq_psn=0 timeout=14 retry_cnt=7 rnr_retry=7 max_rd_atomic=1\n"
      "alloc_mw w pd=p type=2\n"
      "post_send a wr_id=1 op=LOCAL_INV inv=w flags=SIGNALED\n"
      "poll c\n");
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"--backend", "model", "--against", "hw", path},
        std::vector<std::string>{"--backend", "hw", "--against", "model", path}}) {
    std::istringstream in;
    std::ostringstream out, err;
    EXPECT_EQ(DiffScenarioCli(args, in, out, err), 2) << err.str();
    EXPECT_EQ(out.str(), "");
    const std::string e = err.str();
    EXPECT_EQ(std::count(e.begin(), e.end(), '\n'), 1) << e;
    EXPECT_EQ(e.rfind("qptwin: diff: " + path + ": not run on hw: model/rxe says it "
                              "would crash the device: mdev0: LOCAL_INV of rkey 0x",
                              0),
              0u)
        << e;
  }
  Cli r = RunCli({path});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("status=LOC_QP_OP_ERR"), std::string::npos) << r.out;
  std::istringstream in;
  std::ostringstream out, err;
  EXPECT_EQ(DiffScenarioCli({"--against", "model:ibta", path}, in, out, err), 0) << err.str();
}

TEST(DiffCommand, ReportsTheFirstDifferingLine) {
  // A UD receive on RoCE (the rxe profile) counts the 40-byte GRH in byte_len; the ibta
  // profile models an InfiniBand port without GRH. The diff must find that line.
  std::string path = TempFile("ud.qps",
                              "device d\npd p\nmr m pd=p len=4096 access=LOCAL_WRITE\n"
                              "cq c\ncq r\n"
                              "qp a type=UD pd=p send_cq=c recv_cq=c\n"
                              "qp b type=UD pd=p send_cq=r recv_cq=r\n"
                              "modify a state=INIT pkey_index=0 port=1 qkey=1\n"
                              "modify b state=INIT pkey_index=0 port=1 qkey=1\n"
                              "modify a state=RTR\nmodify b state=RTR\n"
                              "modify a state=RTS sq_psn=0\n"
                              "post_recv b wr_id=1 sge=m:0:1024\n"
                              "post_send a wr_id=2 op=SEND sge=m:2048:64 ah=b flags=SIGNALED\n"
                              "poll r\n");
  std::istringstream in;
  std::ostringstream out, err;
  int code = DiffScenarioCli({"--profile", "rxe", "--against", "model:ibta", path}, in, out, err);
  EXPECT_EQ(code, 1) << out.str() << err.str();
  EXPECT_NE(out.str().find(path + ": first difference at transcript line 15\n"
                           "  model/rxe: L15 wc wr_id=1 status=SUCCESS opcode=RECV qp=b len=104 "
                           "flags=GRH src_qp=a pkey_index=0 slid=0 sl=0 dlid_path_bits=0\n"
                           "  model/ibta: L15 wc wr_id=1 status=SUCCESS opcode=RECV qp=b len=64 "
                           "flags=0 src_qp=a pkey_index=0 slid=0 sl=0 dlid_path_bits=0\n"),
            std::string::npos)
      << out.str();
}

// --dma: every DMA of the model's devices, as TLM transactions on its SystemC platform
// (model/sim/platform.h), printed before the result of the step it happened in.
TEST(RunCommand, DmaLinesShowEveryTransferOfTheStepBeforeItsResult) {
  const std::string scenario =
      "device d profile=ibta\n"
      "pd p\n"
      "mr m pd=p len=4096 access=LOCAL_WRITE\n"
      "cq c\n"
      "qp a type=RC pd=p send_cq=c recv_cq=c\n"
      "qp b type=RC pd=p send_cq=c recv_cq=c\n"
      "modify a state=INIT pkey_index=0 port=1 access=0\n"
      "modify b state=INIT pkey_index=0 port=1 access=0\n"
      "modify a state=RTR path_mtu=1024 dest=b rq_psn=0 max_dest_rd_atomic=0 min_rnr_timer=12\n"
      "modify b state=RTR path_mtu=1024 dest=a rq_psn=0 max_dest_rd_atomic=0 min_rnr_timer=12\n"
      "modify a state=RTS sq_psn=0 timeout=14 retry_cnt=7 rnr_retry=7 max_rd_atomic=0\n"
      "modify b state=RTS sq_psn=0 timeout=14 retry_cnt=7 rnr_retry=7 max_rd_atomic=0\n"
      "post_recv b wr_id=2 sge=m:2048:1024\n"
      "post_send a wr_id=1 op=SEND sge=m:0:100 flags=SIGNALED\n"
      "poll c n=2 expect=SUCCESS,SUCCESS\n";
  Cli r = RunCli({"--backend", "model", "--dma", "-"}, scenario);
  ASSERT_EQ(r.code, 0) << r.err << r.out;
  const size_t read = r.out.find("PAYLOAD_READ  read  100 B\n");
  const size_t recv = r.out.find("RECV_DATA     write 100 B\n");
  const size_t cqe = r.out.find("CQE           write 64 B\n");
  const size_t poll = r.out.find("  poll c n=2");
  ASSERT_NE(read, std::string::npos) << r.out;
  ASSERT_NE(recv, std::string::npos) << r.out;
  ASSERT_NE(cqe, std::string::npos) << r.out;
  ASSERT_NE(poll, std::string::npos) << r.out;
  EXPECT_LT(read, recv);
  // On the ibta profile the exchange runs while the poll waits: its DMA comes before the
  // poll's result, and two CQEs are written (one per queue).
  EXPECT_LT(recv, poll);
  EXPECT_NE(r.out.find("CQE", cqe + 1), std::string::npos) << r.out;
  EXPECT_EQ(r.out.rfind("# dma ", 0), std::string::npos);  // the header comes first
  // Off again after the run: a run without --dma prints none.
  Cli quiet = RunCli({"--backend", "model", "-"}, scenario);
  EXPECT_EQ(quiet.out.find("# dma"), std::string::npos) << quiet.out;
}

// --net: every message between the model's devices as it reaches the far device's network
// port on the SystemC platform (model/sim/platform.h contract 9), before the step's result.
TEST(RunCommand, NetLinesShowEveryMessageOfTheStepBeforeItsResult) {
  const std::string scenario =
      "device d profile=cx6-100g\n"
      "pd p\n"
      "mr m pd=p len=8192 access=LOCAL_WRITE|REMOTE_WRITE|REMOTE_READ\n"
      "cq c\n"
      "qp a type=RC pd=p send_cq=c recv_cq=c\n"
      "qp b type=RC pd=p send_cq=c recv_cq=c\n"
      "modify a state=INIT pkey_index=0 port=1 access=REMOTE_WRITE|REMOTE_READ\n"
      "modify b state=INIT pkey_index=0 port=1 access=REMOTE_WRITE|REMOTE_READ\n"
      "modify a state=RTR path_mtu=1024 dest=b rq_psn=0 max_dest_rd_atomic=1 min_rnr_timer=12\n"
      "modify b state=RTR path_mtu=1024 dest=a rq_psn=0 max_dest_rd_atomic=1 min_rnr_timer=12\n"
      "modify a state=RTS sq_psn=0 timeout=14 retry_cnt=7 rnr_retry=7 max_rd_atomic=1\n"
      "modify b state=RTS sq_psn=0 timeout=14 retry_cnt=7 rnr_retry=7 max_rd_atomic=1\n"
      "post_recv b wr_id=2 sge=m:2048:3000\n"
      "post_send a wr_id=1 op=SEND sge=m:0:2500 flags=SIGNALED\n"
      "post_send a wr_id=3 op=READ sge=m:6000:100 remote=m:100 flags=SIGNALED\n"
      "poll c n=3 expect=SUCCESS,SUCCESS,SUCCESS\n";
  Cli r = RunCli({"--backend", "model", "--net", "-"}, scenario);
  ASSERT_EQ(r.code, 0) << r.err << r.out;
  const size_t send = r.out.find("SEND        psn 0  3 pkt  2500 B");  // MTU 1024: 3 packets
  const size_t read = r.out.find("READ_REQ    psn 3  1 pkt  0 B");
  const size_t ack = r.out.find("ACK         psn 2  1 pkt  0 B");
  const size_t resp = r.out.find("READ_RESP   psn 3  1 pkt  100 B");
  const size_t poll = r.out.find("  poll c n=3");
  ASSERT_NE(send, std::string::npos) << r.out;
  ASSERT_NE(read, std::string::npos) << r.out;
  ASSERT_NE(ack, std::string::npos) << r.out;
  ASSERT_NE(resp, std::string::npos) << r.out;
  ASSERT_NE(poll, std::string::npos) << r.out;
  EXPECT_LT(send, read);  // one port, in order
  EXPECT_LT(ack, resp);
  EXPECT_LT(resp, poll);
  EXPECT_NE(r.out.find("mdev0 -> mdev0"), std::string::npos) << r.out;
  // Off again after the run; and only for the model, not with --compared.
  Cli quiet = RunCli({"--backend", "model", "-"}, scenario);
  EXPECT_EQ(quiet.out.find("# net"), std::string::npos) << quiet.out;
  EXPECT_EQ(RunCli({"--backend", "hw", "--net", "-"}, scenario).code, 2);
  EXPECT_EQ(RunCli({"--backend", "model", "--net", "--compared", "-"}, scenario).code, 2);
}

// Two RC QPs of device d0 connected in RTS (timeout 11: 8.4 ms), q0 with `retry_cnt` and
// rnr_retry 7, q1 with neither; a 4 KB region m0 and one CQ c0. Lines 2-12 of a scenario.
std::string TwoRcQps(int retry_cnt) {
  return "device d0 profile=rxe\npd p0 dev=d0\nmr m0 pd=p0 len=4096 access=LOCAL_WRITE\n"
         "cq c0 cqe=63 dev=d0\nqp q0 type=RC pd=p0 send_cq=c0 recv_cq=c0\n"
         "qp q1 type=RC pd=p0 send_cq=c0 recv_cq=c0\n"
         "modify q0 state=INIT pkey_index=0 port=1 access=0\n"
         "modify q0 state=RTR path_mtu=1024 dest=q1 rq_psn=0 max_dest_rd_atomic=0 "
         "min_rnr_timer=17\n"
         "modify q0 state=RTS sq_psn=0 timeout=11 retry_cnt=" + std::to_string(retry_cnt) +
         " rnr_retry=7 max_rd_atomic=1\n"
         "modify q1 state=INIT pkey_index=0 port=1 access=0\n"
         "modify q1 state=RTR path_mtu=1024 dest=q0 rq_psn=0 max_dest_rd_atomic=0 "
         "min_rnr_timer=17\n"
         "modify q1 state=RTS sq_psn=0 timeout=11 retry_cnt=0 rnr_retry=0 max_rd_atomic=1\n";
}

// --tick-phase moves the model's kernel ticks (rxe: 4 ms jiffies): 2 ms after RTS -> SQD of a
// QP in an RNR loop, the retry in SQD (which unsends the SENDs and drains the SQ) has come at
// phase 0.75 and not yet at phase 0 (seed 20261225 sequence 1445: rxe gives either).
TEST(RunCommand, TickPhaseDecidesWhichTimerComesFirst) {
  const std::string text =
      TwoRcQps(1) + "post_send q0 wr_id=1 op=SEND sge=m0:0:64 flags=SIGNALED\n"
      "post_send q0 wr_id=2 op=SEND sge=m0:64:64 flags=SIGNALED\n"
      "advance us=60000\nmodify q0 state=SQD\nadvance us=2000\nquery q0\n";
  const Cli at0 = RunCli({"--compared", "-"}, text);
  const Cli later = RunCli({"--compared", "--tick-phase", "0.75", "-"}, text);
  ASSERT_EQ(at0.code, 0) << at0.err;
  ASSERT_EQ(later.code, 0) << later.err;
  EXPECT_NE(at0.out.find("sq_psn=2 "), std::string::npos) << at0.out;
  EXPECT_NE(at0.out.find("sq_draining=1"), std::string::npos) << at0.out;
  EXPECT_NE(later.out.find("sq_psn=0 "), std::string::npos) << later.out;
  EXPECT_NE(later.out.find("sq_draining=0"), std::string::npos) << later.out;
  const Cli bad = RunCli({"--tick-phase", "-0.5", "-"}, text);
  EXPECT_EQ(bad.code, 2);
  EXPECT_NE(bad.err.find("--tick-phase"), std::string::npos) << bad.err;
}

// A SEND to a QP without a receive waits out RNR timers while its transport timer (retry_cnt
// 0) runs; the receive comes four commands later. On a fast host those take no time and the
// SEND succeeds; on a host that spends 2 ms a command (rxe in an emulated VM) the transport
// timer runs out first.
TEST(RunCommand, HostTimeDecidesARaceWithTheDevicesTimers) {
  const std::string text =
      TwoRcQps(0) + "post_send q0 wr_id=1 op=SEND sge=m0:0:64 flags=SIGNALED\n"
      "query q1\nquery q1\nquery q1\n"
      "post_recv q1 wr_id=2 sge=m0:1024:64\npoll c0 n=2 timeout_ms=30\n";
  const Cli fast = RunCli({"--compared", "-"}, text);
  const Cli slow = RunCli({"--compared", "--host-us", "2000", "-"}, text);
  ASSERT_EQ(fast.code, 0) << fast.err;
  ASSERT_EQ(slow.code, 0) << slow.err;
  EXPECT_NE(fast.out.find("L18 wc wr_id=1 status=SUCCESS"), std::string::npos) << fast.out;
  EXPECT_NE(slow.out.find("L18 wc wr_id=1 status=RETRY_EXC_ERR"), std::string::npos) << slow.out;
  const Cli narrated = RunCli({"--host-us", "2000", "-"}, text);
  EXPECT_NE(narrated.out.find("[   32003.686 us] L17  post_recv q1"), std::string::npos)
      << narrated.out;
  const Cli bad = RunCli({"--host-us", "x", "-"}, text);
  EXPECT_EQ(bad.code, 2);
  EXPECT_EQ(bad.err, "qptwin: run: --host-us 'x' is not a host time per command (valid: 0 <= T "
                     "<= 100000 microseconds)\n");
  const Cli hw = RunCli({"--backend", "hw", "--host-us", "5", "-"}, text);
  EXPECT_EQ(hw.code, 2);
  EXPECT_NE(hw.err.find("--host-us is for --backend model"), std::string::npos) << hw.err;
}

// q0 and q1 on c0_1 brought up; q1's 2-packet SEND_WITH_INV fails RNR_RETRY_EXC_ERR (PSNs
// 0-1 unanswered), q1 goes ERR -> RTS, and its WRITE (PSN 2) goes to q0, in ERR by then: the
// timer's retry starts at comp.psn 0, behind the WRITE (rxe's skip loop, row 127).
constexpr const char* kSkipLoopFromQps =
    "qp q0 type=RC pd=p0 send_cq=c0_1 recv_cq=c0_1 max_send_wr=15 max_recv_wr=15 "
    "max_send_sge=2 max_recv_sge=2\n"
    "qp q1 type=RC pd=p0 send_cq=c0_1 recv_cq=c0_1 max_send_wr=15 max_recv_wr=15 "
    "max_send_sge=2 max_recv_sge=2 sq_sig_all=1\n"
    "modify q0 state=INIT pkey_index=0 port=1 "
    "access=LOCAL_WRITE|REMOTE_WRITE|REMOTE_READ|REMOTE_ATOMIC\n"
    "modify q0 state=RTR path_mtu=1024 dest=q1 rq_psn=0 max_dest_rd_atomic=0 min_rnr_timer=17\n"
    "modify q0 state=RTS sq_psn=0 timeout=11 retry_cnt=1 rnr_retry=0 max_rd_atomic=4\n"
    "modify q1 state=INIT pkey_index=0 port=1 "
    "access=LOCAL_WRITE|REMOTE_WRITE|REMOTE_READ|REMOTE_ATOMIC\n"
    "modify q1 state=RTR path_mtu=1024 dest=q0 rq_psn=0 max_dest_rd_atomic=1 min_rnr_timer=17\n"
    "modify q1 state=RTS sq_psn=0 timeout=11 retry_cnt=1 rnr_retry=0 max_rd_atomic=1\n"
    "post_send q1 wr_id=2 op=SEND_WITH_INV sge=m0:8400:2048 inv=f0\n"
    "post_send q0 wr_id=3 op=SEND sge=m0:160:8 flags=SOLICITED\n"
    "advance us=60000\n"
    "modify q1 state=RTS cur_state=RTS\n"
    "post_send q1 wr_id=15 op=WRITE sge=m0:8632:8 remote=m0:5960\n";

// --retry-skip: q1's 2-packet SEND fails RNR_RETRY_EXC_ERR (PSNs 0-1 unanswered), q1 goes
// ERR -> RTS, and its WRITE (PSN 2) goes to a peer in ERR; the timer's retry starts at
// comp.psn 0, and rxe steps through 2^24 - 2 packets first (~0.9 s in tools/rxe-vm). A
// program that slept 60 ms sees each of three outcomes on rxe, by where the loop ran
// (tests/differential/probes/retry-skip-*.qps, docs/differences.md row 127).
TEST(RunCommand, RetrySkipDecidesWhatAProgramSeesOfRxesSkipLoop) {
  const std::string text =
      "device d0 profile=rxe\n"
      "pd p0 dev=d0\n"
      "mr m0 pd=p0 len=65536 access=LOCAL_WRITE|REMOTE_WRITE|REMOTE_READ|REMOTE_ATOMIC\n"
      "fill m0 0 65536 0x5a\n"
      "mr n0 pd=p0 len=256 access=LOCAL_WRITE\n"
      "cq c0_0 cqe=63 dev=d0\n"
      "cq c0_1 cqe=63 dev=d0\n"
      "pd pf0 dev=d0\n"
      "mr f0 pd=pf0 len=4096 access=LOCAL_WRITE|REMOTE_WRITE|REMOTE_READ|REMOTE_ATOMIC\n"
      "mr x0 pd=p0 len=64 access=LOCAL_WRITE|REMOTE_WRITE|REMOTE_READ\n"
      + std::string(kSkipLoopFromQps) +
      "advance us=60000\n"
      "modify q0 state=ERR\n"
      "modify q1 state=ERR\n"
      "poll c0_1 n=64 timeout_ms=30\n";
  const Cli untimed = RunCli({"--compared", "-"}, text);
  const Cli stalled = RunCli({"--compared", "--retry-skip", "stalled", "-"}, text);
  const Cli beside = RunCli({"--compared", "--retry-skip", "beside", "-"}, text);
  ASSERT_EQ(untimed.code, 0) << untimed.err;
  ASSERT_EQ(stalled.code, 0) << stalled.err;
  ASSERT_EQ(beside.code, 0) << beside.err;
  const std::string wr2 = "wc wr_id=2 status=RNR_RETRY_EXC_ERR qp=q1";
  for (const Cli* c : {&untimed, &stalled, &beside}) {
    EXPECT_NE(c->out.find(wr2), std::string::npos) << c->out;
  }
  // Its waits outlast the loop: the resent WRITE's timer runs out.
  EXPECT_NE(untimed.out.find("wc wr_id=15 status=RETRY_EXC_ERR qp=q1"), std::string::npos)
      << untimed.out;
  // The loop ran on its CPU: it woke after the loop, and ERR flushed the WRITE.
  EXPECT_NE(stalled.out.find("wc wr_id=15 status=WR_FLUSH_ERR qp=q1"), std::string::npos)
      << stalled.out;
  // The loop ran beside it: ERR's flush waits for the loop, after the last poll.
  EXPECT_EQ(beside.out.find("wr_id=15"), std::string::npos) << beside.out;
  for (const char* wrong : {"later", "joins:0", "joins:65", "joins:", "stalled:0", "stalled:x",
                            "stalled:100001", "beside:3"}) {
    const Cli bad = RunCli({"--retry-skip", wrong, "-"}, text);
    EXPECT_EQ(bad.code, 2) << wrong;
    EXPECT_EQ(bad.err, "qptwin: run: --retry-skip '" + std::string(wrong) +
                           "' is not a host (valid: untimed, stalled, stalled:D with 1 <= D <= "
                           "100000 us, beside, joins:K with 1 <= K <= 64)\n");
  }
  const Cli hw = RunCli({"--backend", "hw", "--retry-skip", "beside", "-"}, text);
  EXPECT_EQ(hw.code, 2);
  EXPECT_NE(hw.err.find("--retry-skip is for --backend model"), std::string::npos) << hw.err;
}

// The same loop with SQD 60 ms after the WRITE (tests/differential/probes/skip-join.qps;
// seed 42446856514 sequence 1093 alike). rxe gave, by where the program ran (11 runs):
// on the loop's CPU and woken 9-11 ms after it, SQD then the WRITE's RETRY_EXC_ERR within
// 2 ms (8) or that error before SQD (1); woken at once (1); beside it (1). Sequence 1093
// gave these and a fourth (2 runs of 10): beside the loop at SQD, on
// its CPU from a later wake-up, so the loop ended in DRAIN: the WRITE req_retry set back to
// posted stays unsent, the SQ drains (SQ_DRAINED), and ERR flushes the WRITE.
TEST(RunCommand, AProgramCanJoinTheSkipLoopsCpuLateAndWakeLateAfterIt) {
  const std::string text =
      "device d0 profile=rxe\n"
      "pd p0 dev=d0\n"
      "mr m0 pd=p0 len=65536 access=LOCAL_WRITE|REMOTE_WRITE|REMOTE_READ|REMOTE_ATOMIC\n"
      "fill m0 0 65536 0x5a\n"
      "pd pf0 dev=d0\n"
      "mr f0 pd=pf0 len=4096 access=LOCAL_WRITE|REMOTE_WRITE|REMOTE_READ|REMOTE_ATOMIC\n"
      "cq c0_1 cqe=63 dev=d0\n"
      + std::string(kSkipLoopFromQps) +
      "advance us=60000\n"                                  // wake-up 1 (L21)
      "modify q1 state=SQD en_sqd_async_notify=1\n"         // L22
      "advance us=2000\n"                                   // wake-up 2
      "query q1\n"                                          // L24
      "advance us=60000\n"                                  // wake-up 3
      "query q1\n"                                          // L26
      "poll c0_1 n=64 timeout_ms=0\n"
      "modify q0 state=ERR\n"
      "modify q1 state=ERR\n"
      "advance us=30000\n"
      "poll c0_1 n=64 timeout_ms=0\n"                       // L31
      "events\n";
  auto has = [](const Cli& c, const std::string& line) {
    return c.out.find(line) != std::string::npos;
  };
  // Woken 9 ms after the loop: SQD comes while the resent WRITE is out, its timer ends it.
  const Cli late = RunCli({"--compared", "--retry-skip", "stalled:9000", "-"}, text);
  ASSERT_EQ(late.code, 0) << late.err;
  EXPECT_TRUE(has(late, "L22 ok")) << late.out;
  EXPECT_TRUE(has(late, "L24 state ERR")) << late.out;
  EXPECT_TRUE(has(late, "L27 wc wr_id=15 status=RETRY_EXC_ERR qp=q1")) << late.out;
  // Woken at once: SQD is seen draining first.
  const Cli now = RunCli({"--compared", "--retry-skip", "stalled", "-"}, text);
  ASSERT_EQ(now.code, 0) << now.err;
  EXPECT_TRUE(has(now, "L24 state SQD")) << now.out;
  // Beside the loop until wake-up 3: SQD during the loop, sq_psn 0 (req_retry's comp.psn),
  // draining; the loop ends in DRAIN: drained, nothing sent, and ERR flushes the WRITE.
  const Cli joins = RunCli({"--compared", "--retry-skip", "joins:3", "-"}, text);
  ASSERT_EQ(joins.code, 0) << joins.err;
  const std::string attrs = "rq_psn=0 sq_psn=0 dest_qp=q0";
  EXPECT_TRUE(has(joins, "L24 state SQD")) << joins.out;
  EXPECT_TRUE(has(joins, "L24 qp_attr cur_state=RTS path_mtu=1024 qkey=0 " + attrs)) << joins.out;
  EXPECT_NE(joins.out.find("sq_draining=1", joins.out.find("L24 qp_attr")), std::string::npos);
  EXPECT_TRUE(has(joins, "L26 state SQD")) << joins.out;
  EXPECT_TRUE(has(joins, "L26 qp_attr cur_state=RTS path_mtu=1024 qkey=0 " + attrs)) << joins.out;
  EXPECT_NE(joins.out.find("sq_draining=0", joins.out.find("L26 qp_attr")), std::string::npos);
  EXPECT_FALSE(has(joins, "L27 wc wr_id=15")) << joins.out;
  EXPECT_TRUE(has(joins, "L31 wc wr_id=15 status=WR_FLUSH_ERR qp=q1")) << joins.out;
  EXPECT_TRUE(has(joins, "event SQ_DRAINED qp=q1")) << joins.out;
  // Beside it throughout: the flush waits for the loop, after the last poll.
  const Cli beside = RunCli({"--compared", "--retry-skip", "beside", "-"}, text);
  ASSERT_EQ(beside.code, 0) << beside.err;
  EXPECT_EQ(beside.out.find("wr_id=15"), std::string::npos) << beside.out;
  // joins:1 is stalled (the loop starts during the first advance).
  const Cli joins1 = RunCli({"--compared", "--retry-skip", "joins:1", "-"}, text);
  EXPECT_EQ(joins1.out, now.out);
}

TEST(RunCommand, DmaNeedsTheModelAndTheReadableTranscript) {
  Cli hw = RunCli({"--backend", "hw", "--dma", "-"}, kGood);
  EXPECT_EQ(hw.code, 2);
  EXPECT_NE(hw.err.find("--dma shows the model's DMA"), std::string::npos) << hw.err;
  Cli canonical = RunCli({"--backend", "model", "--dma", "--canonical", "-"}, kGood);
  EXPECT_EQ(canonical.code, 2);
  EXPECT_NE(canonical.err.find("not with --canonical"), std::string::npos) << canonical.err;
}

}  // namespace
}  // namespace qptwin::scenario
