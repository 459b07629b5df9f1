// Bringing a QP up RESET -> INIT -> RTR -> RTS on the minimum masks, for any Backend.
//
// The masks are not written here: each step sends MinimumMask(type, cur, next) from the
// legality table (qp_state_table.h), i.e. exactly the attributes ibv_modify_qp(3) requires
// for that transition and QP type (RC, UC, UD, XRC_SEND, XRC_RECV). The values come from
// BringUpParams and the peer's ConnectionInfo; which of them a step sends is the table's
// business.
//
// Contract:
//  1. Every function returns 0 or the positive errno of the first call that failed
//     (QueryQp, DefaultGidIndex, ModifyQp); nothing asserts, nothing throws.
//  2. Each step is one ModifyQp, all-or-nothing (backend.h contract 3): after a failure the
//     QP is in the last state reached, with its attributes as they were.
//  3. BringUp() walks from the QP's current state (queried) forward along
//     RESET -> INIT -> RTR -> RTS to `target`; a QP already in `target` is left alone (0).
//     A QP off that path (SQD, SQE, ERR) or past `target`, or a target not on it: EINVAL,
//     nothing modified.
//  4. Control path only: nothing here polls, waits or advances time.
//  5. Pure C++ over spec/backend.h; the same call runs on the model and on hw.
#pragma once

#include <cstdint>
#include <vector>

#include "spec/backend.h"

namespace qptwin {

// A value for every attribute some bring-up step may require. Defaults as perftest uses
// them on RoCE: timeout 14 (4.096 us * 2^14 ~= 67 ms), 7 retries, min_rnr_timer 12 (0.64 ms).
struct BringUpParams {
  uint8_t port_num = 1;
  uint16_t pkey_index = 0;
  AccessFlags access = access::kAll;  // qp_access_flags (RC/UC/XRC)
  uint32_t qkey = 0x11111111;         // UD
  Mtu path_mtu = Mtu::k1024;
  uint32_t sq_psn = 0x100;  // our first PSN; the peer's rq_psn must equal it
  uint32_t rq_psn = 0x100;  // the first PSN we expect from the peer
  uint8_t timeout = 14;
  uint8_t retry_cnt = 7;
  uint8_t rnr_retry = 7;
  uint8_t min_rnr_timer = 12;
  uint8_t max_rd_atomic = 1;
  uint8_t max_dest_rd_atomic = 1;
};

// The QpAttr every step of a bring-up towards `peer` sends (qp_state is set per step):
// params plus the address vector AddressTo(peer, this port's DefaultGidIndex) and
// dest_qp_num = peer.qp_num. 0 or errno.
[[nodiscard]] int BringUpAttr(Device& dev, const BringUpParams& params,
                              const ConnectionInfo& peer, QpAttr* out);

// One modify of a bring-up: from -> to on `mask` = MinimumMask(type, from, to).
struct BringUpStep {
  QpState from;
  QpState to;
  AttrMask mask;
};

// The steps from `cur` to `target` for `type` (contract 3: none when cur == target; EINVAL
// when cur or target is off the path or cur is past target). For callers that send each
// modify their own way (a lock per step, a recording history); BringUp() runs them.
[[nodiscard]] int BringUpPlan(QpType type, QpState cur, QpState target,
                              std::vector<BringUpStep>* out);

// One step cur -> next with `attr` (its qp_state replaced by next) on
// MinimumMask(type, cur, next); EINVAL without calling the device when the table has no
// such transition.
[[nodiscard]] int ModifyOnMinimumMask(Device& dev, QpHandle qp, QpType type, QpState cur,
                                      QpState next, QpAttr attr);

// Contract 3, with `attr` as BringUpAttr builds it.
[[nodiscard]] int BringUp(Device& dev, QpHandle qp, const QpAttr& attr,
                          QpState target = QpState::kRts);

// BringUpAttr + BringUp: the QP to `target` towards `peer`.
[[nodiscard]] int BringUpTo(Device& dev, QpHandle qp, const BringUpParams& params,
                            const ConnectionInfo& peer, QpState target = QpState::kRts);

// Both QPs to RTS, each towards the other (a's sq_psn is b's rq_psn and vice versa when
// both use the same params). The devices may be one device opened twice, or the same one.
[[nodiscard]] int ConnectPair(Device& dev_a, QpHandle a, Device& dev_b, QpHandle b,
                              const BringUpParams& params);

}  // namespace qptwin
