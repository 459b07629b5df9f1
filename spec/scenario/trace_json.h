// A scenario run as JSON for tools. Schema "qptwin-trace/1":
//
// {
//   "schema": "qptwin-trace/1",
//   "scenario": "examples/01_rc_setup.qps", "backend": "model/rxe", "clock": "simulated",
//   "failures": 0,
//   "qps": [{"name": "a", "type": "RC"}, ...],            // in order of creation
//   "events": [                                           // sorted by time_ns (stable)
//     {"time_ns": 0, "kind": K, "line": 12, "qp": "a", "details": {...}}, ...
//   ]
// }
// kinds and their details ("qp" is "" when no QP is concerned):
//   call        text, result ("ok" / errno name), note, why [strings], failures [strings]
//   post        queue (SQ|RQ|SRQ), wr_id, opcode, signaled
//   completion  queue, wr_id, cq, status, opcode (SUCCESS only), byte_len (SUCCESS only)
//   wqe_end     queue, wr_id, end (implicit|discarded|destroyed|outstanding), by
//   state       from, to, cause ("created", "modify", or what the device did)
//   async_event type, object ("qp=a", "cq=c", ...)
//   depth       sq, rq (outstanding WRs after the step, when they changed)
// time_ns counts from the scenario's start (simulated on the model, real on hw).
#pragma once

#include <string>

#include "spec/scenario/runner.h"

namespace qptwin::scenario {

std::string RenderTraceJson(const RunResult& result, const std::string& scenario_name,
                            const std::string& backend_label, const std::string& clock);

// A JSON string literal (quotes included), escaping as RFC 8259 requires.
std::string JsonString(const std::string& s);

}  // namespace qptwin::scenario
