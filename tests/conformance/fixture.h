// The conformance fixture: one Backend + Device per test, with helpers to create and connect
// QPs using only spec/backend.h. Every helper asserts through GoogleTest; none hides an errno.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "spec/backend.h"
#include "spec/bring_up.h"
#include "spec/qp_state_table.h"
#include "tests/backend_under_test.h"
#include "tests/support/constants.h"

namespace qptwin::testing {

struct Buffer {
  MrHandle mr;
  uint8_t* buf = nullptr;
  uint32_t lkey = 0;
  uint32_t rkey = 0;
  size_t len = 0;
  Sge At(size_t off, uint32_t len) const { return {reinterpret_cast<uint64_t>(buf) + off, len, lkey}; }
  uint64_t Addr(size_t off) const { return reinterpret_cast<uint64_t>(buf) + off; }
};

// Brings `self` from RESET to RTS connected to `peer` with the attributes of `p`; the errno.
int ToRtsWith(Device& dev, const BringUpParams& p, QpHandle self, QpHandle peer);

class Conformance : public ::testing::TestWithParam<BackendCase> {
 protected:
  void SetUp() override;
  void TearDown() override;

  // Resources (fail the test on error).
  Buffer Reg(size_t len, AccessFlags access);
  // A region in a PD of its own (allocated here; its handle in *pd when asked for).
  Buffer RegInOtherPd(size_t len, AccessFlags access, PdHandle* pd = nullptr);
  CqHandle Cq(int cqe = 64);
  QpHandle Qp(QpType type, uint32_t max_send_wr = 16, uint32_t max_recv_wr = 16,
              uint32_t max_sge = 2, bool sq_sig_all = false, CqHandle cq = {});

  // A QpAttr with a valid value for every attribute, connecting to `peer` (or to itself).
  QpAttr FullAttr(QpHandle self, QpHandle peer);
  // Drives `qp` from RESET through the main path to `target` (RESET, INIT, RTR, RTS, SQD, ERR)
  // with the minimum masks (spec/bring_up.h); connects to `peer` (itself when none).
  void Drive(QpType type, QpHandle qp, QpState target, QpHandle peer = {});
  QpState StateOf(QpHandle qp);
  // Two QPs of `type` connected to each other in RTS (send queues of max_send_wr; the first
  // QP signals every WR with sig_all_a).
  std::pair<QpHandle, QpHandle> ConnectedPair(QpType type, CqHandle cq_a = {}, CqHandle cq_b = {},
                                              uint32_t max_send_wr = 16, bool sig_all_a = false);
  // The send queue depth the device granted `qp`.
  uint32_t SendDepth(QpHandle qp);
  // Two RC QPs with send queues of 15 (rxe: a ring of 16 slots), each on a CQ of its own,
  // in RTS connected to each other with the attributes of `p`. Where the device grants
  // another depth the test is skipped: callers return if IsSkipped() or HasFatalFailure().
  struct RcPair {
    CqHandle ca, cb;
    QpHandle qa, qb;
  };
  void FifteenDeepRcPair(const BringUpParams& p, RcPair* pair);
  // Two RC QPs in RTS with the attributes of `p` (rnr_retry 0), each on a CQ of its own, qa
  // signaling every WR when sig_all_a; qa's SEND (wr_id 1, 8 bytes of `buf`) finds no receive
  // at qb and fails RNR_RETRY_EXC_ERR, leaving qa in ERR with the SEND's PSN its comp.psn.
  // Callers return if HasFatalFailure().
  void RcPairAfterRnrFailure(const BringUpParams& p, bool sig_all_a, const Buffer& buf,
                             RcPair* pair);
  // Two RC QPs (16 deep, each on a CQ of its own) whose qa sent a SEND (wr_id 1, 8 bytes of
  // `buf`) to qb while qb was in RESET: timeout 11, retry_cnt 1, so one retry started (rxe:
  // comp.started_retry, which RESET leaves) before RETRY_EXC_ERR. Then qa went through RESET,
  // and both are in RTS with the attributes of `p`. Callers return if HasFatalFailure().
  void RcPairAfterStaleRetry(const BringUpParams& p, const Buffer& buf, RcPair* pair);
  // Two RC QPs (16 deep, each on a CQ of its own, qa signaling every WR) in RTS with the
  // attributes of `p`; qa moved to ERR, the two WRs `in_err` posted there in one call and
  // flushed (where the requester takes one WQE per post in ERR, the second stays in the ring:
  // a ghost), then qa moved ERR -> RTS claiming RTS (skipped where the device refuses).
  // Callers return if HasFatalFailure() or IsSkipped().
  void RcPairWithGhost(const BringUpParams& p, const std::vector<SendWr>& in_err, RcPair* pair);
  // An RC QP on `cq` in RTS with the attributes of `p`, whose peer (also on `cq`, connected to
  // it) is then moved to ERR, so it drops every request: each request's transport timer runs
  // out. Callers return if HasFailure() (any failed check while bringing it up).
  QpHandle RcTowardsPeerInErr(CqHandle cq, const BringUpParams& p);
  // Addresses the UD send `wr` to UD QP `dst`: a new AH in pd_ (the caller destroys it), the
  // QP number and the fixture's Q_Key.
  void AddressDatagram(QpHandle dst, SendWr* wr, AhHandle* ah);

  std::vector<WorkCompletion> WaitWc(CqHandle cq, int n, uint64_t timeout_ns = 2 * kSecond);
  // Waits for one completion on `cq` and expects it of `wr_id` with `status`; returns it (a
  // WorkCompletion with status kGeneralErr after a failure when none came).
  WorkCompletion OneWc(CqHandle cq, uint64_t wr_id, WcStatus status, uint64_t timeout_ns = 2 * kSecond);
  // Waits for `n` completions on `cq` and expects them WR_FLUSH_ERR, of wr_ids first_wr_id,
  // first_wr_id + 1, ... in that order (`why` names the case in a failure).
  void ExpectFlushedInOrder(CqHandle cq, int n, uint64_t first_wr_id,
                            uint64_t timeout_ns = 2 * kSecond, const std::string& why = "");
  // Polls what is there without waiting further than `settle_ns` of quiet time.
  std::vector<WorkCompletion> Drain(CqHandle cq, uint64_t settle_ns = kSecond / 10);

  // A modify of `qp` to RTS that claims RTS as its current state (IBV_QP_CUR_STATE): how a
  // QP in ERR is put back to RTS where the device takes the claim (rxe). Returns the errno.
  int ModifyToRtsClaimingRts(QpHandle qp);
  // A QpAttr for a modify with attr::kState only (to RESET or ERR, or SQD <-> RTS).
  static QpAttr StateOnly(QpState s) {
    QpAttr a;
    a.qp_state = s;
    return a;
  }
  static SendWr Send(uint64_t wr_id, std::vector<Sge> sges, bool signaled = true);
  static RecvWr Recv(uint64_t wr_id, std::vector<Sge> sges);
  // A signaled RDMA WR (`op`: READ, WRITE, an atomic...) of `sges` at `remote`'s byte
  // `offset`, with its rkey.
  static SendWr RdmaTo(uint64_t wr_id, WrOpcode op, std::vector<Sge> sges, const Buffer& remote,
                       size_t offset);

  std::unique_ptr<Backend> backend_;
  std::unique_ptr<Device> dev_;
  DeviceAttr dattr_;
  PortAttr pattr_;
  PdHandle pd_;
  CqHandle cq_;  // the default CQ for send and receive completions
};

}  // namespace qptwin::testing
