#include "tools/report/report_command.h"

#include <iostream>

#include "tools/cli/backend_factory.h"
#include "tools/cli/cli_io.h"
#include "tools/cli/commands.h"
#include "tools/cli/diagram_render.h"
#include "tools/cli/flags.h"
#include "tools/cli/graphviz.h"
#include "tools/report/report_html.h"
#include "tools/scenario/run_command.h"

namespace qptwin::report {
namespace {

constexpr char kUsage[] =
    "usage: qptwin report FILE.qps -o OUT.html [--backend model|hw] [--profile P] [--device D]\n"
    "  runs FILE.qps (- = stdin) and writes one self-contained HTML page about the run to\n"
    "  OUT.html (- = stdout). Exit 0: every expectation held, 1: one failed (the page says\n"
    "  which), 2: bad usage, an unreadable or malformed FILE, no backend, or OUT unwritable.\n";

std::vector<Diagram> RenderDiagrams(const scenario::RunResult& result) {
  auto paths = QpPaths(result);
  std::vector<Diagram> out;
  for (const auto& [type, qps] : QpTypesUsed(result)) {
    // The longest path among the QPs of this type is the one highlighted.
    std::vector<QpState> path;
    for (const std::string& q : qps) {
      if (paths[q].size() > path.size()) path = paths[q];
    }
    Diagram d;
    d.type = type;
    std::string why;
    std::optional<std::string> svg = cli::RenderSvg(cli::RenderDot(type, path), &why);
    if (svg) {
      d.svg = InlineSvg(*svg);
    } else {
      d.error = why;
    }
    out.push_back(d);
  }
  return out;
}

}  // namespace

int RunReport(const std::vector<std::string>& args, std::istream& in, std::ostream& out,
              std::ostream& err, const scenario::BackendFactory& make) {
  std::vector<cli::FlagSpec> specs = cli::BackendFlags();
  specs.insert(specs.end(), {{"-o"}, {"--output", true, "-o"}});
  std::string error;
  auto flags = cli::ParseFlags(args, specs, &error, /*max_positional=*/1);
  if (!flags) return cli::BadInput(err, "report: " + error);
  if (flags->help) {
    out << kUsage;
    return cli::kExitOk;
  }
  cli::BackendSpec spec;
  if (!cli::BackendSpecFromFlags(*flags, &spec, &error)) {
    return cli::BadInput(err, "report: " + error);
  }
  if (flags->positional().empty()) {
    return cli::BadInput(err, "report: no scenario FILE given (see qptwin report --help)");
  }
  if (!flags->Has("-o")) {
    return cli::BadInput(err, "report: missing -o OUT.html (- writes the page to stdout)");
  }
  const std::string file = flags->positional()[0];
  const std::string output = flags->Get("-o");
  const scenario::BackendChoice choice{spec.kind, spec.profile, 1, spec.device};
  scenario::ScenarioRun run;
  if (int rc = scenario::LoadAndRun(file, in, choice, make, err, &run)) return rc;
  std::string html = RenderReportHtml(file, run, RenderDiagrams(run.result));
  if (!cli::WriteOutputFile(output, html, out, &error)) {
    return cli::BadInput(err, "report: " + error);
  }
  const int failures = run.result.FailureCount();
  if (output != "-") {  // with -o -, stdout is the page alone
    out << "wrote " << output << " (" << html.size() << " bytes, " << run.result.steps.size()
        << " steps, " << failures << " failed expectation(s))\n";
  }
  return failures ? cli::kExitFailed : cli::kExitOk;
}

int RunReportCli(const std::vector<std::string>& args, std::istream& in, std::ostream& out,
                 std::ostream& err) {
  return RunReport(args, in, out, err, scenario::MakeScenarioBackend);
}

}  // namespace qptwin::report
