// What a scenario run records besides its canonical outcomes, for people and tools: the QPs
// as they stood after each step (state, outstanding WRs per queue), every posted WR from post
// to its end, and every QP state change with its time and cause.
//
// Invariants (the runner establishes them):
//  1. Every WR a backend accepted appears exactly once in RunTrace::wqes, and ends exactly
//     once: with its own CQE, implicitly (an unsignaled SQ WR retired by a later CQE of the
//     same SQ, IBTA 10.8.3: SQ WRs complete in order), discarded by RESET (rdma-facts R9),
//     gone with its destroyed QP (or SRQ), or still outstanding when the scenario ended.
//     CQEs are matched to WRs by queue position, whatever the wr_ids (accounting.h); a CQE
//     polled after RESET/destroy turns its WR's discarded/destroyed end into kCqe.
//  2. Times are ns from the scenario's start (Backend::NowNs), non-decreasing in `states`.
//  3. QpView::sq/rq count the WRs posted and not yet ended (SRQ receives count at the SRQ).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "spec/vocabulary.h"

namespace qptwin::scenario {

struct QpView {
  std::string name;
  QpType type = QpType::kRc;
  QpState state = QpState::kReset;
  int sq = 0, rq = 0;  // outstanding WRs
  uint32_t max_send_wr = 0, max_recv_wr = 0, max_send_sge = 0, max_recv_sge = 0;
  std::string srq;  // the SRQ's name when the QP has one
  bool sig_all = false;
};

struct Wqe {
  enum class End : uint8_t { kOutstanding, kCqe, kImplicit, kDiscarded, kDestroyed };
  std::string qp;     // the QP (or SRQ) it was posted to
  std::string queue;  // "SQ", "RQ" or "SRQ"
  uint64_t wr_id = 0;
  std::string opcode;  // "SEND", "WRITE", ... ; "RECV" for receives
  bool signaled = false;
  int post_line = 0;
  uint64_t post_ns = 0;
  End end = End::kOutstanding;
  int end_line = 0;
  uint64_t end_ns = 0;
  WcStatus status = WcStatus::kSuccess;  // kCqe only
  std::string cq;                        // kCqe only: the CQ it was polled from
  std::string wc_opcode;                 // kCqe with SUCCESS: the CQE's opcode
  uint32_t byte_len = 0;                 // kCqe with SUCCESS
  std::string completed_by;              // kImplicit: "wr_id=N"
};

std::string_view ToName(Wqe::End e);

struct StateEvent {
  std::string qp;
  uint64_t time_ns = 0;
  int line = 0;  // the step during which it was seen
  QpState from = QpState::kReset, to = QpState::kReset;
  std::string cause;  // "modify", "created", or what the device did ("flush on send error")
};

struct RunTrace {
  std::vector<Wqe> wqes;
  std::vector<StateEvent> states;
};

}  // namespace qptwin::scenario
