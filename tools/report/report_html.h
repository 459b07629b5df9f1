// `qptwin report`: one self-contained HTML page about one scenario run -- no network: inline
// CSS, JS and SVG, no external URL. Sections (ids): #summary, #diagrams (the state diagram of
// each QP type used, the path each QP took drawn bold red), #timeline (SVG + one table row per
// posted WR, post -> end), #events (CQEs, state changes, async events in time order),
// #narration (every step with its result and the narration of scenario/narrate.h).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "tools/scenario/scenario_cli.h"

namespace qptwin::report {

struct Diagram {
  QpType type = QpType::kRc;
  std::string svg;    // inline <svg>...</svg> ("" when it could not be rendered)
  std::string error;  // why not (e.g. Graphviz missing)
};

// The path each QP took: RESET, then every state it entered, in order.
std::map<std::string, std::vector<QpState>> QpPaths(const scenario::RunResult& result);
// QP types in order of first use, with the QPs of each.
std::vector<std::pair<QpType, std::vector<std::string>>> QpTypesUsed(
    const scenario::RunResult& result);

// Strips the XML prolog, DOCTYPE and namespace declarations from `dot -Tsvg` output so the
// SVG can sit inline in HTML without naming any URL.
std::string InlineSvg(const std::string& dot_svg);

std::string RenderReportHtml(const std::string& scenario_path, const scenario::ScenarioRun& run,
                             const std::vector<Diagram>& diagrams);

}  // namespace qptwin::report
