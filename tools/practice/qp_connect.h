// Bringing an RC/UC QP from RESET to RTS against a peer, with attributes kept so the same
// connection can be re-established later (recovery, pool reuse).
//
// Contract:
//  1. ConnectQp() walks RESET->INIT->RTR->RTS with the minimum masks of spec's table
//     (MinimumMask), stopping at the first failing step and returning its errno; the QP
//     is then left in the last state reached (each modify is all-or-nothing).
//  2. Nothing here advances time or polls: these are control-path calls only.
//  3. Works on any Backend (only spec/backend.h is used).
#pragma once

#include <cstdint>

#include "spec/backend.h"

namespace qptwin::practice {

// The local half of a connection: everything but the peer's identity.
struct ConnectParams {
  uint8_t port_num = 1;
  uint16_t pkey_index = 0;
  AccessFlags access = access::kLocalWrite | access::kRemoteWrite | access::kRemoteRead;
  Mtu path_mtu = Mtu::k1024;
  uint32_t sq_psn = 0x100;  // our first PSN; the peer's rq_psn must equal it
  uint32_t rq_psn = 0x100;  // the first PSN we expect from the peer
  uint8_t timeout = 14;     // local ACK timeout = 4.096 us * 2^14 ~= 67 ms
  uint8_t retry_cnt = 7;
  uint8_t rnr_retry = 7;
  uint8_t min_rnr_timer = 12;
  uint8_t max_rd_atomic = 1;
  uint8_t max_dest_rd_atomic = 1;
};

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
