// A scenario run as an IEEE 1364 VCD waveform (GTKWave opens it).
//
// Signals (scope `scenario`, one sub-scope per QP):
//   line      integer 32  the .qps line being executed (from its start time)
//   failures  integer 32  failed expectations so far
//   <qp>.state        integer 8   libibverbs value: RESET=0 INIT=1 RTR=2 RTS=3 SQD=4 SQE=5 ERR=6
//   <qp>.in_err       wire 1      1 while the QP is in ERR
//   <qp>.sq_outstanding, <qp>.rq_outstanding  integer 32  WRs posted and not yet ended
//                                               (trace.h: SRQ receives count at every user)
// Times: $timescale 1ns; the value changes of one time are grouped under one #t, times
// strictly increasing. A QP is x before it is created. Steps that take no time (on the model
// every control call is instantaneous) are spread 1 ns apart so that their order shows:
// a step's times are its Backend times plus the shift accumulated by earlier such steps.
#pragma once

#include <string>

#include "spec/scenario/runner.h"

namespace qptwin::scenario {

std::string RenderVcd(const RunResult& result, const std::string& scenario_name);

}  // namespace qptwin::scenario
