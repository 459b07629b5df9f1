// Device behaviours that differ between rxe and IBTA and that the reference model of
// spec/reference/sequence.h predicts (docs/differences.md has the evidence for each).
//
// Contract:
//  1. A DeviceBehaviour is plain data: the conformance tests take it from their BackendCase
//     (the profile's named settings); tools that only hold a Backend probe it.
//  2. ProbeDeviceBehaviour creates one CQ and two QPs on `dev` with `pd`, destroys them all
//     again, and changes nothing else. It returns 0, or the first errno of a verb that
//     had to succeed (then *out is unchanged).
#pragma once

#include <cstdint>
#include <string>

#include "spec/backend.h"

namespace qptwin::reference {

struct DeviceBehaviour {
  // A send posted below RTS returns EINVAL, yet the WRs are queued: *bad_wr is the first WR
  // not queued (wrs.size() when all were), and the queued ones run in RTS or are flushed by
  // ERR (rdma-core providers/rxe rxe_post_send: ring written, then the doorbell refuses).
  // Otherwise (IBTA, R2): EINVAL, nothing queued, *bad_wr 0.
  bool rejected_send_queues = false;
  // A receive posted while the QP is in ERR is flushed only at the next move to ERR (or when
  // the responder next runs); rxe has no receive doorbell. Otherwise (R4): flushed at once.
  bool recv_in_err_waits = false;
};

std::string Describe(const DeviceBehaviour& b);

// Finds out which behaviours `dev` has by trying them (see the contract).
[[nodiscard]] int ProbeDeviceBehaviour(Device& dev, PdHandle pd, uint64_t settle_ns,
                                       DeviceBehaviour* out);

}  // namespace qptwin::reference
