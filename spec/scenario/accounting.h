// Accounting of posted WRs by queue position, never by wr_id alone (trace.h invariant 1).
//
// What a CQE tells: its QP (qp_num), its status, and for SUCCESS its opcode. The rules used:
//  1. Side. A CQ that serves one side of the QP names it. On a shared CQ a SUCCESS CQE with a
//     receive opcode (RECV, RECV_RDMA_WITH_IMM) is the receive side, any other SUCCESS the send
//     side. An error CQE (opcode undefined, IBTA 11.4.2.1) goes to the side whose candidate
//     WR (below) carries its wr_id; when both do, by status (SideForTie).
//  2. Receive queue (or the QP's SRQ): every receive gets a CQE, in queue order; on an SRQ in
//     SRQ order across the QPs that consume it. The CQE is the head's.
//  3. Send queue: WRs complete in order (IBTA 10.8.3). A SUCCESS CQE is the first signaled
//     WR's; the WRs before it completed without CQE (implied). An error CQE is written even
//     for an unsignaled WR (IBTA 10.7.3.1), so it is one of the WRs up to the first signaled
//     one; after it every WR of the queue completes in error, in order (flush, R6). Where
//     wr_ids leave the start of that error run ambiguous, the run is placed as late as the
//     wr_ids allow and moved earlier when later error CQEs prove it must start earlier: once
//     every CQE of the queue has been polled the split between implied and flushed WRs is
//     exact whatever the wr_ids (accounting_test.cc proves it).
//  4. RESET discards and destroy ends the outstanding WRs (R9), but CQEs already written stay
//     in the CQ (rxe, the model): such WRs are ended tentatively, and a later CQE of their QP
//     that no newer WR fits claims them (in position order, its wr_id must fit); the first CQE
//     of a newer WR shows none is left (a CQ is FIFO). Across a RESET with CQEs left in the
//     CQ and newer WRs reusing the old wr_ids, the split is a guess: poll before RESET.
//
// Every WR ends exactly once at every moment: each Wqe holds one `end`; claiming a
// tentatively ended WR replaces its end, it never adds one.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "spec/backend.h"
#include "spec/scenario/trace.h"

namespace qptwin::scenario {

// A deque of indexes as a vector with a moving front: what WrQueue needs (push_back,
// pop_front, push_front, erase of a front range, random access). std::deque allocates its
// map and a 512-byte block even empty, and the runner has two queues per object.
class IndexDeque {
 public:
  using iterator = std::vector<size_t>::iterator;
  using const_iterator = std::vector<size_t>::const_iterator;

  size_t size() const { return v_.size() - head_; }
  bool empty() const { return v_.size() == head_; }
  size_t& operator[](size_t i) { return v_[head_ + i]; }
  size_t operator[](size_t i) const { return v_[head_ + i]; }
  size_t front() const { return v_[head_]; }
  iterator begin() { return v_.begin() + static_cast<long>(head_); }
  iterator end() { return v_.end(); }
  const_iterator begin() const { return v_.begin() + static_cast<long>(head_); }
  const_iterator end() const { return v_.end(); }

  void push_back(size_t x) { v_.push_back(x); }
  void push_front(size_t x) {
    if (head_ > 0) {
      v_[--head_] = x;
    } else {
      v_.insert(v_.begin(), x);
    }
  }
  void pop_front() {
    ++head_;
    Compact();
  }
  void erase(iterator first, iterator last) {
    if (first == begin()) {
      head_ += static_cast<size_t>(last - first);
      Compact();
    } else {
      v_.erase(first, last);
    }
  }

 private:
  // Drops the front's slots once they are most of the vector (memory stays bounded by the
  // WRs outstanding).
  void Compact() {
    if (head_ == v_.size()) {
      v_.clear();
      head_ = 0;
    } else if (head_ >= 32 && head_ * 2 >= v_.size()) {
      v_.erase(v_.begin(), v_.begin() + static_cast<long>(head_));
      head_ = 0;
    }
  }

  std::vector<size_t> v_;
  size_t head_ = 0;
};

// One queue's WRs that have not ended for sure, in post order (indexes into the Wqe vector).
struct WrQueue {
  IndexDeque wrs;
  size_t ended_front = 0;  // the first ended_front WRs ended tentatively (RESET, destroy)
  Wqe::End ended_as = Wqe::End::kDiscarded;  // how the latest of them ended
  // Send queue: the error run in progress (rule 3).
  bool in_error = false;
  std::vector<size_t> run_implied;  // implied by the run's first CQE, in order
  std::vector<size_t> run_erred;    // the WRs charged with the run's CQEs, in order
  std::vector<uint64_t> run_ids;    // the wr_ids those CQEs carried

  size_t Live() const { return wrs.size() - ended_front; }
};

// One polled CQE and where it was seen.
struct CqeSeen {
  WorkCompletion wc;
  std::string cq;  // the CQ's name
  std::string qp;  // the QP's name
  int line = 0;
  uint64_t ns = 0;
};

// The queues a CQE of one QP may belong to.
struct QpQueues {
  WrQueue* sq = nullptr;
  WrQueue* rq = nullptr;  // the QP's RQ, or its SRQ's queue
  bool sq_on_cq = false, rq_on_cq = false;  // which of them the CQ serves
  bool rq_is_srq = false;
};

class WrLedger {
 public:
  explicit WrLedger(std::vector<Wqe>* wqes) : wqes_(wqes) {}

  void Post(WrQueue* q, size_t index) { q->wrs.push_back(index); }
  // With `free` set, the index of a WR whose end is final (no later CQE can change it) is
  // appended to *free, for a caller that keeps no trace to reuse its slot.
  void ReleaseTo(std::vector<size_t>* free) { free_ = free; }
  // Charges `cqe` to one WR (rules 1-4); returns its index, or -1 when no WR can be its.
  long Complete(const CqeSeen& cqe, const QpQueues& queues);
  // Ends every live WR of `q` with `end` (RESET: kDiscarded, destroy: kDestroyed), tentatively.
  void EndAll(WrQueue* q, Wqe::End end, int line, uint64_t ns);

 private:
  long CompleteSend(const CqeSeen& cqe, WrQueue* q);
  long CompleteRecv(const CqeSeen& cqe, WrQueue* q);
  // Where in q->wrs[lo, hi) the send CQE goes (-1: nowhere; strict: only where its wr_id
  // fits); *shift > 0: the error run moves that many WRs earlier to take it.
  long SendPosition(const WrQueue& q, size_t lo, size_t hi, const WorkCompletion& wc,
                    bool strict, bool in_error, size_t* shift) const;
  long ApplySend(const CqeSeen& cqe, WrQueue* q, long pos, size_t shift);
  bool SendCandidate(const WrQueue& q, const WorkCompletion& wc) const;
  bool RecvCandidate(const WrQueue& q, const WorkCompletion& wc, bool srq) const;
  // The smallest s >= 1 such that the error run, started s WRs earlier, fits the wr_ids of its
  // CQEs followed by `wr_id`; 0 when none does.
  size_t RunShift(const WrQueue& q, uint64_t wr_id) const;
  void DropEnded(WrQueue* q);
  void Charge(size_t index, const CqeSeen& cqe);
  void Imply(size_t index, const CqeSeen& cqe);
  void Release(size_t index) {
    if (free_) free_->push_back(index);
  }
  void ReleaseRun(WrQueue* q);

  std::vector<Wqe>* wqes_;
  std::vector<size_t>* free_ = nullptr;
};

// The side (true: send) for an error CQE whose wr_id fits both queues' candidates: statuses
// only a requester writes (REM_*, RETRY_EXC, RNR_RETRY_EXC, BAD_RESP) are the send side's;
// LOC_LEN_ERR (a message longer than the receive buffer) the receive side's; WR_FLUSH_ERR the
// send side's (a QP entering ERR flushes its SQ first, then its RQ, as the model does; in SQE
// only the SQ, C10-38); any other status (a local WR problem: LOC_PROT, LOC_QP_OP, ...) the
// send side's. An SRQ's receives are never flushed by a QP, so they never tie on a flush.
// Residual ambiguity: on a shared CQ, when an unsignaled WR completed silently and the QP then
// flushes receives with the same wr_id, the flush may be charged to the send; distinct wr_ids
// per side (or separate CQs) make the accounting exact.
bool SideForTie(WcStatus status);

}  // namespace qptwin::scenario
