// The model's DMA on its SystemC platform (model/sim/platform.h, model/engine/host_bus.h):
// every payload byte crosses the device's TLM-2.0 initiator socket, and a transaction the
// host memory fails becomes an error completion.
#include <cstring>
#include <string>
#include <vector>

#include <systemc>

#include "model/engine/event_queue.h"
#include "model/model_backend.h"
#include "model/sim/platform.h"
#include "tests/support/support.h"

namespace qptwin::model::testing {
namespace {

using namespace ::qptwin::testing;  // tests/support/support.h

class DmaTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ModelClearDmaErrors();
    be_ = RxeModel();
    a_ = MakeSide(*be_, "mdev0");  // slot 0
    b_ = MakeSide(*be_, "mdev1");  // slot 1
    Connect(a_, b_);
  }
  void TearDown() override { ModelClearDmaErrors(); }
  // A receive of 4096 bytes on b, then a SEND of `len` bytes from a.
  void SendIntoAReceive(uint32_t len) {
    size_t bad = 0;
    ASSERT_EQ(b_.dev->PostRecv(b_.qp, {Rwr(9, {b_.At(0, 4096)})}, &bad), 0);
    ASSERT_EQ(a_.dev->PostSend(a_.qp, {Wr(1, WrOpcode::kSend, {a_.At(0, len)})}, &bad), 0);
  }
  // engine/send_wqe_image.h contract 3: a send ring slot's bytes for s's QP (a 112-byte
  // header, 16 bytes per SGE, the inline limit rounded up to 16).
  static uint64_t SendSlotBytes(const Side& s) {
    QpAttr attr;
    QpInitAttr init;
    EXPECT_EQ(s.dev->QueryQp(s.qp, &attr, &init), 0);
    return 112 + 16 * uint64_t{init.cap.max_send_sge} + ((init.cap.max_inline_data + 15) & ~15u);
  }
  std::unique_ptr<Backend> be_;
  Side a_, b_;
};

TEST_F(DmaTest, EveryPayloadByteIsATransactionOfItsDevicesSlot) {
  for (int i = 0; i < 3000; ++i) a_.buf[i] = static_cast<uint8_t>(i * 5 + 1);
  const DmaCounters a0 = ModelDmaCounters(0), b0 = ModelDmaCounters(1);
  size_t bad = 0;
  ASSERT_EQ(a_.dev->PostSend(a_.qp, {WriteWr(a_, b_, 1, 0, 3000)}, &bad), 0);
  ASSERT_EQ(Wait(a_, a_.scq, 1).at(0).status, WcStatus::kSuccess);
  EXPECT_EQ(std::memcmp(a_.buf, b_.buf, 3000), 0);
  const DmaCounters a1 = ModelDmaCounters(0), b1 = ModelDmaCounters(1);
  // mdev0 fetches the WQE (engine/send_wqe_image.h: 112 + 16 bytes), reads the payload
  // (one SGE: one transaction) and writes the CQE into its CQ's ring (engine/cq.h contract
  // 5); the responder writes the payload through mdev1's (3 packets: one transaction).
  EXPECT_EQ(a1.reads - a0.reads, 2u);
  EXPECT_EQ(a1.bytes_read - a0.bytes_read, 128u + 3000u);
  EXPECT_EQ(a1.writes - a0.writes, 1u);
  EXPECT_EQ(a1.bytes_written - a0.bytes_written, 64u);
  EXPECT_EQ(b1.writes - b0.writes, 1u);
  EXPECT_EQ(b1.bytes_written - b0.bytes_written, 3000u);
  EXPECT_EQ(b1.reads - b0.reads, 0u);
  EXPECT_EQ(a1.errors + b1.errors, a0.errors + b0.errors);

  // A READ the other way: mdev1 reads its memory for the response, mdev0 writes it.
  ASSERT_EQ(a_.dev->PostSend(a_.qp, {RemoteWr(2, WrOpcode::kRdmaRead, a_.At(4096, 512), b_, 0)},
                             &bad),
            0);
  ASSERT_EQ(Wait(a_, a_.scq, 1).at(0).status, WcStatus::kSuccess);
  EXPECT_EQ(std::memcmp(a_.buf + 4096, b_.buf, 512), 0);
  const DmaCounters a2 = ModelDmaCounters(0), b2 = ModelDmaCounters(1);
  EXPECT_EQ(b2.bytes_read - b1.bytes_read, 512u);
  EXPECT_EQ(a2.bytes_read - a1.bytes_read, 128u);  // the READ's WQE
  EXPECT_EQ(a2.bytes_written - a1.bytes_written, 512u + 64u);  // the data, then the CQE
}

// sim/platform.h contract 15, sim/sc_clock.h contract 9: each block of a slot is a process of
// its own, a child of the slot's module, and a block's wake-ups notify that process.
TEST_F(DmaTest, EachBlockOfASlotIsAProcessOfItsOwn) {
  using Block = engine::EventQueue::Block;
  for (int b = 1; b < engine::EventQueue::kBlocks; ++b) {
    const Block block = static_cast<Block>(b);
    for (int slot : {0, 1}) {
      // A NIC's blocks are children of each slot, the World's own of the platform.
      const std::string name =
          (engine::EventQueue::IsWorldBlock(block) ? std::string("qptwin_platform.")
                                                   : "qptwin_platform.nic" +
                                                         std::to_string(slot) + ".") +
          engine::EventQueue::BlockName(block);
      const sc_core::sc_object* process = sc_core::sc_find_object(name.c_str());
      ASSERT_NE(process, nullptr) << name;
      EXPECT_STREQ(process->kind(), "sc_method_process") << name;
      EXPECT_NE(sc_core::sc_find_event((name + "_wake").c_str()), nullptr) << name;
    }
  }
  const sim::ScClock::BlockProcesses& a = *sim::Platform::Get()->slot(0).blocks();
  const sim::ScClock::BlockProcesses& b = *sim::Platform::Get()->slot(1).blocks();
  const uint64_t a_engine = a.activations(Block::kSendEngine);
  const uint64_t a_port = a.activations(Block::kPort), b_port = b.activations(Block::kPort);
  const uint64_t b_engine = b.activations(Block::kSendEngine);
  size_t bad = 0;
  ASSERT_EQ(a_.dev->PostSend(a_.qp, {WriteWr(a_, b_, 1, 0, 64)}, &bad), 0);
  ASSERT_EQ(Wait(a_, a_.scq, 1).at(0).status, WcStatus::kSuccess);
  // rxe runs the requester inside the post (no wake-up of the send engine); the WRITE
  // crosses mdev0's link and the ACK mdev1's, each microseconds later (beyond the quantum
  // a Step may run ahead), so each port's own process runs.
  EXPECT_EQ(a.activations(Block::kSendEngine), a_engine);
  EXPECT_GT(a.activations(Block::kPort), a_port);
  EXPECT_GT(b.activations(Block::kPort), b_port);
  EXPECT_EQ(b.activations(Block::kSendEngine), b_engine) << "mdev1 sent no WQE";
}

// sim/sc_clock.h contract 9: the newest Backend on a slot takes its processes; an older one
// alive goes on with pooled ones.
TEST_F(DmaTest, TheNewestBackendOnASlotTakesItsProcesses) {
  using Block = engine::EventQueue::Block;
  const sim::ScClock::BlockProcesses& b = *sim::Platform::Get()->slot(1).blocks();
  std::unique_ptr<Backend> newer = RxeModel();
  Side a2 = MakeSide(*newer, "mdev0"), b2 = MakeSide(*newer, "mdev1");
  Connect(a2, b2);
  size_t bad = 0;
  uint64_t acks = b.activations(Block::kPort);
  ASSERT_EQ(a2.dev->PostSend(a2.qp, {WriteWr(a2, b2, 1, 0, 64)}, &bad), 0);
  ASSERT_EQ(Wait(a2, a2.scq, 1).at(0).status, WcStatus::kSuccess);
  EXPECT_GT(b.activations(Block::kPort), acks) << "the newer Backend's ACK on nic1.port";
  acks = b.activations(Block::kPort);
  ASSERT_EQ(a_.dev->PostSend(a_.qp, {WriteWr(a_, b_, 2, 0, 64)}, &bad), 0);
  ASSERT_EQ(Wait(a_, a_.scq, 1).at(0).status, WcStatus::kSuccess) << "the older goes on";
  EXPECT_EQ(b.activations(Block::kPort), acks) << "the older Backend's ACK on a pooled process";
  newer.reset();
  a2 = Side{};
  b2 = Side{};
}

TEST_F(DmaTest, EachTransactionSaysWhatItIsForWhichQpAndWhen) {
  std::vector<DmaTransfer> seen;
  ASSERT_TRUE(SetModelDmaObserver([&seen](const DmaTransfer& t) { seen.push_back(t); }));
  size_t bad = 0;
  ASSERT_EQ(a_.dev->PostSend(a_.qp, {WriteWr(a_, b_, 1, 0, 100)}, &bad), 0);
  ASSERT_EQ(Wait(a_, a_.scq, 1).at(0).status, WcStatus::kSuccess);
  ASSERT_TRUE(SetModelDmaObserver(nullptr));
  ASSERT_EQ(seen.size(), 5u);
  // sim/platform.h contract 8: the post's doorbell, an MMIO write, comes first.
  EXPECT_STREQ(seen[0].kind, "DOORBELL");
  EXPECT_EQ(seen[0].bytes, 8u);
  EXPECT_TRUE(seen[0].write);
  EXPECT_EQ(seen[0].qpn, a_.qpn);
  EXPECT_EQ(seen[0].slot, 0);
  seen.erase(seen.begin());
  EXPECT_STREQ(seen[0].kind, "SEND_WQE");
  EXPECT_EQ(seen[0].bytes, 128u);
  EXPECT_EQ(seen[0].qpn, a_.qpn);
  seen.erase(seen.begin());
  EXPECT_STREQ(seen[0].kind, "PAYLOAD_READ");
  EXPECT_EQ(seen[0].slot, 0);
  EXPECT_EQ(seen[0].qpn, a_.qpn);
  EXPECT_FALSE(seen[0].write);
  EXPECT_EQ(seen[0].bytes, 100u);
  EXPECT_STREQ(seen[1].kind, "WRITE_DATA");
  EXPECT_EQ(seen[1].slot, 1);
  EXPECT_EQ(seen[1].qpn, b_.qpn);
  EXPECT_TRUE(seen[1].write);
  EXPECT_STREQ(seen[2].kind, "CQE");
  EXPECT_EQ(seen[2].qpn, a_.qpn);
  EXPECT_EQ(seen[2].bytes, 64u);
  EXPECT_LE(seen[0].time_ns, seen[1].time_ns);
  EXPECT_LT(seen[1].time_ns, seen[2].time_ns);  // the ACK's way back
  EXPECT_LE(seen[2].time_ns, be_->NowNs());
  for (const DmaTransfer& t : seen) EXPECT_TRUE(t.ok);
}

// sim/platform.h contract 8: a post rings one doorbell, an 8-byte MMIO write through the
// host CPU's socket to the slot's target socket, whatever number of WRs it carries; the
// NIC fetches them after it. With BlueFlame (cx6) a single inline WR's image comes in the
// write and no fetch follows.
TEST_F(DmaTest, EachPostRingsOneDoorbellThroughTheSlotsMmioSocket) {
  std::vector<DmaTransfer> seen;
  const DmaCounters a0 = ModelDmaCounters(0);
  ASSERT_TRUE(SetModelDmaObserver([&seen](const DmaTransfer& t) { seen.push_back(t); }));
  size_t bad = 0;
  ASSERT_EQ(a_.dev->PostSend(a_.qp, {WriteWr(a_, b_, 1, 0, 8), WriteWr(a_, b_, 2, 8, 8)}, &bad),
            0);
  ASSERT_EQ(Wait(a_, a_.scq, 2).size(), 2u);
  ASSERT_TRUE(SetModelDmaObserver(nullptr));
  EXPECT_EQ(ModelDmaCounters(0).doorbells - a0.doorbells, 1u);
  ASSERT_GE(seen.size(), 2u);
  EXPECT_STREQ(seen[0].kind, "DOORBELL");
  EXPECT_EQ(seen[0].bytes, 8u);
  EXPECT_STREQ(seen[1].kind, "SEND_WQE");
  // Both WQEs in one read: the first one's ring slot, then the second's 128-byte image.
  EXPECT_EQ(seen[1].bytes, SendSlotBytes(a_) + 128u);
  EXPECT_EQ(seen[0].time_ns, seen[1].time_ns);  // labelled with the engine's time of the ring
  int doorbells = 0;
  for (const DmaTransfer& t : seen) doorbells += std::string(t.kind) == "DOORBELL";
  EXPECT_EQ(doorbells, 1);

  ModelOptions o;
  o.profile = "cx6-100g";
  auto cx6 = MakeModelBackend(o);
  ASSERT_NE(cx6, nullptr);
  Side c = MakeSide(*cx6, "mdev0"), d = MakeSide(*cx6, "mdev1");
  Connect(c, d);
  seen.clear();
  ASSERT_TRUE(SetModelDmaObserver([&seen](const DmaTransfer& t) { seen.push_back(t); }));
  SendWr inl = WriteWr(c, d, 3, 0, 8);
  inl.send_flags |= send_flag::kInline;
  ASSERT_EQ(c.dev->PostSend(c.qp, {inl}, &bad), 0);
  ASSERT_EQ(Wait(c, c.scq, 1).at(0).status, WcStatus::kSuccess);
  ASSERT_TRUE(SetModelDmaObserver(nullptr));
  ASSERT_GE(seen.size(), 1u);
  EXPECT_STREQ(seen[0].kind, "DOORBELL");
  EXPECT_GT(seen[0].bytes, 8u + 112u);  // the doorbell word, then the WQE with its data
  for (const DmaTransfer& t : seen) {
    EXPECT_STRNE(t.kind, "SEND_WQE");
    EXPECT_STRNE(t.kind, "PAYLOAD_READ");
  }
}

TEST_F(DmaTest, ASendFetchesTheReceiveWqeBeforeWritingIntoIt) {
  std::vector<DmaTransfer> seen;
  size_t bad = 0;
  ASSERT_EQ(b_.dev->PostRecv(b_.qp, {Rwr(9, {b_.At(0, 4096)})}, &bad), 0);
  ASSERT_TRUE(SetModelDmaObserver([&seen](const DmaTransfer& t) { seen.push_back(t); }));
  ASSERT_EQ(a_.dev->PostSend(a_.qp, {Wr(1, WrOpcode::kSend, {a_.At(0, 200)})}, &bad), 0);
  ASSERT_EQ(Wait(b_, b_.rcq, 1).at(0).status, WcStatus::kSuccess);
  ASSERT_EQ(Wait(a_, a_.scq, 1).at(0).status, WcStatus::kSuccess);
  ASSERT_TRUE(SetModelDmaObserver(nullptr));
  std::vector<std::string> b_kinds;
  for (const DmaTransfer& t : seen) {
    if (t.slot == 1) b_kinds.push_back(t.kind);
  }
  // engine/recv_queue.h: the doorbell record (contract 5: the NIC knew of no receive), then
  // one read of the WQE's slot (16-byte header + one 16-byte SGE).
  EXPECT_EQ(b_kinds, (std::vector<std::string>{"RECV_DBREC", "RECV_WQE", "RECV_DATA", "CQE"}));
  for (const DmaTransfer& t : seen) {
    if (std::string(t.kind) == "RECV_WQE" || std::string(t.kind) == "RECV_DBREC") {
      EXPECT_EQ(t.bytes, std::string(t.kind) == "RECV_WQE" ? 32u : 4u);
      EXPECT_FALSE(t.write);
      EXPECT_EQ(t.qpn, b_.qpn);
    }
  }
}

TEST_F(DmaTest, AnRnrRoundReadsTheReceiveQueuesDoorbellRecordOnce) {
  std::vector<DmaTransfer> seen;
  ASSERT_TRUE(SetModelDmaObserver([&seen](const DmaTransfer& t) { seen.push_back(t); }));
  size_t bad = 0;
  SendWr imm = WriteWr(a_, b_, 1, 0, 8);
  imm.opcode = WrOpcode::kRdmaWriteWithImm;
  imm.imm_data = 0x1234;
  ASSERT_EQ(a_.dev->PostSend(a_.qp, {imm}, &bad), 0);
  be_->Advance(500 * 1000);  // the first RNR NAK, well before the retry (rxe: a 4 ms tick)
  auto count = [&seen](const char* kind) {
    int n = 0;
    for (const DmaTransfer& t : seen) n += t.slot == 1 && std::string(t.kind) == kind;
    return n;
  };
  // The WRITE_WITH_IMM looks for a receive twice (before its data, then to take one): the
  // record is read once (engine/recv_queue.h contract 5), and shows none.
  EXPECT_EQ(count("RECV_DBREC"), 1);
  EXPECT_EQ(count("RECV_WQE"), 0);
  ASSERT_EQ(b_.dev->PostRecv(b_.qp, {Rwr(9, {b_.At(0, 64)})}, &bad), 0);
  auto wc = Wait(b_, b_.rcq, 1);
  ASSERT_EQ(wc.size(), 1u);
  EXPECT_EQ(wc[0].wr_id, 9u);
  EXPECT_EQ(wc[0].imm_data, 0x1234u);
  ASSERT_TRUE(SetModelDmaObserver(nullptr));
  EXPECT_EQ(count("RECV_DBREC"), 2);  // the retry's look: the record now shows the receive
  EXPECT_EQ(count("RECV_WQE"), 1);
}

TEST_F(DmaTest, AFailedWqeFetchIsALocalQpOperationError) {
  uint64_t wqe_addr = 0;
  ASSERT_TRUE(SetModelDmaObserver([&wqe_addr](const DmaTransfer& t) {
    if (std::string(t.kind) == "SEND_WQE") wqe_addr = t.addr;
  }));
  size_t bad = 0;
  ASSERT_EQ(a_.dev->PostSend(a_.qp, {WriteWr(a_, b_, 1, 0, 8)}, &bad), 0);
  ASSERT_EQ(Wait(a_, a_.scq, 1).at(0).status, WcStatus::kSuccess);
  ASSERT_TRUE(SetModelDmaObserver(nullptr));
  ASSERT_NE(wqe_addr, 0u);
  // The next post's WQE goes to the next slot of the send ring: its fetch fails.
  ASSERT_TRUE(ModelInjectDmaError(reinterpret_cast<const void*>(wqe_addr + SendSlotBytes(a_)), 1));
  b_.buf[100] = 0;
  a_.buf[100] = 0x33;
  ASSERT_EQ(a_.dev->PostSend(a_.qp, {WriteWr(a_, b_, 2, 100, 8)}, &bad), 0);
  auto wc = Wait(a_, a_.scq, 1);
  ASSERT_EQ(wc.size(), 1u);
  EXPECT_EQ(wc[0].wr_id, 2u);  // the provider's record of the WR
  EXPECT_EQ(wc[0].status, WcStatus::kLocQpOpErr);
  EXPECT_EQ(b_.buf[100], 0);
  EXPECT_EQ(StateOf(a_), QpState::kErr);
}

// engine/send_wqe_image.h contract 3: the NIC keeps no copy of a WQE. An RNR retry resends
// the SEND from its ring slot, read again; a read that fails then is LOC_QP_OP_ERR.
TEST_F(DmaTest, ARetryReadsTheWqeFromItsRingSlotAgain) {
  std::vector<DmaTransfer> seen;
  ASSERT_TRUE(SetModelDmaObserver([&seen](const DmaTransfer& t) {
    if (std::string(t.kind) == "SEND_WQE") seen.push_back(t);
  }));
  size_t bad = 0;
  ASSERT_EQ(a_.dev->PostSend(a_.qp, {Wr(1, WrOpcode::kSend, {a_.At(0, 8)})}, &bad), 0);
  be_->Advance(500 * 1000);  // the first RNR NAK, well before the retry (rxe: a 4 ms tick)
  ASSERT_EQ(seen.size(), 1u);  // the fetch after the doorbell
  ASSERT_EQ(b_.dev->PostRecv(b_.qp, {Rwr(9, {b_.At(0, 64)})}, &bad), 0);
  auto wc = Wait(a_, a_.scq, 1);
  ASSERT_TRUE(SetModelDmaObserver(nullptr));
  ASSERT_EQ(wc.size(), 1u);
  EXPECT_EQ(wc[0].status, WcStatus::kSuccess);
  ASSERT_EQ(seen.size(), 2u);  // and the retry's read of the same slot
  EXPECT_EQ(seen[1].addr, seen[0].addr);
  EXPECT_EQ(seen[1].bytes, seen[0].bytes);
  EXPECT_FALSE(seen[1].write);
  EXPECT_GT(seen[1].time_ns, seen[0].time_ns);
}

// Contract 3: a post whose WQEs run past the ring's last slot is fetched in two reads, the
// second from the ring's start.
TEST_F(DmaTest, APostThatWrapsTheSendRingIsFetchedInTwoReads) {
  QpAttr attr;
  QpInitAttr init;
  ASSERT_EQ(a_.dev->QueryQp(a_.qp, &attr, &init), 0);
  uint32_t slots = 1;  // rxe's ring: max_send_wr + 1 rounded up to a power of two
  while (slots < init.cap.max_send_wr + 1) slots <<= 1;
  std::vector<DmaTransfer> seen;
  ASSERT_TRUE(SetModelDmaObserver([&seen](const DmaTransfer& t) {
    if (std::string(t.kind) == "SEND_WQE") seen.push_back(t);
  }));
  size_t bad = 0;
  for (uint32_t i = 0; i + 1 < slots; ++i) {  // slots 0 .. slots-2, one post each
    ASSERT_EQ(a_.dev->PostSend(a_.qp, {WriteWr(a_, b_, i, 0, 8)}, &bad), 0);
    ASSERT_EQ(Wait(a_, a_.scq, 1).size(), 1u);
  }
  ASSERT_EQ(seen.size(), slots - 1);
  const uint64_t stride = SendSlotBytes(a_);
  EXPECT_EQ(seen[1].addr, seen[0].addr + stride);
  // The ring's storage grows as the posts reach its slots (it may move): where it is now.
  const uint64_t ring = seen.back().addr - (slots - 2) * stride;
  seen.clear();
  ASSERT_EQ(a_.dev->PostSend(a_.qp, {WriteWr(a_, b_, 100, 0, 8), WriteWr(a_, b_, 101, 8, 8)},
                             &bad),
            0);
  auto wc = Wait(a_, a_.scq, 2);
  ASSERT_TRUE(SetModelDmaObserver(nullptr));
  ASSERT_EQ(wc.size(), 2u);
  EXPECT_EQ(wc[0].wr_id, 100u);
  EXPECT_EQ(wc[1].wr_id, 101u);
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[0].addr, ring + (slots - 1) * stride);  // the last slot
  EXPECT_EQ(seen[0].bytes, 128u);
  EXPECT_EQ(seen[1].addr, ring);  // round to the first
  EXPECT_EQ(seen[1].bytes, 128u);
}

TEST_F(DmaTest, AFailedReadOfAResentWqeIsALocalQpOperationError) {
  uint64_t wqe_addr = 0;
  ASSERT_TRUE(SetModelDmaObserver([&wqe_addr](const DmaTransfer& t) {
    if (std::string(t.kind) == "SEND_WQE") wqe_addr = t.addr;
  }));
  size_t bad = 0;
  ASSERT_EQ(a_.dev->PostSend(a_.qp, {Wr(1, WrOpcode::kSend, {a_.At(0, 8)})}, &bad), 0);
  be_->Advance(500 * 1000);  // RNR-NAKed: the retry waits for the RNR timer
  ASSERT_TRUE(SetModelDmaObserver(nullptr));
  ASSERT_NE(wqe_addr, 0u);
  ASSERT_TRUE(ModelInjectDmaError(reinterpret_cast<const void*>(wqe_addr), 1));
  ASSERT_EQ(b_.dev->PostRecv(b_.qp, {Rwr(9, {b_.At(0, 64)})}, &bad), 0);
  auto wc = Wait(a_, a_.scq, 1);
  ASSERT_EQ(wc.size(), 1u);
  EXPECT_EQ(wc[0].wr_id, 1u);
  EXPECT_EQ(wc[0].status, WcStatus::kLocQpOpErr);
  EXPECT_EQ(StateOf(a_), QpState::kErr);
}

TEST_F(DmaTest, AFailedPayloadReadIsALocalProtectionError) {
  ASSERT_TRUE(ModelInjectDmaError(a_.buf + 100, 1));
  const DmaCounters before = ModelDmaCounters(0);
  SendIntoAReceive(200);
  auto wc = Wait(a_, a_.scq, 1);
  ASSERT_EQ(wc.size(), 1u);
  EXPECT_EQ(wc[0].status, WcStatus::kLocProtErr);
  EXPECT_EQ(ModelDmaCounters(0).errors - before.errors, 1u);
  EXPECT_EQ(StateOf(a_), QpState::kErr);
  // Nothing left: the receive is still posted on mdev1 (no message arrived).
  EXPECT_EQ(Wait(b_, b_.rcq, 0).size(), 0u);
}

TEST_F(DmaTest, AFailedResponderWriteIsARemoteOperationalError) {
  std::memset(a_.buf, 0x77, 64);
  ASSERT_TRUE(ModelInjectDmaError(b_.buf + 32, 8));
  size_t bad = 0;
  ASSERT_EQ(a_.dev->PostSend(a_.qp, {WriteWr(a_, b_, 1, 0, 64)}, &bad), 0);
  auto wc = Wait(a_, a_.scq, 1);
  ASSERT_EQ(wc.size(), 1u);
  EXPECT_EQ(wc[0].status, WcStatus::kRemOpErr);
  EXPECT_EQ(b_.buf[0], 0);  // the transaction failed whole: no byte moved
  EXPECT_EQ(StateOf(b_), QpState::kErr);
  EXPECT_EQ(StateOf(a_), QpState::kErr);
}

TEST_F(DmaTest, AFailedAtomicAtTheResponderIsARemoteOperationalError) {
  ASSERT_TRUE(ModelInjectDmaError(b_.buf + 64, 8));
  size_t bad = 0;
  SendWr wr = RemoteWr(1, WrOpcode::kAtomicFetchAndAdd, a_.At(0, 8), b_, 64);
  wr.compare_add = 5;
  ASSERT_EQ(a_.dev->PostSend(a_.qp, {wr}, &bad), 0);
  auto wc = Wait(a_, a_.scq, 1);
  ASSERT_EQ(wc.size(), 1u);
  EXPECT_EQ(wc[0].status, WcStatus::kRemOpErr);
  uint64_t v = 1;
  std::memcpy(&v, b_.buf + 64, 8);
  EXPECT_EQ(v, 0u);
}

TEST_F(DmaTest, AFailedWriteOfReadDataIsALocalProtectionError) {
  std::memset(b_.buf, 0x42, 256);
  ASSERT_TRUE(ModelInjectDmaError(a_.buf + 1024, 256));
  size_t bad = 0;
  ASSERT_EQ(
      a_.dev->PostSend(a_.qp, {RemoteWr(1, WrOpcode::kRdmaRead, a_.At(1024, 256), b_, 0)}, &bad),
      0);
  auto wc = Wait(a_, a_.scq, 1);
  ASSERT_EQ(wc.size(), 1u);
  EXPECT_EQ(wc[0].status, WcStatus::kLocProtErr);
  EXPECT_EQ(a_.buf[1024], 0);
}

TEST_F(DmaTest, AFailedReceiveWriteCompletesTheReceiveWithAnError) {
  ASSERT_TRUE(ModelInjectDmaError(b_.buf, 16));
  SendIntoAReceive(100);
  auto rwc = Wait(b_, b_.rcq, 1);
  ASSERT_EQ(rwc.size(), 1u);
  // The rxe profile: every copy failure at the receiver is a malformed WQE
  // (Behaviour::recv_error_is_malformed_wqe): LOC_QP_OP_ERR, and the sender sees a NAK.
  EXPECT_EQ(rwc[0].status, WcStatus::kLocQpOpErr);
  auto swc = Wait(a_, a_.scq, 1);
  ASSERT_EQ(swc.size(), 1u);
  EXPECT_EQ(swc[0].status, WcStatus::kRemOpErr);
}

TEST(DmaPlatform, IsAHierarchyOfModulesAndBoundSockets) {
  auto be = RxeModel();
  ASSERT_NE(be, nullptr);
  for (const char* name : {"qptwin_platform", "qptwin_platform.host", "qptwin_platform.nic0",
                           "qptwin_platform.nic15", "qptwin_platform.nic0.dma",
                           "qptwin_platform.host.port15"}) {
    EXPECT_NE(sc_core::sc_find_object(name), nullptr) << name;
  }
  EXPECT_EQ(std::string(sc_core::sc_find_object("qptwin_platform.nic3")->kind()), "sc_module");
}

TEST(DmaPlatform, ClearedErrorsMoveBytesAgain) {
  auto be = RxeModel();
  Side a = MakeSide(*be, "mdev0"), b = MakeSide(*be, "mdev1");
  Connect(a, b);
  ASSERT_TRUE(ModelInjectDmaError(b.buf, 8));
  ModelClearDmaErrors();
  a.buf[0] = 9;
  size_t bad = 0;
  ASSERT_EQ(a.dev->PostSend(a.qp, {WriteWr(a, b, 1, 0, 8)}, &bad), 0);
  ASSERT_EQ(Wait(a, a.scq, 1).at(0).status, WcStatus::kSuccess);
  EXPECT_EQ(b.buf[0], 9);
}

}  // namespace
}  // namespace qptwin::model::testing
