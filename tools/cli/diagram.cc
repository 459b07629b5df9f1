// qptwin diagram --type T [--format dot|svg] [-o FILE]
#include <ostream>

#include "tools/cli/cli_io.h"
#include "tools/cli/commands.h"
#include "tools/cli/diagram_render.h"
#include "tools/cli/flags.h"
#include "tools/cli/graphviz.h"
#include "tools/cli/names.h"

namespace qptwin::cli {
namespace {

constexpr char kUsage[] =
    "usage: qptwin diagram --type TYPE [--format dot|svg] [-o FILE]\n"
    "  the state diagram of a QP type: dot text (default) or SVG rendered by Graphviz's dot;\n"
    "  written to FILE or stdout (-o - is stdout too).\n";

const std::vector<FlagSpec> kFlags = {{"--type"}, {"--format"}, {"-o"}, {"--output", true, "-o"}};

}  // namespace

int RunDiagram(const Args& args, std::istream& in, std::ostream& out, std::ostream& err) {
  std::string error;
  auto flags = ParseFlags(args, kFlags, &error);
  if (!flags) return BadInput(err, "diagram: " + error);
  if (flags->help) {
    out << kUsage;
    return kExitOk;
  }
  if (!flags->Has("--type")) {
    return BadInput(err, "diagram: missing --type (valid: " + QpTypeChoices() + ")");
  }
  auto type = ParseQpTypeArg(flags->Get("--type"), &error);
  if (!type) return BadInput(err, "diagram: " + error);
  const std::string format = flags->Get("--format", "dot");
  if (format != "dot" && format != "svg") {
    return BadInput(err, "diagram: unknown diagram format '" + format + "' (valid: dot, svg)");
  }
  std::string text = RenderDot(*type);
  if (format == "svg") {
    auto svg = RenderSvg(text, &error);
    if (!svg) return BadInput(err, "diagram: " + error);
    text = *svg;
  }
  if (!flags->Has("-o")) {
    out << text;
    return kExitOk;
  }
  const std::string path = flags->Get("-o");
  if (!WriteOutputFile(path, text, out, &error)) return BadInput(err, "diagram: " + error);
  if (path != "-") out << "wrote " << path << "\n";
  return kExitOk;
}

}  // namespace qptwin::cli
