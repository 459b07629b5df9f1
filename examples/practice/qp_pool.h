// A pool of pre-warmed, connected QPs (the seed article's "keep QPs in RTS, take them from
// a pool, initialise lazily").
//
// Contract:
//  1. Every QP the pool hands out is in RTS and connected to a peer QP through the PeerLink
//     (a peer per pooled QP). Acquire() takes an idle QP (a hit) or, when none is idle and
//     the pool is below capacity, creates and connects one on demand (a miss + a creation).
//     At capacity with none idle: EAGAIN, nothing changes.
//  2. Release() of a QP in RTS puts it back as is: the caller must have reaped its WRs.
//     A QP in any other state (ERR, SQE, SQD, ...) is recovered (RecoverQp with the given
//     outstanding WRs, their CQEs returned in *drained) and put back. With recovery off it
//     is destroyed (with its peer) and Release returns 0; if recovery fails it is destroyed
//     and Release returns the recovery's errno (ETIMEDOUT: the drain did not finish).
//     Releasing a QP the pool did not hand out: EINVAL.
//  3. An idle QP found not in RTS at Acquire (e.g. the peer went away) is recovered (with no
//     outstanding WRs) or destroyed before another is tried.
//  4. Stats count hits, misses, creations, recoveries and destructions.
//  5. Single-threaded like Device. The destructor destroys every QP the pool still owns.
#pragma once

#include <cstdint>
#include <deque>
#include <map>

#include "spec/backend.h"
#include "examples/practice/peer_link.h"
#include "examples/practice/qp_connect.h"
#include "examples/practice/recovery.h"

namespace qptwin::practice {

struct QpPoolOptions {
  size_t capacity = 16;  // QPs at most, idle + in use
  QpInitAttr init;       // template for the pool's QPs
  ConnectParams params;
  bool recover_errored = true;  // false: errored QPs are destroyed on release
  RecoveryMode recovery = RecoveryMode::kReset;
  uint64_t drain_timeout_ns = 1'000'000'000;
};

struct PooledQp {
  QpHandle qp;
  uint32_t qp_num = 0;
  StoredConnection conn;  // params and the peer's address
};

struct QpPoolStats {
  uint64_t hits = 0;        // Acquire served by an idle QP
  uint64_t misses = 0;      // Acquire that had to create (or found the pool full)
  uint64_t creations = 0;   // QPs created and connected (warm-up and on demand)
  uint64_t recoveries = 0;  // errored QPs brought back to RTS
  uint64_t destroyed = 0;   // QPs given up
};

class QpPool {
 public:
  QpPool(Backend* backend, Device* dev, PeerLink* peer, QpPoolOptions opts);
  ~QpPool();
  QpPool(const QpPool&) = delete;
  QpPool& operator=(const QpPool&) = delete;

  // Creates and connects QPs until `n` are idle or the pool is at capacity. 0 or errno.
  [[nodiscard]] int Warm(size_t n);
  [[nodiscard]] int Acquire(PooledQp* out);
  [[nodiscard]] int Release(const PooledQp& qp, const Outstanding& outstanding = {},
                            RecoveryResult* drained = nullptr);

  size_t idle() const { return idle_.size(); }
  size_t in_use() const { return in_use_.size(); }
  size_t size() const { return idle_.size() + in_use_.size(); }
  const QpPoolStats& stats() const { return stats_; }

 private:
  int CreateConnected(PooledQp* out);
  // Recovers `q` in place (handle/number may change); on failure destroys it. ENOENT when
  // recovery is off (destroyed by policy).
  int RecoverOrDestroy(PooledQp* q, const Outstanding& outstanding, RecoveryResult* drained);
  void Destroy(const PooledQp& q);

  Backend* backend_;
  Device* dev_;
  PeerLink* peer_;
  QpPoolOptions opts_;
  std::deque<PooledQp> idle_;
  std::map<uint32_t, PooledQp> in_use_;  // by handle id
  QpPoolStats stats_;
};

}  // namespace qptwin::practice
