// What a NIC tells a tracer (issue 12: a VCD of the model's own NICs; model/sim/platform.h
// contract 10 draws it): its QPs' states and queue occupancy, and when its port sends.
//
// Contract:
//  1. Off unless `on` (the default: no port, or a port not switched on): each change then
//     costs the NIC one test.
//  2. QpCreated(now, qpn) when a QP is made; its state is RESET and its queues are empty
//     then. QpState(now, qpn, s) whenever it moves (also ERR -> ERR is not a move: none).
//     QpQueues(now, qpn, sq, rq) whenever a count changes: sq the send WQEs posted and
//     not yet retired (rxe's stale slots run again after ERR -> RTS, the ghosts, are not
//     the program's WQEs and do not count), rq the receives posted to the QP's own
//     receive queue and not yet taken by the responder or flushed (an SRQ's receives are
//     the SRQ's).
//  3. LinkBusy(now, from, until): the port sends a message's bytes in [from, until), one
//     call per message, in the order the port sends them. The ends are whole ns (from
//     rounded down, until up), so a message sent right behind another may begin before
//     the last until; from >= now is not promised either (the wire may have started
//     before the call).
//  4. Times are the engine's (World::events().Now(), ns), which may be ahead of SystemC's
//     (model/sim/sc_clock.h contract 7): a tracer shows a change at its own time.
#pragma once

#include <cstdint>

#include "spec/vocabulary.h"

namespace qptwin::model::engine {

class TracePort {
 public:
  virtual ~TracePort() = default;
  virtual void QpCreated(uint64_t now_ns, uint32_t qpn) = 0;
  virtual void QpState(uint64_t now_ns, uint32_t qpn, QpState state) = 0;
  virtual void QpQueues(uint64_t now_ns, uint32_t qpn, uint32_t sq, uint32_t rq) = 0;
  virtual void LinkBusy(uint64_t now_ns, uint64_t from_ns, uint64_t until_ns) = 0;
  bool on = false;  // contract 1
};

}  // namespace qptwin::model::engine
