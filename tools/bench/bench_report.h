// `qptwin bench report [--out DIR]`: runs every experiment of docs/bench/REPORT.md on the
// model (targets, latency breakdowns, the seed's optimisations as before/after rows, warm
// QP pool, simulation speed) and prints the Markdown; with --out DIR it also writes the
// SVG charts there. tools/bench/make-report regenerates docs/bench/.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

namespace qptwin::bench {

int WriteReport(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace qptwin::bench
