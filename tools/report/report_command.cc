#include "tools/report/report_command.h"

#include <fstream>
#include <iostream>

#include "tools/cli/diagram_render.h"
#include "tools/cli/graphviz.h"
#include "tools/report/report_html.h"
#include "tools/scenario/run_command.h"

namespace qptwin::report {
namespace {

constexpr char kUsage[] =
    "usage: qptwin report FILE.qps -o OUT.html [--backend model|hw] [--profile P]";

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
  scenario::BackendChoice choice{"model", "", 1};
  std::string file, output;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    const bool has_value = i + 1 < args.size();
    if ((a == "-o" || a == "--output") && has_value) {
      output = args[++i];
    } else if (a == "--backend" && has_value && (args[i + 1] == "model" || args[i + 1] == "hw")) {
      choice.kind = args[++i];
    } else if (a == "--profile" && has_value) {
      choice.profile = args[++i];
    } else if (a.size() > 1 && a[0] == '-') {
      err << "bad or incomplete option " << a << "\n" << kUsage << "\n";
      return 2;
    } else if (file.empty()) {
      file = a;
    } else {
      err << "one scenario FILE per report\n" << kUsage << "\n";
      return 2;
    }
  }
  if (file.empty() || output.empty()) {
    err << kUsage << "\n";
    return 2;
  }
  scenario::ScenarioRun run;
  if (int rc = scenario::LoadAndRun(file, in, choice, make, err, &run)) return rc;
  std::string html = RenderReportHtml(file, run, RenderDiagrams(run.result));
  std::ofstream f(output, std::ios::binary);
  f << html;
  f.close();
  if (!f) {
    err << output << ": cannot write the report\n";
    return 2;
  }
  const int failures = run.result.FailureCount();
  out << "wrote " << output << " (" << html.size() << " bytes, " << run.result.steps.size()
      << " steps, " << failures << " failed expectation(s))\n";
  return failures ? 1 : 0;
}

int RunReportCli(const std::vector<std::string>& args, std::istream& in, std::ostream& out,
                 std::ostream& err) {
  return RunReport(args, in, out, err, scenario::MakeScenarioBackend);
}

}  // namespace qptwin::report
