// The state diagram of one QP type as Graphviz dot text, read from the transition table.
//
//  - nodes: the states the type can be in (SQE only for UC, UD, SMI, GSI: IBTA 10.3.1 puts
//    UC/UD send errors in SQE; RC-like types go to ERR instead);
//  - solid edges: valid ibv_modify_qp transitions, labelled with the required attributes
//    (self loops with optional attributes only say so; the list is in the tooltip);
//  - dashed edges: states the device enters (RTS->SQE on a send error, any state -> ERR).
// A highlighted path (states in order) is drawn bold red; a step that is not a transition is
// drawn red and dotted, labelled "not a transition".
#pragma once

#include <string>
#include <vector>

#include "spec/qp_state_table.h"
#include "tools/cli/table_render.h"  // CanBeInSqe()

namespace qptwin::cli {

std::string RenderDot(QpType type, const std::vector<QpState>& highlight_path = {});

}  // namespace qptwin::cli
