// Bringing an RC/UC QP from RESET to RTS against a peer, with attributes kept so the same
// connection can be re-established later (recovery, pool reuse).
//
// Contract:
//  1. ConnectQp() walks RESET->INIT->RTR->RTS with spec's BringUp (the table's minimum
//     masks), stopping at the first failing step and returning its errno; the QP is then
//     left in the last state reached (each modify is all-or-nothing). A QP not in RESET:
//     EINVAL, nothing changed.
//  2. Nothing here advances time or polls: these are control-path calls only.
//  3. Works on any Backend (only spec/backend.h is used).
#pragma once

#include <cstdint>

#include "spec/backend.h"
#include "spec/bring_up.h"

namespace qptwin::practice {

// The local half of a connection: everything but the peer's identity (spec/bring_up.h).
using ConnectParams = BringUpParams;

// A connection as stored for re-establishment: our params and the peer's address.
struct StoredConnection {
  ConnectParams params;
  ConnectionInfo remote;
};

// The QpAttr that ConnectQp uses for every step (state is filled in per step).
[[nodiscard]] int ConnectAttr(Device& dev, const StoredConnection& conn, QpAttr* out);

// RESET -> INIT -> RTR -> RTS towards conn.remote. 0 or the errno of the failing step.
[[nodiscard]] int ConnectQp(Device& dev, QpHandle qp, const StoredConnection& conn);

// The QP's current state (QueryQp); 0 or errno.
[[nodiscard]] int QueryState(Device& dev, QpHandle qp, QpState* out);

}  // namespace qptwin::practice
