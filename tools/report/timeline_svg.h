// The timeline of a scenario run as an inline SVG (no external references): one column per
// step (steps on the model often take no simulated time, so columns, not nanoseconds, keep
// their order visible), one band per QP showing its state, and one bar per posted WR from
// its post to its end (CQE, implicit completion, discard), coloured by how it ended.
// Every bar and band carries a <title> tooltip with the exact times.
#pragma once

#include <string>

#include "spec/scenario/runner.h"

namespace qptwin::report {

std::string RenderTimelineSvg(const scenario::RunResult& result);

// HTML-escapes &, <, >, " and '.
std::string Escape(const std::string& s);

}  // namespace qptwin::report
