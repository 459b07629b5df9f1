// The behaviours in which real rxe (Linux 6.1, rdma-core 44) and IBTA differ, each asserted as
// the case's device description says (spec/device_description.h, docs/differences.md): refused sends that stay queued,
// receives posted in ERR that wait, LAST_WQE_REACHED, async events on a bad rkey.
#include <cstring>

#include "tests/conformance/fixture.h"
#include "spec/reference/device_behaviour.h"

namespace qptwin::testing {
namespace {

using reference::ProbeDeviceBehaviour;
using access::kAll;

// The description the case declares is what the device does: the reference model of the
// sequence property (and `qptwin fuzz`, which probes) would otherwise predict the wrong errnos.
TEST_P(Conformance, ProbedBehaviourIsTheDescriptions) {
  ASSERT_NE(GetParam().description, nullptr) << "QPTWIN_DEVICE_DESCRIPTION names no description";
  Behaviour probed = GetParam().behaviour;
  probed.post_send_below_rts_queues = !probed.post_send_below_rts_queues;  // the probe must set it
  probed.recv_in_err_waits = !probed.recv_in_err_waits;
  const bool model = backend_->Kind() == "model";
  ASSERT_EQ(ProbeDeviceBehaviour(*dev_, pd_, model ? 2'000'000 : 50'000'000, &probed), 0);
  EXPECT_EQ(DescribeDifferences(probed, GetParam().behaviour), "")
      << "probed vs the " << GetParam().description->name << " description";
  EXPECT_TRUE(Drain(cq_).empty()) << "the probe uses a CQ of its own";
}

// What ibv_query_device / ibv_query_port report is what the description says (on hw: the
// declared device; a difference names every field that differs).
TEST_P(Conformance, QueriedCapsAreTheDescriptions) {
  const DeviceDescription* d = GetParam().description;
  ASSERT_NE(d, nullptr);
  DeviceAttr a;
  PortAttr p;
  ASSERT_EQ(dev_->QueryDevice(&a), 0);
  ASSERT_EQ(dev_->QueryPort(1, &p), 0);
  std::string diff;
  auto check = [&diff](const char* name, long long got, long long want) {
    if (got != want) diff += std::string(" ") + name + " " + std::to_string(got) + " (described " +
                             std::to_string(want) + ")";
  };
  const DeviceAttr& w = d->device;
  check("vendor_id", a.vendor_id, w.vendor_id);
  check("max_qp", a.max_qp, w.max_qp);
  check("max_qp_wr", a.max_qp_wr, w.max_qp_wr);
  check("max_sge", a.max_sge, w.max_sge);
  check("max_cq", a.max_cq, w.max_cq);
  check("max_cqe", a.max_cqe, w.max_cqe);
  check("max_mr", a.max_mr, w.max_mr);
  check("max_pd", a.max_pd, w.max_pd);
  check("max_qp_rd_atom", a.max_qp_rd_atom, w.max_qp_rd_atom);
  check("max_qp_init_rd_atom", a.max_qp_init_rd_atom, w.max_qp_init_rd_atom);
  check("max_srq", a.max_srq, w.max_srq);
  check("max_srq_wr", a.max_srq_wr, w.max_srq_wr);
  check("max_srq_sge", a.max_srq_sge, w.max_srq_sge);
  check("max_inline_data", a.max_inline_data, w.max_inline_data);
  check("max_pkeys", a.max_pkeys, w.max_pkeys);
  check("atomic_cap", static_cast<int>(a.atomic_cap), static_cast<int>(w.atomic_cap));
  check("phys_port_cnt", a.phys_port_cnt, w.phys_port_cnt);
  const PortAttr& wp = d->port;
  check("port.max_mtu", static_cast<int>(p.max_mtu), static_cast<int>(wp.max_mtu));
  check("port.active_mtu", static_cast<int>(p.active_mtu), static_cast<int>(wp.active_mtu));
  check("port.gid_tbl_len", p.gid_tbl_len, wp.gid_tbl_len);
  check("port.max_msg_sz", p.max_msg_sz, wp.max_msg_sz);
  check("port.pkey_tbl_len", p.pkey_tbl_len, wp.pkey_tbl_len);
  check("port.link_layer", static_cast<int>(p.link_layer), static_cast<int>(wp.link_layer));
  EXPECT_EQ(diff, "") << "device vs the " << d->name << " description:" << diff;
}

// R2 on IBTA: a send refused below RTS never runs. rxe (rdma-core providers/rxe
// rxe_post_send) writes it into the ring before the doorbell refuses the QP; it runs at the
// next doorbell in RTS, ahead of the WR that rings it.
TEST_P(Conformance, SendRefusedInInitRunsInRtsOnlyWhereItWasQueued) {
  const bool queues = GetParam().behaviour.post_send_below_rts_queues;
  Buffer buf = Reg(4096, kAll);
  QpHandle qa = Qp(QpType::kRc), qb = Qp(QpType::kRc);
  Drive(QpType::kRc, qb, QpState::kRts, qa);
  size_t bad = 99;
  ASSERT_EQ(dev_->PostRecv(qb, {Recv(10, {buf.At(0, 64)}), Recv(11, {buf.At(64, 64)})}, &bad), 0);
  Drive(QpType::kRc, qa, QpState::kInit, qb);
  EXPECT_EQ(dev_->PostSend(qa, {Send(1, {buf.At(1024, 8)})}, &bad), EINVAL);
  EXPECT_EQ(bad, queues ? 1u : 0u);
  QpAttr a = FullAttr(qa, qb);
  for (QpState next : {QpState::kRtr, QpState::kRts}) {
    const QpState cur = next == QpState::kRtr ? QpState::kInit : QpState::kRtr;
    a.qp_state = next;
    ASSERT_EQ(dev_->ModifyQp(qa, a, MinimumMask(QpType::kRc, cur, next)), 0);
  }
  ASSERT_EQ(dev_->PostSend(qa, {Send(2, {buf.At(1032, 8)})}, &bad), 0);
  auto wcs = WaitWc(cq_, queues ? 4 : 2);
  std::vector<uint64_t> sends, recvs;
  for (const auto& wc : wcs) {
    EXPECT_EQ(wc.status, WcStatus::kSuccess) << "wr_id " << wc.wr_id;
    (wc.wr_id >= 10 ? recvs : sends).push_back(wc.wr_id);
  }
  const std::vector<uint64_t> want_sends = queues ? std::vector<uint64_t>{1, 2} : std::vector<uint64_t>{2};
  const std::vector<uint64_t> want_recvs = queues ? std::vector<uint64_t>{10, 11} : std::vector<uint64_t>{10};
  EXPECT_EQ(sends, want_sends);
  EXPECT_EQ(recvs, want_recvs);
  EXPECT_TRUE(Drain(cq_).empty());
}

// Only a modify that carries IBV_QP_STATE resets (rxe_qp_from_attr calls rxe_qp_reset for
// RESET -> RESET too); a modify without it changes nothing. Found by `qptwin fuzz --backend hw
// --seed 7 --replay 472`: the reference and the model had discarded on a mask without STATE.
TEST_P(Conformance, OnlyAModifyWithStateToResetDiscardsARefusedSend) {
  const bool queues = GetParam().behaviour.post_send_below_rts_queues;
  Buffer buf = Reg(4096, kAll);
  QpHandle qa = Qp(QpType::kRc), qb = Qp(QpType::kRc);
  Drive(QpType::kRc, qb, QpState::kRts, qa);
  size_t bad = 99;
  ASSERT_EQ(dev_->PostRecv(qb, {Recv(10, {buf.At(0, 64)}), Recv(11, {buf.At(64, 64)})}, &bad), 0);
  EXPECT_EQ(dev_->PostSend(qa, {Send(1, {buf.At(1024, 8)})}, &bad), EINVAL);
  const QpAttr a = StateOnly(QpState::kReset);
  ASSERT_EQ(dev_->ModifyQp(qa, a, attr::kState), 0);  // RESET -> RESET: discards WR 1
  EXPECT_EQ(dev_->PostSend(qa, {Send(2, {buf.At(1024, 8)})}, &bad), EINVAL);
  ASSERT_EQ(dev_->ModifyQp(qa, a, 0), 0);  // no state: WR 2 stays where it was queued
  Drive(QpType::kRc, qa, QpState::kRts, qb);
  ASSERT_EQ(dev_->PostSend(qa, {Send(3, {buf.At(1032, 8)})}, &bad), 0);
  std::vector<uint64_t> sends;
  for (const auto& wc : WaitWc(cq_, queues ? 4 : 2)) {
    EXPECT_EQ(wc.status, WcStatus::kSuccess) << "wr_id " << wc.wr_id;
    if (wc.wr_id < 10) sends.push_back(wc.wr_id);
  }
  const std::vector<uint64_t> want = queues ? std::vector<uint64_t>{2, 3} : std::vector<uint64_t>{3};
  EXPECT_EQ(sends, want);
  EXPECT_TRUE(Drain(cq_).empty());
}

// A refused send queued in RTR is flushed by a move to ERR, in posting order (R6).
TEST_P(Conformance, SendRefusedInRtrIsFlushedByErrWhereItWasQueued) {
  const bool queues = GetParam().behaviour.post_send_below_rts_queues;
  Buffer buf = Reg(4096, kAll);
  QpHandle qp = Qp(QpType::kRc);
  Drive(QpType::kRc, qp, QpState::kRtr);
  size_t bad = 99;
  EXPECT_EQ(dev_->PostSend(qp, {Send(1, {buf.At(0, 8)}), Send(2, {buf.At(8, 8)})}, &bad), EINVAL);
  EXPECT_EQ(bad, queues ? 2u : 0u);
  ASSERT_EQ(dev_->ModifyQp(qp, StateOnly(QpState::kErr), attr::kState), 0);
  auto wcs = queues ? WaitWc(cq_, 2) : Drain(cq_);
  ASSERT_EQ(wcs.size(), queues ? 2u : 0u);
  for (size_t i = 0; i < wcs.size(); ++i) {
    EXPECT_EQ(wcs[i].wr_id, i + 1);
    EXPECT_EQ(wcs[i].status, WcStatus::kWrFlushErr);
  }
  EXPECT_TRUE(Drain(cq_).empty());
}

// R4: a receive posted in ERR is flushed at once. rxe has no receive doorbell: it waits
// until the responder runs, here at the next modify to ERR. Either way exactly once.
TEST_P(Conformance, ReceivePostedInErrIsFlushedAtOnceOrByTheNextErr) {
  const bool waits = GetParam().behaviour.recv_in_err_waits;
  Buffer buf = Reg(4096, kAll);
  QpHandle qp = Qp(QpType::kRc);
  Drive(QpType::kRc, qp, QpState::kErr);
  // rxe: the move to ERR schedules the responder; a receive posted before it ran would be
  // flushed by that run. Let it run first.
  EXPECT_TRUE(Drain(cq_).empty());
  size_t bad = 99;
  ASSERT_EQ(dev_->PostRecv(qp, {Recv(5, {buf.At(0, 64)})}, &bad), 0);
  auto first = Drain(cq_);
  EXPECT_EQ(first.size(), waits ? 0u : 1u);
  ASSERT_EQ(dev_->ModifyQp(qp, StateOnly(QpState::kErr), attr::kState), 0);
  auto second = Drain(cq_);
  EXPECT_EQ(second.size(), waits ? 1u : 0u);
  first.insert(first.end(), second.begin(), second.end());
  ASSERT_EQ(first.size(), 1u);
  EXPECT_EQ(first[0].wr_id, 5u);
  EXPECT_EQ(first[0].status, WcStatus::kWrFlushErr);
}

// IBTA 11.6.3 (rdma-facts R6): LAST_WQE_REACHED when a QP with an SRQ enters ERR. Linux 6.1
// rxe raises none (rxe_qp_error has no event; newer kernels add it).
TEST_P(Conformance, SrqQpEnteringErrRaisesLastWqeReachedAsTheDeviceDoes) {
  SrqHandle srq;
  ASSERT_EQ(dev_->CreateSrq(pd_, 8, 1, &srq), 0);
  QpInitAttr init;
  init.qp_type = QpType::kRc;
  init.pd = pd_;
  init.send_cq = cq_;
  init.recv_cq = cq_;
  init.srq = srq;
  init.cap = {4, 0, 1, 0, 0};
  QpHandle qp;
  QpCap cap;
  ASSERT_EQ(dev_->CreateQp(init, &qp, &cap), 0);
  Drive(QpType::kRc, qp, QpState::kErr);
  EXPECT_EQ(dev_->WaitForAsyncEvent(EventType::kQpLastWqeReached, qp, kSecond / 5),
            GetParam().behaviour.last_wqe_reached_event ? 0 : ETIMEDOUT);
  ASSERT_EQ(dev_->DestroyQp(qp), 0);
  EXPECT_EQ(dev_->DestroySrq(srq), 0);
}

// R15 on a bad rkey (the MR lacks REMOTE_WRITE): REM_ACCESS_ERR, both QPs end in ERR.
// IBTA 11.6.3 adds an affiliated async error at the responder (QP_ACCESS_ERR); rxe_qp_error
// raises none, on either side.
TEST_P(Conformance, BadRkeyRaisesAnAccessErrorEventOnlyWhereTheDeviceDoes) {
  auto [qa, qb] = ConnectedPair(QpType::kRc);
  Buffer local = Reg(4096, kAll), remote = Reg(4096, access::kLocalWrite);
  SendWr w = RdmaTo(7, WrOpcode::kRdmaWrite, {local.At(0, 64)}, remote, 0);
  size_t bad;
  ASSERT_EQ(dev_->PostSend(qa, {w}, &bad), 0);
  OneWc(cq_, 7, WcStatus::kRemAccessErr);
  EXPECT_EQ(StateOf(qa), QpState::kErr);
  const bool ibta_events = GetParam().behaviour.qp_error_events;
  EXPECT_EQ(dev_->WaitForAsyncEvent(EventType::kQpAccessErr, qb, kSecond / 5),
            ibta_events ? 0 : ETIMEDOUT);
  for (const AsyncEvent& ev : dev_->TakeAsyncEvents()) {
    EXPECT_TRUE(ibta_events && ev.type == EventType::kQpAccessErr && ev.qp == qb)
        << "unexpected event " << ToName(ev.type);
  }
  EXPECT_EQ(StateOf(qb), QpState::kErr);
}

// Op-per-type (IBTA 9.4 / rdma-facts): UC has no READ or atomics, UD only sends. Where it is
// caught differs: rdma-core providers/rxe validate_send_wr does not look at the opcode, so rxe
// accepts the post and its requester completes the WR with LOC_QP_OP_ERR (rxe_req.c
// next_opcode < 0), moving the QP to ERR; the model's ibta profile refuses the post (EINVAL,
// nothing queued). Either way no data moves and the WR is accounted for exactly once.
TEST_P(Conformance, ReadOnUcIsRefusedAtPostOrFailsWithLocQpOpErr) {
  const bool in_requester = GetParam().behaviour.opcode_checked_by_requester;
  auto [qa, qb] = ConnectedPair(QpType::kUc);
  Buffer local = Reg(4096, kAll), remote = Reg(4096, kAll);
  std::memset(remote.buf, 0x7e, 64);
  std::memset(local.buf, 0, 64);
  SendWr w = RdmaTo(3, WrOpcode::kRdmaRead, {local.At(0, 64)}, remote, 0);
  size_t bad = 99;
  if (!in_requester) {
    EXPECT_EQ(dev_->PostSend(qa, {w}, &bad), EINVAL);
    EXPECT_EQ(bad, 0u);
    EXPECT_TRUE(Drain(cq_).empty());
    EXPECT_EQ(StateOf(qa), QpState::kRts);
  } else {
    ASSERT_EQ(dev_->PostSend(qa, {w}, &bad), 0);
    OneWc(cq_, 3, WcStatus::kLocQpOpErr);
    EXPECT_EQ(StateOf(qa), QpState::kErr);
    EXPECT_TRUE(Drain(cq_).empty());
  }
  for (int i = 0; i < 64; ++i) ASSERT_EQ(local.buf[i], 0) << "byte " << i << " was read";
}

// The same for an RDMA WRITE on UD (UD carries sends only).
TEST_P(Conformance, WriteOnUdIsRefusedAtPostOrFailsWithLocQpOpErr) {
  const bool in_requester = GetParam().behaviour.opcode_checked_by_requester;
  auto [qa, qb] = ConnectedPair(QpType::kUd);
  Buffer local = Reg(4096, kAll), remote = Reg(4096, kAll);
  std::memset(remote.buf, 0, 64);
  std::memset(local.buf, 0x5a, 64);
  AhHandle ah;
  ASSERT_EQ(dev_->CreateAh(pd_, FullAttr(qb, {}).ah_attr, &ah), 0);
  SendWr w = Send(4, {local.At(0, 64)});
  w.ah = ah;
  w.remote_qkey = kQkey;
  w.opcode = WrOpcode::kRdmaWrite;
  w.remote_addr = remote.Addr(0);
  w.rkey = remote.rkey;
  size_t bad = 99;
  if (!in_requester) {
    EXPECT_EQ(dev_->PostSend(qa, {w}, &bad), EINVAL);
    EXPECT_EQ(bad, 0u);
    EXPECT_TRUE(Drain(cq_).empty());
  } else {
    ASSERT_EQ(dev_->PostSend(qa, {w}, &bad), 0);
    OneWc(cq_, 4, WcStatus::kLocQpOpErr);
    EXPECT_EQ(StateOf(qa), QpState::kErr);
  }
  for (int i = 0; i < 64; ++i) ASSERT_EQ(remote.buf[i], 0) << "byte " << i << " was written";
  EXPECT_EQ(dev_->DestroyAh(ah), 0);
}

}  // namespace
}  // namespace qptwin::testing
