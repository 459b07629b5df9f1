#include "spec/scenario/accounting.h"

namespace qptwin::scenario {
namespace {

constexpr size_t kMaxRun = 4096;  // error-run WRs kept for moving the run (accounting.h 3)

bool IsReceiveOpcode(WcOpcode op) {
  return op == WcOpcode::kRecv || op == WcOpcode::kRecvRdmaWithImm;
}

// The CQE facts a Wqe keeps (trace.h), to move them between WRs of one error run.
struct CqeFacts {
  int line = 0;
  uint64_t ns = 0;
  WcStatus status = WcStatus::kSuccess;
  std::string cq, opcode;
  uint32_t byte_len = 0;
};

CqeFacts FactsOf(const Wqe& w) {
  return {w.end_line, w.end_ns, w.status, w.cq, w.wc_opcode, w.byte_len};
}

CqeFacts FactsOf(const CqeSeen& c) {
  const bool ok = c.wc.status == WcStatus::kSuccess;
  return {c.line, c.ns, c.wc.status, c.cq, ok ? std::string(ToName(c.wc.opcode)) : "",
          ok ? c.wc.byte_len : 0};
}

void SetCqe(const CqeFacts& f, Wqe* w) {
  w->end = Wqe::End::kCqe;
  w->end_line = f.line;
  w->end_ns = f.ns;
  w->status = f.status;
  w->cq = f.cq;
  w->wc_opcode = f.opcode;
  w->byte_len = f.byte_len;
  w->completed_by.clear();
}

}  // namespace

bool SideForTie(WcStatus status) {
  switch (status) {
    case WcStatus::kRemInvReqErr:
    case WcStatus::kRemAccessErr:
    case WcStatus::kRemOpErr:
    case WcStatus::kRemAbortErr:
    case WcStatus::kRemInvRdReqErr:
    case WcStatus::kRetryExcErr:
    case WcStatus::kRnrRetryExcErr:
    case WcStatus::kBadRespErr:
    case WcStatus::kRespTimeoutErr:
      return true;
    case WcStatus::kLocLenErr:
      return false;
    case WcStatus::kWrFlushErr:
      // A QP entering ERR flushes its SQ, then its RQ (the model's FlushSq/FlushRq); in SQE only
      // its SQ (C10-38).
      return true;
    default:
      return true;
  }
}

void WrLedger::Charge(size_t index, const CqeSeen& cqe) { SetCqe(FactsOf(cqe), &(*wqes_)[index]); }

void WrLedger::Imply(size_t index, const CqeSeen& cqe) {
  Wqe& w = (*wqes_)[index];
  w.end = Wqe::End::kImplicit;
  w.end_line = cqe.line;
  w.end_ns = cqe.ns;
  w.completed_by = "wr_id=" + std::to_string(cqe.wc.wr_id);
}

void WrLedger::EndAll(WrQueue* q, Wqe::End end, int line, uint64_t ns) {
  for (size_t i = q->ended_front; i < q->wrs.size(); ++i) {
    Wqe& w = (*wqes_)[q->wrs[i]];
    w.end = end;
    w.end_line = line;
    w.end_ns = ns;
  }
  q->ended_front = q->wrs.size();
  q->ended_as = end;
  if (q->wrs.empty()) DropEnded(q);  // no CQE can follow: the error run is over
}

void WrLedger::ReleaseRun(WrQueue* q) {
  for (size_t i : q->run_implied) Release(i);
  for (size_t i : q->run_erred) Release(i);
  q->in_error = false;
  q->run_implied.clear();
  q->run_erred.clear();
  q->run_ids.clear();
}

void WrLedger::DropEnded(WrQueue* q) {
  for (size_t k = 0; k < q->ended_front; ++k) Release(q->wrs[k]);
  q->wrs.erase(q->wrs.begin(), q->wrs.begin() + static_cast<long>(q->ended_front));
  q->ended_front = 0;
  ReleaseRun(q);
}

size_t WrLedger::RunShift(const WrQueue& q, uint64_t wr_id) const {
  if (!q.in_error || q.run_erred.empty()) return 0;
  const size_t implied = q.run_implied.size(), erred = q.run_erred.size();
  auto at = [&](size_t k) {  // the run's WRs, implied then erred, in queue order
    return k < implied ? q.run_implied[k] : q.run_erred[k - implied];
  };
  for (size_t s = 1; s <= implied; ++s) {
    const size_t start = implied - s;
    bool fits = true;
    for (size_t k = 0; k <= erred && fits; ++k) {
      const uint64_t id = k < erred ? q.run_ids[k] : wr_id;
      fits = (*wqes_)[at(start + k)].wr_id == id;
    }
    if (fits) return s;
  }
  return 0;
}

long WrLedger::SendPosition(const WrQueue& q, size_t lo, size_t hi, const WorkCompletion& wc,
                            bool strict, bool in_error, size_t* shift) const {
  *shift = 0;
  auto id = [&](size_t i) { return (*wqes_)[q.wrs[i]].wr_id; };
  const long none = strict || lo == hi ? -1 : long(lo);
  if (wc.status == WcStatus::kSuccess) {
    // IBTA 10.8.3: the first signaled WR; the unsignaled ones before it are done.
    for (size_t i = lo; i < hi; ++i) {
      if ((*wqes_)[q.wrs[i]].signaled) return strict && id(i) != wc.wr_id ? -1 : long(i);
    }
    if (strict) return -1;
    for (size_t i = lo; i < hi; ++i) {
      if (id(i) == wc.wr_id) return long(i);
    }
    return none;
  }
  if (in_error) {
    // R6: after an error every WR of the queue completes in error, in order.
    if (lo < hi && id(lo) == wc.wr_id) return long(lo);
    if ((*shift = RunShift(q, wc.wr_id)) != 0) return -1;
    return none;
  }
  // IBTA 10.7.3.1: an error CQE is written for unsignaled WRs too, so it is one of the WRs up
  // to the first signaled one; placed as late as the wr_ids allow (RunShift moves it back).
  long found = -1;
  for (size_t i = lo; i < hi; ++i) {
    if (id(i) == wc.wr_id) found = long(i);
    if ((*wqes_)[q.wrs[i]].signaled) break;
  }
  return found >= 0 ? found : none;
}

long WrLedger::ApplySend(const CqeSeen& cqe, WrQueue* q, long pos, size_t shift) {
  if (shift > 0) {
    const size_t implied = q->run_implied.size(), erred = q->run_erred.size();
    std::vector<size_t> run = q->run_implied;
    run.insert(run.end(), q->run_erred.begin(), q->run_erred.end());
    std::vector<CqeFacts> facts;
    for (size_t i : q->run_erred) facts.push_back(FactsOf((*wqes_)[i]));
    facts.push_back(FactsOf(cqe));
    const size_t start = implied - shift;
    for (size_t k = 0; k <= erred; ++k) SetCqe(facts[k], &(*wqes_)[run[start + k]]);
    // WRs past the moved run have not completed after all: back to the queue's front.
    for (size_t k = run.size(); k-- > start + erred + 1;) {
      Wqe& w = (*wqes_)[run[k]];
      w.end = q->ended_front > 0 ? q->ended_as : Wqe::End::kOutstanding;
      if (q->ended_front > 0) ++q->ended_front;
      q->wrs.push_front(run[k]);
    }
    q->run_ids.push_back(cqe.wc.wr_id);
    q->run_implied.assign(run.begin(), run.begin() + static_cast<long>(start));
    q->run_erred.assign(run.begin() + static_cast<long>(start),
                        run.begin() + static_cast<long>(start + erred + 1));
    return static_cast<long>(q->run_erred.back());
  }
  const size_t index = q->wrs[pos];
  std::vector<size_t> implied(q->wrs.begin(), q->wrs.begin() + pos);
  for (size_t i : implied) Imply(i, cqe);
  Charge(index, cqe);
  q->wrs.erase(q->wrs.begin(), q->wrs.begin() + pos + 1);
  q->ended_front = q->ended_front > size_t(pos) ? q->ended_front - pos - 1 : 0;
  if (cqe.wc.status == WcStatus::kSuccess) {
    ReleaseRun(q);
    for (size_t i : implied) Release(i);
    Release(index);
  } else {
    if (!q->in_error) {
      q->in_error = true;
      q->run_implied = implied;
    }
    // The run is kept only while it can still move (it has implied WRs to move onto), and
    // at most kMaxRun long, so that a QP flushing for ever costs no memory per WR.
    if (q->run_implied.empty() || q->run_erred.size() >= kMaxRun) {
      const bool in_error = q->in_error;
      ReleaseRun(q);
      q->in_error = in_error;
      Release(index);
    } else {
      q->run_erred.push_back(index);
      q->run_ids.push_back(cqe.wc.wr_id);
    }
  }
  return static_cast<long>(index);
}

long WrLedger::CompleteSend(const CqeSeen& cqe, WrQueue* q) {
  size_t shift = 0;
  const size_t ended = q->ended_front;
  if (ended > 0) {
    // WRs ended by RESET/destroy whose CQEs were written before: a CQE claims one of them
    // unless a live WR fits it; once a live WR has its CQE, none of the old ones has one
    // left (a CQ is FIFO).
    long pos = SendPosition(*q, ended, q->wrs.size(), cqe.wc, /*strict=*/true,
                            /*in_error=*/false, &shift);
    if (pos < 0) {
      pos = SendPosition(*q, 0, ended, cqe.wc, /*strict=*/true, q->in_error, &shift);
      if (pos >= 0 || shift > 0) return ApplySend(cqe, q, pos, shift);
    }
    DropEnded(q);
  }
  long pos = SendPosition(*q, 0, q->wrs.size(), cqe.wc, /*strict=*/false, q->in_error, &shift);
  if (pos < 0 && shift == 0) return -1;
  return ApplySend(cqe, q, pos, shift);
}

long WrLedger::CompleteRecv(const CqeSeen& cqe, WrQueue* q) {
  if (q->ended_front > 0) {
    const bool live_fits = q->wrs.size() > q->ended_front &&
                           (*wqes_)[q->wrs[q->ended_front]].wr_id == cqe.wc.wr_id;
    if (!live_fits && (*wqes_)[q->wrs.front()].wr_id == cqe.wc.wr_id) {
      --q->ended_front;
    } else {
      DropEnded(q);
    }
  }
  if (q->wrs.empty()) return -1;
  const size_t index = q->wrs.front();
  q->wrs.pop_front();
  Charge(index, cqe);
  Release(index);
  return static_cast<long>(index);
}

bool WrLedger::SendCandidate(const WrQueue& q, const WorkCompletion& wc) const {
  size_t shift = 0;
  const size_t ended = q.ended_front;
  if (ended > 0 && (SendPosition(q, 0, ended, wc, true, q.in_error, &shift) >= 0 || shift)) {
    return true;
  }
  return SendPosition(q, ended, q.wrs.size(), wc, true, ended > 0 ? false : q.in_error, &shift) >=
             0 ||
         shift > 0;
}

bool WrLedger::RecvCandidate(const WrQueue& q, const WorkCompletion& wc, bool srq) const {
  // An SRQ's receives belong to no QP: a QP entering ERR flushes none of them (IBTA 10.2.9.5).
  if (q.wrs.empty() || (srq && wc.status == WcStatus::kWrFlushErr)) return false;
  if ((*wqes_)[q.wrs.front()].wr_id == wc.wr_id) return true;
  return q.ended_front > 0 && q.ended_front < q.wrs.size() &&
         (*wqes_)[q.wrs[q.ended_front]].wr_id == wc.wr_id;
}

long WrLedger::Complete(const CqeSeen& cqe, const QpQueues& queues) {
  const bool has_sq = queues.sq && queues.sq_on_cq, has_rq = queues.rq && queues.rq_on_cq;
  bool send = has_sq;
  if (has_sq && has_rq) {
    if (cqe.wc.status == WcStatus::kSuccess) {
      send = !IsReceiveOpcode(cqe.wc.opcode);
    } else {
      const bool s = SendCandidate(*queues.sq, cqe.wc);
      const bool r = RecvCandidate(*queues.rq, cqe.wc, queues.rq_is_srq);
      if (s != r) {
        send = s;
      } else if (s) {
        send = SideForTie(cqe.wc.status);
      } else {
        send = !queues.sq->wrs.empty() || queues.rq->wrs.empty();
      }
    }
  } else if (!has_sq && !has_rq) {
    return -1;
  }
  long index = send ? CompleteSend(cqe, queues.sq) : CompleteRecv(cqe, queues.rq);
  if (index >= 0 && !send && queues.rq_is_srq) {
    Wqe& w = (*wqes_)[index];
    w.qp = w.qp.substr(0, w.qp.find("->")) + "->" + cqe.qp;
  }
  return index;
}

}  // namespace qptwin::scenario
