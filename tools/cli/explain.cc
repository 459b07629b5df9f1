// qptwin explain --type RC --from INIT --to RTR --attrs STATE|AV|PATH_MTU|...
#include <ostream>

#include "spec/qp_state_table.h"
#include "tools/cli/commands.h"
#include "tools/cli/flags.h"
#include "tools/cli/names.h"

namespace qptwin::cli {
namespace {

constexpr char kUsage[] =
    "usage: qptwin explain --type TYPE --from STATE [--to STATE] --attrs MASK\n"
    "  MASK: names joined by | or , (with or without IBV_QP_), or a number like 0x1a1;\n"
    "  --mask is a synonym of --attrs. Without STATE in MASK the judged transition is\n"
    "  FROM->FROM, as the kernel derives it (--to is then optional).\n"
    "  exit 0: legal, 1: illegal, 2: bad input\n";

const std::vector<FlagSpec> kFlags = {
    {"--type"}, {"--from"}, {"--to"}, {"--attrs"}, {"--mask", true, "--attrs"},
};

}  // namespace

int RunExplain(const Args& args, std::istream& in, std::ostream& out, std::ostream& err) {
  std::string error;
  auto flags = ParseFlags(args, kFlags, &error);
  if (!flags) return BadInput(err, "explain: " + error);
  if (flags->help) {
    out << kUsage;
    return kExitOk;
  }
  for (std::string_view required : {"--type", "--from", "--attrs"}) {
    if (!flags->Has(required)) {
      return BadInput(err, "explain: missing " + std::string(required) +
                               " (needs --type, --from, --to and --attrs; see --help)");
    }
  }
  auto type = ParseQpTypeArg(flags->Get("--type"), &error);
  if (!type) return BadInput(err, "explain: " + error);
  auto from = ParseQpStateArg(flags->Get("--from"), &error);
  if (!from) return BadInput(err, "explain: " + error);
  auto mask = ParseAttrMaskArg(flags->Get("--attrs"), &error);
  if (!mask) return BadInput(err, "explain: " + error);
  QpState to = *from;
  if (flags->Has("--to")) {
    auto parsed = ParseQpStateArg(flags->Get("--to"), &error);
    if (!parsed) return BadInput(err, "explain: " + error);
    to = *parsed;
  } else if (*mask & attr::kState) {
    return BadInput(err, "explain: missing --to (the mask has STATE, so a target state is needed)");
  }
  const QpState next = NextState(*from, to, *mask);
  if (next != to) {
    out << "note: the mask lacks STATE, so the QP stays in " << ToName(*from)
        << ": judging " << ToName(*from) << "->" << ToName(*from) << ", not " << ToName(*from)
        << "->" << ToName(to) << " (add STATE to move to " << ToName(to) << ")\n";
  }
  const Verdict v = Judge(*type, *from, next, *mask);
  out << v.Explain();
  return v.legal ? kExitOk : kExitFailed;
}

}  // namespace qptwin::cli
