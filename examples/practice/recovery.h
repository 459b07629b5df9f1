// QP error recovery as one call: the documented flow
//   drain the CQ -> modify to RESET -> RESET->INIT->RTR->RTS with the stored attributes ->
//   re-establish the peer,
// or the device-specific variant "destroy and recreate" (a new QP number; the peer must
// reconnect to it).
//
// Contract:
//  1. Every WR outstanding on the QP is accounted for: before RESET (which discards queued
//     WRs without completions, R9) the QP is moved to ERR (which flushes them, R6) and the
//     CQ(s) are polled until `outstanding` says all of the QP's WRs have a completion. The
//     completions are handed back in RecoveryResult (this QP's, and other QPs' that shared
//     the CQ, separately). If the drain times out, the QP is left in ERR and ETIMEDOUT is
//     returned: nothing is discarded silently.
//  2. Returns 0 or the errno of the failing verb. On success the QP (old or new) is in RTS
//     and, when a PeerLink is given, the peer has reconnected to it.
//  3. Time passes only inside the drain (Device::WaitForCompletions); the deadline is in
//     Backend::NowNs units (simulated on the model).
//  4. Single-threaded: the caller owns the Device for the duration of the call.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "spec/backend.h"
#include "examples/practice/peer_link.h"
#include "examples/practice/qp_connect.h"

namespace qptwin::practice {

enum class RecoveryMode : uint8_t {
  kReset,     // same QP, same number: RESET and re-initialise
  kRecreate,  // destroy and create a new QP (for devices that cannot reuse an errored QP)
};

// What the drain waits for. In ERR every WR still queued produces a CQE (IBTA 10.7.3.1:
// errors and flushes are always reported, even for unsignaled WRs); a WR that completed
// successfully unsignaled produces none. So with selective signaling, count completions by
// the newest posted send WR (which must be signaled, as BatchPoster guarantees): its CQE
// is the last one the SQ produces (in-order completion).
struct Outstanding {
  uint32_t send_cqes = 0;                  // CQEs expected from the send queue
  uint32_t recv_cqes = 0;                  // CQEs expected from the receive queue
  std::optional<uint64_t> last_send_wr_id;  // when set: the SQ is done once this one is seen
};

struct RecoveryOptions {
  RecoveryMode mode = RecoveryMode::kReset;
  uint64_t drain_timeout_ns = 1'000'000'000;
  Outstanding outstanding;
};

struct RecoveryResult {
  QpHandle qp;          // the QP after recovery (a new handle for kRecreate)
  uint32_t qp_num = 0;  // its number (new for kRecreate: the peer must reconnect)
  uint32_t old_qp_num = 0;
  std::vector<WorkCompletion> drained;  // this QP's completions collected while draining
  std::vector<WorkCompletion> others;   // other QPs' completions from a shared CQ
  uint64_t drain_ns = 0;                // Backend time spent draining
};

// Recovers `qp` (any state) to RTS. `conn` holds the stored attributes and the peer's last
// address; with `peer` given, the peer is asked to re-establish and conn->remote is updated
// to its new address. `backend` provides the clock for the deadline.
[[nodiscard]] int RecoverQp(Backend& backend, Device& dev, QpHandle qp, StoredConnection* conn,
                            PeerLink* peer, const RecoveryOptions& opts, RecoveryResult* out);

// Only the drain step: ERR, then poll until `outstanding` is satisfied or the deadline.
[[nodiscard]] int DrainQp(Backend& backend, Device& dev, QpHandle qp,
                          const Outstanding& outstanding, uint64_t timeout_ns,
                          RecoveryResult* out);

}  // namespace qptwin::practice
