// qptwin demo [-o FILE]: the README's tour of the RC state machine.
#include <cerrno>
#include <cstdlib>
#include <optional>
#include <ostream>

#include "spec/qp_state_table.h"
#include "tools/cli/cli_io.h"
#include "tools/cli/commands.h"
#include "tools/cli/diagram_render.h"
#include "tools/cli/flags.h"
#include "tools/cli/graphviz.h"
#include "tools/cli/table_render.h"

namespace qptwin::cli {
namespace {

constexpr char kUsage[] =
    "usage: qptwin demo [-o FILE]\n"
    "  prints the RC transition table, explains a legal and an illegal ibv_modify_qp, and\n"
    "  (with Graphviz) writes the RC state diagram to FILE or a temporary directory.\n";

const std::vector<FlagSpec> kFlags = {{"-o"}, {"--output", true, "-o"}};

void Explained(QpType type, QpState from, QpState to, AttrMask mask, std::ostream& out) {
  out << "$ qptwin explain --type " << ToName(type) << " --from " << ToName(from) << " --to "
      << ToName(to) << " --attrs '" << FormatAttrMask(mask) << "'\n"
      << Judge(type, from, to, mask).Explain() << "\n";
}

// Where rc.svg goes: -o FILE, else a fresh directory under $TMPDIR or /tmp.
std::optional<std::string> SvgPath(const Flags& flags, std::string* error) {
  if (flags.Has("-o")) return flags.Get("-o");
  const char* dir = std::getenv("TMPDIR");
  std::string tmpl = std::string(dir && *dir ? dir : "/tmp") + "/qptwin-demo-XXXXXX";
  if (mkdtemp(tmpl.data()) == nullptr) {
    *error = "cannot create a directory like " + tmpl + ": " + ErrnoText(errno);
    return std::nullopt;
  }
  return tmpl + "/rc.svg";
}

}  // namespace

int RunDemo(const Args& args, std::istream& in, std::ostream& out, std::ostream& err) {
  std::string error;
  auto flags = ParseFlags(args, kFlags, &error);
  if (!flags) return BadInput(err, "demo: " + error);
  if (flags->help) {
    out << kUsage;
    return kExitOk;
  }
  if (flags->Get("-o") == "-") {
    return BadInput(err, "demo: -o needs a file name (the tour itself is on stdout)");
  }
  const QpType rc = QpType::kRc;
  out << "qptwin demo: the RC queue pair, judged by the Linux kernel's own rules "
         "(ib_modify_qp_is_ok)\n\n"
      << "1. The RC state machine: every ibv_modify_qp transition and its attributes\n"
      << RenderTable({rc}, TableFormat::kText) << "\n";

  const AttrMask minimum = MinimumMask(rc, QpState::kInit, QpState::kRtr);
  out << "2. A legal modify: INIT->RTR with the minimum mask of ibv_modify_qp(3)\n";
  Explained(rc, QpState::kInit, QpState::kRtr, minimum, out);
  out << "3. An illegal modify: the same attributes straight from RESET\n";
  Explained(rc, QpState::kReset, QpState::kRtr, minimum, out);

  out << "4. The diagram (bring-up path RESET->INIT->RTR->RTS in red)\n";
  const std::string dot =
      RenderDot(rc, {QpState::kReset, QpState::kInit, QpState::kRtr, QpState::kRts});
  auto svg = RenderSvg(dot, &error);
  if (!svg) {
    out << "   skipped the SVG: " << error << "\n"
        << "   (qptwin diagram --type RC prints the dot text)\n";
    return kExitOk;
  }
  const std::optional<std::string> path = SvgPath(*flags, &error);
  if (!path) return BadInput(err, "demo: " + error);
  if (!WriteOutputFile(*path, *svg, out, &error)) return BadInput(err, "demo: " + error);
  out << "   wrote " << *path << " (open it in a browser)\n";
  return kExitOk;
}

}  // namespace qptwin::cli
