// Probing the device behaviours (spec/device_description.h) that the reference model of
// spec/reference/sequence.h predicts, for tools that hold only a Backend.
//
// Contract:
//  1. The conformance tests take the Behaviour from their device's description and check it
//     against this probe (device_behaviour_test.cc); tools that only hold a Backend probe.
//  2. ProbeDeviceBehaviour creates one CQ and two QPs on `dev` with `pd`, destroys them all
//     again, and changes nothing else. It returns 0, or the first errno of a verb that
//     had to succeed (then *inout is unchanged).
#pragma once

#include <cstdint>
#include <string>

#include "spec/backend.h"
#include "spec/device_description.h"

namespace qptwin::reference {

// Finds out, by trying them, the two behaviours the reference model predicts
// (post_send_below_rts_queues, recv_in_err_waits) and sets them in *inout (see the contract).
[[nodiscard]] int ProbeDeviceBehaviour(Device& dev, PdHandle pd, uint64_t settle_ns,
                                       Behaviour* inout);

}  // namespace qptwin::reference
