// The SystemC NIC on a two-host platform (testbed.h): data, completions, errors and timing.
// One platform per process (SystemC elaborates once); each test is a scenario on fresh QPs.
#include <gtest/gtest.h>

#include <cerrno>
#include <cstring>
#include <optional>
#include <vector>

#include "model/profile.h"
#include "model/systemc/testbed.h"
#include "model/wire.h"
#include "spec/vocabulary.h"

namespace qptwin::sc {
namespace {

using sc_core::sc_time;
using sc_core::SC_US;
using testbed::kDataBase;

const model::Timing& Cx6() { return model::FindProfile("cx6-100g")->timing; }

testbed::Platform& Bed() {
  static testbed::Platform* p = new testbed::Platform(Cx6());  // lives until exit
  return *p;
}

// A connected QP pair: a on host 0, b on host 1, each with a region over its data buffer.
struct Pair {
  uint32_t qa, qb, ca, cb, ka, kb;
  uint64_t buf_a = kDataBase, buf_b = kDataBase;
};

Pair Connect(QpType type = QpType::kRc) {
  testbed::Platform& p = Bed();
  Pair r{p.NextQpn(), p.NextQpn(), p.NextCqn(), p.NextCqn(), p.NextKey(), p.NextKey()};
  const AccessFlags all = access::kLocalWrite | access::kRemoteWrite | access::kRemoteRead;
  p.host[0]->CreateQp(r.qa, r.ca, type, 1);
  p.host[1]->CreateQp(r.qb, r.cb, type, 1);
  EXPECT_EQ(0u, p.host[0]->Command(CmdOp::kRegMr, {r.ka, 1, kDataBase, testbed::kDataBytes, all}));
  EXPECT_EQ(0u, p.host[1]->Command(CmdOp::kRegMr, {r.kb, 1, kDataBase, testbed::kDataBytes, all}));
  if (type == QpType::kUd) return r;  // connected by the caller's UD path
  EXPECT_EQ(0u, p.host[0]->Connect(r.qa, type, 1, r.qb, all));
  EXPECT_EQ(0u, p.host[1]->Connect(r.qb, type, 0, r.qa, all));
  return r;
}

Wqe Write(const Pair& pr, uint32_t len, uint32_t rkey, uint64_t wr_id) {
  Wqe w;
  w.opcode = WrOpcode::kRdmaWrite;
  w.flags = send_flag::kSignaled;
  w.wr_id = wr_id;
  w.addr = pr.buf_a;
  w.length = len;
  w.lkey = pr.ka;
  w.remote_addr = pr.buf_b + 0x1000;
  w.rkey = rkey;
  return w;
}

sc_time kLimit() { return sc_time(200, SC_US); }

TEST(ScNic, RdmaWriteDataLands) {
  testbed::Platform& p = Bed();
  ASSERT_TRUE(p.Run([&] {
    const Pair pr = Connect();
    const char msg[] = "qptwin-sc-write";
    p.host[0]->Write(pr.buf_a, msg, sizeof msg);
    p.host[0]->PostSend(pr.qa, Write(pr, sizeof msg, pr.kb, 7));
    const std::optional<Cqe> c = p.host[0]->WaitCq(pr.ca, kLimit());
    ASSERT_TRUE(c);
    EXPECT_EQ(WcStatus::kSuccess, c->status);
    EXPECT_EQ(7u, c->wr_id);
    EXPECT_EQ(WcOpcode::kRdmaWrite, c->opcode);
    EXPECT_EQ(0, std::memcmp(p.mem[1]->Bytes(pr.buf_b + 0x1000, sizeof msg), msg, sizeof msg));
    EXPECT_EQ(0, p.nic[0]->qp(pr.qa).sq_occupancy);
  }, sc_time(1, sc_core::SC_MS)));
}

TEST(ScNic, BadRkeyIsRemoteAccessErrorAndBothQpsToErr) {
  testbed::Platform& p = Bed();
  ASSERT_TRUE(p.Run([&] {
    const Pair pr = Connect();
    p.host[0]->PostSend(pr.qa, Write(pr, 8, pr.kb + 0x7777, 1));
    p.host[0]->PostSend(pr.qa, Write(pr, 8, pr.kb, 2));  // behind the failing one
    std::optional<Cqe> c = p.host[0]->WaitCq(pr.ca, kLimit());
    ASSERT_TRUE(c);
    EXPECT_EQ(WcStatus::kRemAccessErr, c->status);
    EXPECT_EQ(1u, c->wr_id);
    c = p.host[0]->WaitCq(pr.ca, kLimit());
    ASSERT_TRUE(c);
    EXPECT_EQ(WcStatus::kWrFlushErr, c->status);
    EXPECT_EQ(2u, c->wr_id);
    EXPECT_EQ(QpState::kErr, p.nic[0]->qp(pr.qa).state);
    EXPECT_EQ(QpState::kErr, p.nic[1]->qp(pr.qb).state);  // rxe do_class_ac_error
  }, sc_time(1, sc_core::SC_MS)));
}

TEST(ScNic, SendConsumesPostedReceive) {
  testbed::Platform& p = Bed();
  ASSERT_TRUE(p.Run([&] {
    const Pair pr = Connect();
    Wqe recv;
    recv.wr_id = 55;
    recv.addr = pr.buf_b + 0x2000;
    recv.length = 64;
    recv.lkey = pr.kb;
    p.host[1]->PostRecv(pr.qb, recv);
    const char msg[] = "hello over SEND";
    p.host[0]->Write(pr.buf_a, msg, sizeof msg);
    Wqe send;
    send.opcode = WrOpcode::kSendWithImm;
    send.flags = send_flag::kSignaled;
    send.imm = 0xabcd;
    send.wr_id = 9;
    send.addr = pr.buf_a;
    send.length = sizeof msg;
    send.lkey = pr.ka;
    p.host[0]->PostSend(pr.qa, send);
    const std::optional<Cqe> r = p.host[1]->WaitCq(pr.cb, kLimit());
    ASSERT_TRUE(r);
    EXPECT_EQ(WcStatus::kSuccess, r->status);
    EXPECT_EQ(55u, r->wr_id);
    EXPECT_EQ(WcOpcode::kRecv, r->opcode);
    EXPECT_EQ(sizeof msg, r->byte_len);
    EXPECT_EQ(0xabcdu, r->imm);
    EXPECT_TRUE(r->wc_flags & wc_flag::kWithImm);
    EXPECT_EQ(pr.qa, r->src_qp);
    EXPECT_EQ(0, std::memcmp(p.mem[1]->Bytes(pr.buf_b + 0x2000, sizeof msg), msg, sizeof msg));
    EXPECT_EQ(0, p.nic[1]->qp(pr.qb).rq_occupancy);
    const std::optional<Cqe> s = p.host[0]->WaitCq(pr.ca, kLimit());
    ASSERT_TRUE(s);
    EXPECT_EQ(WcStatus::kSuccess, s->status);
    EXPECT_EQ(WcOpcode::kSend, s->opcode);
  }, sc_time(1, sc_core::SC_MS)));
}

TEST(ScNic, SendWithoutReceiveIsRnrRetryExceeded) {
  testbed::Platform& p = Bed();
  ASSERT_TRUE(p.Run([&] {
    const Pair pr = Connect();
    Wqe send;
    send.flags = send_flag::kSignaled;
    send.addr = pr.buf_a;
    send.length = 8;
    send.lkey = pr.ka;
    p.host[0]->PostSend(pr.qa, send);
    const std::optional<Cqe> c = p.host[0]->WaitCq(pr.ca, kLimit());
    ASSERT_TRUE(c);
    EXPECT_EQ(WcStatus::kRnrRetryExcErr, c->status);
  }, sc_time(1, sc_core::SC_MS)));
}

TEST(ScNic, RdmaReadBringsRemoteBytes) {
  testbed::Platform& p = Bed();
  ASSERT_TRUE(p.Run([&] {
    const Pair pr = Connect();
    const char msg[] = "read me back";
    p.host[1]->Write(pr.buf_b + 0x3000, msg, sizeof msg);
    Wqe w;
    w.opcode = WrOpcode::kRdmaRead;
    w.flags = send_flag::kSignaled;
    w.addr = pr.buf_a + 0x3000;
    w.length = sizeof msg;
    w.lkey = pr.ka;
    w.remote_addr = pr.buf_b + 0x3000;
    w.rkey = pr.kb;
    p.host[0]->PostSend(pr.qa, w);
    const std::optional<Cqe> c = p.host[0]->WaitCq(pr.ca, kLimit());
    ASSERT_TRUE(c);
    EXPECT_EQ(WcStatus::kSuccess, c->status);
    EXPECT_EQ(WcOpcode::kRdmaRead, c->opcode);
    EXPECT_EQ(0, std::memcmp(p.mem[0]->Bytes(pr.buf_a + 0x3000, sizeof msg), msg, sizeof msg));
  }, sc_time(1, sc_core::SC_MS)));
}

TEST(ScNic, DmaToUnmappedAddressIsErrorCompletionNotCrash) {
  testbed::Platform& p = Bed();
  ASSERT_TRUE(p.Run([&] {
    Pair pr = Connect();
    // A region the host registers over addresses its memory does not have.
    const uint32_t key = p.NextKey();
    const uint64_t hole = 0x40000000;
    ASSERT_EQ(0u, p.host[0]->Command(CmdOp::kRegMr, {key, 1, hole, 4096, access::kLocalWrite}));
    Wqe w = Write(pr, 8, pr.kb, 3);
    w.addr = hole;
    w.lkey = key;
    p.host[0]->PostSend(pr.qa, w);
    const std::optional<Cqe> c = p.host[0]->WaitCq(pr.ca, kLimit());
    ASSERT_TRUE(c);
    EXPECT_EQ(WcStatus::kLocProtErr, c->status);
    EXPECT_EQ(3u, c->wr_id);
    EXPECT_EQ(QpState::kErr, p.nic[0]->qp(pr.qa).state);
  }, sc_time(1, sc_core::SC_MS)));
}

TEST(ScNic, IllegalModifyIsEinvalAndLeavesQpInReset) {
  testbed::Platform& p = Bed();
  ASSERT_TRUE(p.Run([&] {
    const uint32_t q = p.NextQpn(), cq = p.NextCqn();
    p.host[0]->CreateQp(q, cq, QpType::kRc, 1);
    // RESET -> RTR is not in the kernel's table.
    EXPECT_EQ(static_cast<uint32_t>(EINVAL),
              p.host[0]->Command(CmdOp::kModifyQp, {q, attr::kState, uint64_t(QpState::kRtr)}));
    EXPECT_EQ(QpState::kReset, p.nic[0]->qp(q).state);
  }, sc_time(1, sc_core::SC_MS)));
}

TEST(ScNic, UcWriteCompletesWhenSentAndLands) {
  testbed::Platform& p = Bed();
  ASSERT_TRUE(p.Run([&] {
    const Pair pr = Connect(QpType::kUc);
    const char msg[] = "uc write";
    p.host[0]->Write(pr.buf_a, msg, sizeof msg);
    p.host[0]->PostSend(pr.qa, Write(pr, sizeof msg, pr.kb, 4));
    const std::optional<Cqe> c = p.host[0]->WaitCq(pr.ca, kLimit());
    ASSERT_TRUE(c);
    EXPECT_EQ(WcStatus::kSuccess, c->status);
    p.host[0]->WaitCq(pr.ca, sc_time(5, SC_US));  // let the packet arrive
    EXPECT_EQ(0, std::memcmp(p.mem[1]->Bytes(pr.buf_b + 0x1000, sizeof msg), msg, sizeof msg));
  }, sc_time(1, sc_core::SC_MS)));
}

TEST(ScNic, UdSendLandsBehindTheNetworkHeader) {
  testbed::Platform& p = Bed();
  ASSERT_TRUE(p.Run([&] {
    const Pair pr = Connect(QpType::kUd);
    using namespace attr;  // NOLINT
    const uint64_t qkey = 0x11111111;
    for (int i = 0; i < 2; ++i) {
      const uint32_t q = i == 0 ? pr.qa : pr.qb;
      testbed::Driver& h = *p.host[i];
      ASSERT_EQ(0u, h.Command(CmdOp::kModifyQp, {q, kState | kPkeyIndex | kPort | kQkey,
                                                 uint64_t(QpState::kInit), 0, 0, 0, 0, qkey}));
      ASSERT_EQ(0u, h.Command(CmdOp::kModifyQp, {q, kState, uint64_t(QpState::kRtr)}));
      ASSERT_EQ(0u, h.Command(CmdOp::kModifyQp, {q, kState | kSqPsn, uint64_t(QpState::kRts)}));
    }
    Wqe recv;
    recv.wr_id = 77;
    recv.addr = pr.buf_b + 0x4000;
    recv.length = 40 + 64;
    recv.lkey = pr.kb;
    p.host[1]->PostRecv(pr.qb, recv);
    const char msg[] = "ud datagram";
    p.host[0]->Write(pr.buf_a, msg, sizeof msg);
    Wqe send;
    send.flags = send_flag::kSignaled;
    send.addr = pr.buf_a;
    send.length = sizeof msg;
    send.lkey = pr.ka;
    send.ud_qpn = pr.qb;
    send.ud_qkey = qkey;
    send.ud_port = 1;
    p.host[0]->PostSend(pr.qa, send);
    const std::optional<Cqe> r = p.host[1]->WaitCq(pr.cb, kLimit());
    ASSERT_TRUE(r);
    EXPECT_EQ(WcStatus::kSuccess, r->status);
    EXPECT_EQ(40 + sizeof msg, r->byte_len);
    EXPECT_EQ(0, std::memcmp(p.mem[1]->Bytes(pr.buf_b + 0x4000 + 40, sizeof msg), msg,
                             sizeof msg));
  }, sc_time(1, sc_core::SC_MS)));
}

// nic.h contract 3: doorbell -> CQE of one 8 B RC WRITE is the sum of the blocks' delays.
TEST(ScNic, SingleWriteLatencyIsSumOfBlockDelays) {
  testbed::Platform& p = Bed();
  sc_time cqe_at;
  uint64_t cq_addr = 0;
  p.mem[0]->on_access = [&](const tlm::tlm_generic_payload& gp, const sc_time& at) {
    if (gp.is_write() && gp.get_address() == cq_addr) cqe_at = at;
  };
  ASSERT_TRUE(p.Run([&] {
    const Pair pr = Connect();
    cq_addr = testbed::kCqBase + pr.ca * 0x1000ull;
    const sc_time rung = p.host[0]->PostSend(pr.qa, Write(pr, 8, pr.kb, 1));
    ASSERT_TRUE(p.host[0]->WaitCq(pr.ca, kLimit()));
    // wire.h contract 4, the engine's description too: one cable each side of the Switch.
    const uint64_t expected_ps = model::WriteDoorbellToCqePs(Cx6(), 8, 4096, 1);
    EXPECT_GT(expected_ps, 2'000'000u);  // 2,438.24 ns on cx6-100g through the Switch
    EXPECT_EQ(expected_ps, static_cast<uint64_t>((cqe_at - rung).to_seconds() * 1e12 + 0.5));
  }, sc_time(1, sc_core::SC_MS)));
  p.mem[0]->on_access = nullptr;
}

// Two QPs whose doorbells interleave (the requester's work list, nic.h contract 3): every
// WRITE completes, in order on each QP's CQ.
TEST(ScNic, InterleavedDoorbellsOfTwoQpsAllComplete) {
  testbed::Platform& p = Bed();
  ASSERT_TRUE(p.Run([&] {
    Pair pr[2] = {Connect(), Connect()};
    constexpr int kWrs = 8;
    for (int i = 0; i < kWrs; ++i) {
      for (int q = 0; q < 2; ++q) {
        Wqe w = Write(pr[q], 8, pr[q].kb, 1000 * q + i);
        w.remote_addr += 64 * q;
        p.host[0]->PostSend(pr[q].qa, w);
        wait(sc_time(50, sc_core::SC_NS));
      }
    }
    for (int q = 0; q < 2; ++q) {
      for (int i = 0; i < kWrs; ++i) {
        const std::optional<Cqe> c = p.host[0]->WaitCq(pr[q].ca, kLimit());
        ASSERT_TRUE(c);
        EXPECT_EQ(WcStatus::kSuccess, c->status);
        EXPECT_EQ(static_cast<uint64_t>(1000 * q + i), c->wr_id);
      }
      EXPECT_EQ(0, p.nic[0]->qp(pr[q].qa).sq_occupancy);
    }
  }, sc_time(1, sc_core::SC_MS)));
}

// The blocks that run ahead (nic.h contract 3) keep every time: 32 signaled 8 B WRITEs
// behind one doorbell complete at the single WRITE's latency and then one WRITE's wire time
// apart (the link is the bottleneck: 8.48 ns per WRITE against 5 ns of send engine and
// 2.88 ns of DMA read per WQE on cx6-100g).
TEST(ScNic, PipelinedWritesCompleteAtTheLinkRate) {
  testbed::Platform& p = Bed();
  std::vector<sc_time> cqe_at;
  uint64_t cq_lo = 0, cq_hi = 0;
  p.mem[0]->on_access = [&](const tlm::tlm_generic_payload& gp, const sc_time& at) {
    if (gp.is_write() && gp.get_address() >= cq_lo && gp.get_address() < cq_hi) {
      cqe_at.push_back(at);
    }
  };
  constexpr int kWrs = 32;
  ASSERT_TRUE(p.Run([&] {
    const Pair pr = Connect();
    cq_lo = testbed::kCqBase + pr.ca * 0x1000ull;
    cq_hi = cq_lo + testbed::kCqEntries * kCqeBytes;
    std::vector<Wqe> ws;
    for (int i = 0; i < kWrs; ++i) ws.push_back(Write(pr, 8, pr.kb, 100 + i));
    const sc_time rung = sc_core::sc_time_stamp();
    p.host[0]->PostSends(pr.qa, ws);
    for (int i = 0; i < kWrs; ++i) {
      const std::optional<Cqe> c = p.host[0]->WaitCq(pr.ca, kLimit());
      ASSERT_TRUE(c);
      EXPECT_EQ(WcStatus::kSuccess, c->status);
      EXPECT_EQ(100u + i, c->wr_id);
    }
    ASSERT_EQ(static_cast<size_t>(kWrs), cqe_at.size());
    const uint64_t wire =
        model::WireOf(Cx6().link, model::WireOp::kWrite, 8, 4096, false, false).wire_ps;
    const uint64_t first_ps = model::WriteDoorbellToCqePs(Cx6(), 8, 4096, 1);  // wire.h 4
    for (int i = 0; i < kWrs; ++i) {
      EXPECT_EQ(first_ps + i * wire,
                static_cast<uint64_t>((cqe_at[i] - rung).to_seconds() * 1e12 + 0.5)) << i;
    }
  }, sc_time(1, sc_core::SC_MS)));
  p.mem[0]->on_access = nullptr;
}

}  // namespace
}  // namespace qptwin::sc
