// Data movement and completion ordering on connected RC QPs: payloads byte for byte,
// immediate data, RDMA WRITE/READ, atomics, SQ/RQ ordering, selective signaling, flush.
#include <cstring>

#include "tests/conformance/fixture.h"

namespace qptwin::testing {
namespace {

using access::kAll;

TEST_P(Conformance, RcSendRecvMovesBytesAndImmediate) {
  auto [qa, qb] = ConnectedPair(QpType::kRc);
  Buffer src = Reg(4096, kAll), dst = Reg(4096, kAll);
  for (int i = 0; i < 3000; ++i) src.buf[i] = static_cast<uint8_t>(i * 7 + 1);
  size_t bad;
  ASSERT_EQ(dev_->PostRecv(qb, {Recv(100, {dst.At(0, 4096)})}, &bad), 0);
  SendWr wr = Send(1, {src.At(0, 1000), src.At(1000, 2000)});
  wr.opcode = WrOpcode::kSendWithImm;
  wr.imm_data = 0xabcd1234;
  ASSERT_EQ(dev_->PostSend(qa, {wr}, &bad), 0);
  auto wcs = WaitWc(cq_, 2);
  ASSERT_EQ(wcs.size(), 2u);
  const WorkCompletion* recv = wcs[0].wr_id == 100 ? &wcs[0] : &wcs[1];
  const WorkCompletion* send = wcs[0].wr_id == 100 ? &wcs[1] : &wcs[0];
  EXPECT_EQ(send->status, WcStatus::kSuccess);
  EXPECT_EQ(send->opcode, WcOpcode::kSend);
  EXPECT_EQ(recv->status, WcStatus::kSuccess);
  EXPECT_EQ(recv->opcode, WcOpcode::kRecv);
  EXPECT_EQ(recv->byte_len, 3000u);
  EXPECT_TRUE(recv->wc_flags & wc_flag::kWithImm);
  EXPECT_EQ(recv->imm_data, 0xabcd1234u);
  EXPECT_EQ(std::memcmp(src.buf, dst.buf, 3000), 0);
  EXPECT_EQ(dst.buf[3000], 0) << "nothing written past the message";
}

TEST_P(Conformance, RdmaWriteAndReadMoveBytes) {
  auto [qa, qb] = ConnectedPair(QpType::kRc);
  (void)qb;
  Buffer local = Reg(8192, kAll), remote = Reg(8192, kAll);
  for (int i = 0; i < 4096; ++i) local.buf[i] = static_cast<uint8_t>(255 - i % 251);
  for (int i = 0; i < 4096; ++i) remote.buf[4096 + i] = static_cast<uint8_t>(i % 13);
  SendWr w = RdmaTo(1, WrOpcode::kRdmaWrite, {local.At(0, 4096)}, remote, 0);
  SendWr r = RdmaTo(2, WrOpcode::kRdmaRead, {local.At(4096, 4096)}, remote, 4096);
  size_t bad;
  ASSERT_EQ(dev_->PostSend(qa, {w, r}, &bad), 0);
  auto wcs = WaitWc(cq_, 2);
  ASSERT_EQ(wcs.size(), 2u);
  EXPECT_EQ(wcs[0].wr_id, 1u);
  EXPECT_EQ(wcs[0].opcode, WcOpcode::kRdmaWrite);
  EXPECT_EQ(wcs[1].wr_id, 2u);
  EXPECT_EQ(wcs[1].opcode, WcOpcode::kRdmaRead);
  EXPECT_EQ(wcs[1].byte_len, 4096u);
  EXPECT_EQ(std::memcmp(local.buf, remote.buf, 4096), 0);
  EXPECT_EQ(std::memcmp(local.buf + 4096, remote.buf + 4096, 4096), 0);
}

TEST_P(Conformance, AtomicsReturnTheOldValue) {
  if (dattr_.atomic_cap == AtomicCap::kNone) GTEST_SKIP() << "device has no atomics";
  auto [qa, qb] = ConnectedPair(QpType::kRc);
  (void)qb;
  Buffer local = Reg(64, kAll), remote = Reg(64, kAll);
  uint64_t v = 40;
  std::memcpy(remote.buf, &v, 8);
  SendWr fa = RdmaTo(1, WrOpcode::kAtomicFetchAndAdd, {local.At(0, 8)}, remote, 0);
  fa.compare_add = 2;
  SendWr cs = RdmaTo(2, WrOpcode::kAtomicCmpAndSwp, {local.At(8, 8)}, remote, 0);
  cs.compare_add = 42;
  cs.swap = 7;
  size_t bad;
  ASSERT_EQ(dev_->PostSend(qa, {fa, cs}, &bad), 0);
  auto wcs = WaitWc(cq_, 2);
  ASSERT_EQ(wcs.size(), 2u);
  EXPECT_EQ(wcs[0].opcode, WcOpcode::kFetchAdd);
  EXPECT_EQ(wcs[1].opcode, WcOpcode::kCompSwap);
  uint64_t old_fa, old_cs, now;
  std::memcpy(&old_fa, local.buf, 8);
  std::memcpy(&old_cs, local.buf + 8, 8);
  std::memcpy(&now, remote.buf, 8);
  EXPECT_EQ(old_fa, 40u);
  EXPECT_EQ(old_cs, 42u);
  EXPECT_EQ(now, 7u);
}

// The requester CQE's byte_len of an atomic whose SGE is longer than its 8-byte operand: the
// SGE's length on rxe (Behaviour::atomic_wc_byte_len_is_sge_length), else 8. Only 8 bytes
// land either way.
TEST_P(Conformance, AtomicByteLenIsTheDevices) {
  if (dattr_.atomic_cap == AtomicCap::kNone) GTEST_SKIP() << "device has no atomics";
  auto [qa, qb] = ConnectedPair(QpType::kRc);
  (void)qb;
  Buffer local = Reg(64, kAll), remote = Reg(64, kAll);
  std::memset(local.buf, 0x5a, 64);
  uint64_t v = 40;
  std::memcpy(remote.buf, &v, 8);
  SendWr fa = RdmaTo(1, WrOpcode::kAtomicFetchAndAdd, {local.At(0, 24)}, remote, 0);
  fa.compare_add = 2;
  size_t bad;
  ASSERT_EQ(dev_->PostSend(qa, {fa}, &bad), 0);
  auto wcs = WaitWc(cq_, 1);
  ASSERT_EQ(wcs.size(), 1u);
  EXPECT_EQ(wcs[0].status, WcStatus::kSuccess);
  EXPECT_EQ(wcs[0].byte_len, GetParam().behaviour.atomic_wc_byte_len_is_sge_length ? 24u : 8u);
  uint64_t old = 0;
  std::memcpy(&old, local.buf, 8);
  EXPECT_EQ(old, 40u);
  EXPECT_EQ(local.buf[8], 0x5a) << "only the 8-byte operand lands";
}

TEST_P(Conformance, SendCompletionsInPostingOrderAndOnlySignaledOnes) {
  auto [qa, qb] = ConnectedPair(QpType::kRc, Cq(64), Cq(64));
  QpAttr a;
  QpInitAttr ia, ib;
  ASSERT_EQ(dev_->QueryQp(qa, &a, &ia), 0);
  ASSERT_EQ(dev_->QueryQp(qb, &a, &ib), 0);
  Buffer buf = Reg(4096, kAll);
  size_t bad;
  std::vector<RecvWr> recvs;
  for (int i = 0; i < 10; ++i) recvs.push_back(Recv(100 + i, {buf.At(2048 + 64 * i, 64)}));
  ASSERT_EQ(dev_->PostRecv(qb, recvs, &bad), 0);
  std::vector<SendWr> sends;
  for (int i = 0; i < 10; ++i) sends.push_back(Send(i, {buf.At(64 * i, 64)}, i % 3 == 0));
  ASSERT_EQ(dev_->PostSend(qa, sends, &bad), 0);
  auto rwc = WaitWc(ib.recv_cq, 10);
  ASSERT_EQ(rwc.size(), 10u);
  for (int i = 0; i < 10; ++i) EXPECT_EQ(rwc[i].wr_id, 100u + i) << "RQ completes in order";
  auto swc = WaitWc(ia.send_cq, 4);  // wr 0, 3, 6, 9 are signaled
  ASSERT_EQ(swc.size(), 4u);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(swc[i].wr_id, 3u * i);
  EXPECT_TRUE(Drain(ia.send_cq).empty()) << "unsignaled successes make no CQE (R21)";
}

TEST_P(Conformance, ErrFlushesReceivesInOrderAndResetDiscards) {
  Buffer buf = Reg(4096, kAll);
  QpHandle qp = Qp(QpType::kRc, 16, 16);
  Drive(QpType::kRc, qp, QpState::kInit);
  size_t bad;
  std::vector<RecvWr> recvs;
  for (int i = 0; i < 6; ++i) recvs.push_back(Recv(i, {buf.At(64 * i, 64)}));
  ASSERT_EQ(dev_->PostRecv(qp, recvs, &bad), 0);
  QpAttr a;
  a.qp_state = QpState::kErr;
  ASSERT_EQ(dev_->ModifyQp(qp, a, attr::kState), 0);
  auto wcs = WaitWc(cq_, 6);
  ASSERT_EQ(wcs.size(), 6u);
  for (int i = 0; i < 6; ++i) {
    EXPECT_EQ(wcs[i].wr_id, static_cast<uint64_t>(i));
    EXPECT_EQ(wcs[i].status, WcStatus::kWrFlushErr);
  }
  // RESET discards without completions (R9).
  QpHandle qp2 = Qp(QpType::kRc, 16, 16);
  Drive(QpType::kRc, qp2, QpState::kInit);
  ASSERT_EQ(dev_->PostRecv(qp2, recvs, &bad), 0);
  a.qp_state = QpState::kReset;
  ASSERT_EQ(dev_->ModifyQp(qp2, a, attr::kState), 0);
  EXPECT_TRUE(Drain(cq_).empty());
}

TEST_P(Conformance, SqdDrainRaisesSqDrained) {
  auto [qa, qb] = ConnectedPair(QpType::kRc);
  (void)qb;
  QpAttr a;
  a.qp_state = QpState::kSqd;
  a.en_sqd_async_notify = true;
  ASSERT_EQ(dev_->ModifyQp(qa, a, attr::kState | attr::kEnSqdAsyncNotify), 0);
  EXPECT_EQ(dev_->WaitForAsyncEvent(EventType::kSqDrained, qa, kSecond), 0);
  EXPECT_EQ(StateOf(qa), QpState::kSqd);
  a.qp_state = QpState::kRts;
  EXPECT_EQ(dev_->ModifyQp(qa, a, attr::kState), 0);
  EXPECT_EQ(StateOf(qa), QpState::kRts);
}

}  // namespace
}  // namespace qptwin::testing
