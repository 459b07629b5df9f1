// Batch posting with selective signaling that never overflows the send queue.
//
// BatchPoster owns the bookkeeping the seed article's two tips need ("post WRs in batches",
// "signal only some WRs"): it posts a list of WRs in as few ibv_post_send calls as the free
// SQ space allows, requests a completion only every Nth WR, and reclaims SQ slots from the
// completions that do arrive.
//
// Contract:
//  1. Never ENOMEM from a full SQ: a WR is posted only when the tracker counts a free slot.
//     The tracker frees slots only on a CQE, so it never counts fewer WRs than the device
//     holds (a CQE implies its WQE and, IBTA in-order completion, all earlier WQEs of the
//     SQ are retired).
//  2. Signaled: every Nth WR, the last WR of each Post() call, the WR that fills the SQ (so
//     a full SQ always holds a signaled WR and can be reclaimed), and any WR the caller
//     flagged SIGNALED. A QP created with sq_sig_all is treated as all-signaled.
//  3. Every posted WR is accounted exactly once: either its CQE is delivered
//     (TakeCompletions: caller-signaled WRs and every error/flush, with the caller's wr_id
//     restored) or it completed successfully without a CQE for the caller (stats().silent).
//     posted == delivered + silent + outstanding() at all times.
//  4. The QP's send CQ must not carry this QP's receive completions (a flushed receive
//     cannot be told from a send); other QPs' completions found there are kept for the
//     caller (TakeOthers). wr_ids on the wire are the tracker's sequence numbers.
//  5. Errors are errno values; waits use Device::WaitForCompletions (simulated time on the
//     model). Single-threaded like Device.
#pragma once

#include <cstdint>
#include <deque>
#include <vector>

#include "spec/backend.h"
#include "examples/practice/recovery.h"

namespace qptwin::practice {

struct BatchOptions {
  uint32_t signal_every = 16;           // N; 1 signals every WR
  uint32_t max_per_call = 0;            // WRs per PostSend call at most (0: as many as fit)
  uint64_t reclaim_timeout_ns = 1'000'000'000;  // waiting for a free slot
};

struct BatchStats {
  uint64_t post_calls = 0;     // PostSend calls made
  uint64_t posted = 0;         // WRs posted
  uint64_t signaled = 0;       // of them, signaled
  uint64_t cqes = 0;           // CQEs of this QP polled
  uint64_t delivered = 0;      // CQEs handed to the caller
  uint64_t silent = 0;         // WRs completed without a CQE for the caller
  uint64_t reclaim_waits = 0;  // times Post() waited for SQ space
};

class BatchPoster {
 public:
  BatchPoster(Device* dev, QpHandle qp, BatchOptions opts) : dev_(dev), qp_(qp), opts_(opts) {}

  // Reads the QP's SQ depth, send CQ, number and sq_sig_all. 0 or errno (EINVAL: bad QP or
  // signal_every == 0).
  [[nodiscard]] int Init();
  // Posts all of `wrs` (waiting for SQ space as needed). *posted = how many were posted;
  // on error it is less than wrs.size() (ETIMEDOUT when no slot freed in time, or the
  // device's errno for WR number *posted).
  [[nodiscard]] int Post(const std::vector<SendWr>& wrs, size_t* posted);
  // Reaps what is in the CQ now (never waits). 0 or errno.
  [[nodiscard]] int Poll();
  // Waits until nothing is outstanding; ETIMEDOUT otherwise.
  [[nodiscard]] int WaitIdle(uint64_t timeout_ns);
  // Feeds CQEs collected by someone else (e.g. RecoveryResult::drained).
  void Absorb(const std::vector<WorkCompletion>& wcs);

  std::vector<WorkCompletion> TakeCompletions();
  std::vector<WorkCompletion> TakeOthers();

  // What RecoverQp must wait for: the newest outstanding WR's CQE.
  Outstanding DrainTarget() const;
  uint32_t outstanding() const { return static_cast<uint32_t>(window_.size()); }
  uint32_t depth() const { return depth_; }
  const BatchStats& stats() const { return stats_; }

 private:
  struct Slot {
    uint64_t seq = 0;
    uint64_t user_wr_id = 0;
    bool user_signaled = false;
  };
  void OnCqe(const WorkCompletion& wc);
  int WaitOne(uint64_t timeout_ns);

  Device* dev_;
  QpHandle qp_;
  BatchOptions opts_;
  uint32_t depth_ = 0;
  uint32_t qp_num_ = 0;
  CqHandle cq_;
  bool sig_all_ = false;
  uint64_t next_seq_ = 1;
  uint32_t since_signal_ = 0;
  std::deque<Slot> window_;  // posted, not yet known complete; oldest first
  std::vector<WorkCompletion> completions_;
  std::vector<WorkCompletion> others_;
  BatchStats stats_;
};

}  // namespace qptwin::practice
