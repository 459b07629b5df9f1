// Plain-words narration of one scenario step: what changed in which queue, why a call
// failed, and which rule decided (rdma-facts R-ids, kernel functions, IBTA sections).
// Pure functions over what the runner recorded; the runner calls ExplainStep after each step.
#pragma once

#include <string>
#include <vector>

#include "spec/scenario/command.h"
#include "spec/scenario/runner.h"

namespace qptwin::scenario {

// `before`: the QPs as they stood before the step; step.qps: after it; `changes`: the QP
// state changes seen during the step. Returns the narration, one sentence per line.
std::vector<std::string> ExplainStep(const Command& c, int ret, const Step& step,
                                     const std::vector<QpView>& before,
                                     const std::vector<StateEvent>& changes);

// What a completion status means and the rule behind it ("" for SUCCESS); `wr_opcode` (the
// WR's opcode as the trace names it: "SEND", "RDMA_WRITE", "RECV", ...; "" unknown) picks
// the cause where the status has several.
std::string StatusMeaning(WcStatus status, const std::string& wr_opcode = "");
// A modify whose cur_state (`claimed`) is not the QP's state (`actual`): how the kernel judged
// it and, when `ret` is an errno, why it was refused.
std::string CurStateMismatch(QpType type, QpState claimed, QpState actual, const QpAttr& attr,
                             AttrMask mask, int ret);
// What an async event means and the rule behind it.
std::string EventMeaning(EventType type);

}  // namespace qptwin::scenario
