#include "tools/scenario/scenario_cli.h"

#include <algorithm>
#include <fstream>
#include <iostream>
#include <sstream>

#include "spec/scenario/parser.h"
#include "spec/scenario/runner.h"
#include "spec/scenario/trace_json.h"
#include "spec/scenario/trace_vcd.h"
#include "spec/scenario/transcript.h"

namespace qptwin::scenario {
namespace {

constexpr char kRunUsage[] =
    "usage: qptwin run [--backend model|hw] [--profile P] [--canonical | --narrate]\n"
    "                  [--vcd OUT.vcd] [--trace-json OUT.json] FILE...  (- = stdin;\n"
    "                  --vcd/--trace-json take one FILE)";
constexpr char kDiffUsage[] =
    "usage: qptwin diff [--backend model|hw] [--profile P] --against model[:P]|hw FILE...";

struct Options {
  BackendChoice backend{"model", "", 1};
  bool has_against = false;
  BackendChoice against{"hw", "", 1};
  bool canonical = false;
  bool narrate = false;
  std::string vcd, trace_json;  // output paths ("" = none)
  std::vector<std::string> files;
};

bool ParseKind(const std::string& s, BackendChoice* out) {
  size_t colon = s.find(':');
  std::string kind = s.substr(0, colon);
  if (kind != "model" && kind != "hw") return false;
  out->kind = kind;
  if (colon != std::string::npos) out->profile = s.substr(colon + 1);
  return true;
}

// Returns false (with a message on err) for bad usage.
bool ParseArgs(const std::vector<std::string>& args, bool diff, Options* o, std::ostream& err) {
  const char* usage = diff ? kDiffUsage : kRunUsage;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    auto value = [&](std::string* v) {
      if (i + 1 >= args.size()) return false;
      *v = args[++i];
      return true;
    };
    std::string v;
    if (a == "--backend") {
      if (!value(&v) || !ParseKind(v, &o->backend)) {
        err << "--backend needs model or hw\n" << usage << "\n";
        return false;
      }
    } else if (a == "--profile") {
      if (!value(&o->backend.profile)) {
        err << "--profile needs a name\n" << usage << "\n";
        return false;
      }
    } else if (diff && a == "--against") {
      if (!value(&v) || !ParseKind(v, &o->against)) {
        err << "--against needs model[:PROFILE] or hw\n" << usage << "\n";
        return false;
      }
      o->has_against = true;
    } else if (!diff && a == "--canonical") {
      o->canonical = true;
    } else if (!diff && a == "--narrate") {
      o->narrate = true;
    } else if (!diff && (a == "--vcd" || a == "--trace-json")) {
      if (!value(a == "--vcd" ? &o->vcd : &o->trace_json)) {
        err << a << " needs an output file\n" << usage << "\n";
        return false;
      }
    } else if (a.size() > 1 && a[0] == '-') {
      err << "unknown option " << a << "\n" << usage << "\n";
      return false;
    } else {
      o->files.push_back(a);
    }
  }
  if (o->files.empty() || (diff && !o->has_against)) {
    err << usage << "\n";
    return false;
  }
  if (o->canonical && o->narrate) {
    err << "--canonical and --narrate exclude each other\n" << usage << "\n";
    return false;
  }
  if ((!o->vcd.empty() || !o->trace_json.empty()) && o->files.size() != 1) {
    err << "--vcd and --trace-json trace one scenario FILE\n" << usage << "\n";
    return false;
  }
  return true;
}

bool ReadFile(const std::string& path, std::istream& in, std::string* text) {
  std::ostringstream ss;
  if (path == "-") {
    ss << in.rdbuf();
  } else {
    std::ifstream f(path);
    if (!f) return false;
    ss << f.rdbuf();
  }
  *text = ss.str();
  return true;
}

bool WriteFile(const std::string& path, const std::string& text, std::ostream& err) {
  std::ofstream f(path, std::ios::binary);
  if (f) f << text;
  if (!f) err << path << ": cannot write the file\n";
  return static_cast<bool>(f);
}

// Reads and parses `path`; on failure prints why and returns false.
bool Load(const std::string& path, std::istream& in, Scenario* sc, std::ostream& err) {
  std::string text;
  if (!ReadFile(path, in, &text)) {
    err << path << ": cannot read the file\n";
    return false;
  }
  ParseError pe;
  if (!ParseScenario(text, sc, &pe)) {
    err << path << ":" << pe.line << ": " << pe.message << "\n";
    return false;
  }
  return true;
}

// The backend for one scenario: the flag's profile, else the first device line's, else rxe.
std::unique_ptr<Backend> Make(const BackendFactory& make, BackendChoice choice,
                              const Scenario& sc, std::ostream& err) {
  if (choice.profile.empty()) choice.profile = sc.first_profile;
  if (choice.profile.empty()) choice.profile = "rxe";
  choice.devices = std::max(1, sc.device_lines);
  std::string why;
  std::unique_ptr<Backend> backend = make(choice, &why);
  if (!backend) err << "cannot use backend " << choice.kind << ": " << why << "\n";
  return backend;
}

std::string Label(const BackendChoice& c) {
  return c.kind == "hw" ? std::string("hw") : c.kind + "/" + (c.profile.empty() ? "rxe" : c.profile);
}

}  // namespace

int LoadAndRun(const std::string& path, std::istream& in, const BackendChoice& choice,
               const BackendFactory& make, std::ostream& err, ScenarioRun* out) {
  if (!Load(path, in, &out->scenario, err)) return 2;
  std::unique_ptr<Backend> backend = Make(make, choice, out->scenario, err);
  if (!backend) return 2;
  BackendChoice used = choice;
  if (used.profile.empty()) used.profile = out->scenario.first_profile;
  out->backend_label = Label(used);
  out->clock = backend->Kind() == "model" ? "simulated" : "real";
  out->result = Runner(backend.get()).Run(out->scenario);
  return 0;
}

int RunScenarios(const std::vector<std::string>& args, std::istream& in, std::ostream& out,
                 std::ostream& err, const BackendFactory& make) {
  Options o;
  if (!ParseArgs(args, /*diff=*/false, &o, err)) return 2;
  int exit_code = 0;
  for (const std::string& path : o.files) {
    Scenario sc;
    if (!Load(path, in, &sc, err)) {
      exit_code = 2;
      continue;
    }
    std::unique_ptr<Backend> backend = Make(make, o.backend, sc, err);
    if (!backend) return 2;
    RunResult result = Runner(backend.get()).Run(sc);
    const std::string clock = backend->Kind() == "model" ? "simulated" : "real";
    if (o.files.size() > 1) out << "== " << path << "\n";
    if (o.canonical) {
      out << CanonicalTranscript(result);
    } else {
      out << "# " << path << " on " << Label(o.backend) << "\n";
      out << NarratedTranscript(result, clock, o.narrate);
    }
    if (!o.vcd.empty() && !WriteFile(o.vcd, RenderVcd(result, path), err)) return 2;
    if (!o.trace_json.empty() &&
        !WriteFile(o.trace_json, RenderTraceJson(result, path, Label(o.backend), clock), err)) {
      return 2;
    }
    if (result.FailureCount() > 0) {
      std::istringstream lines(FailureReport(result));
      for (std::string line; std::getline(lines, line);) err << path << ": " << line << "\n";
      exit_code = std::max(exit_code, 1);
    }
  }
  return exit_code;
}

int DiffScenarios(const std::vector<std::string>& args, std::istream& in, std::ostream& out,
                  std::ostream& err, const BackendFactory& make) {
  Options o;
  if (!ParseArgs(args, /*diff=*/true, &o, err)) return 2;
  int exit_code = 0;
  for (const std::string& path : o.files) {
    Scenario sc;
    if (!Load(path, in, &sc, err)) {
      exit_code = 2;
      continue;
    }
    std::string transcripts[2];
    const BackendChoice* choices[2] = {&o.backend, &o.against};
    for (int side = 0; side < 2; ++side) {
      std::unique_ptr<Backend> backend = Make(make, *choices[side], sc, err);
      if (!backend) return 2;
      transcripts[side] = CanonicalTranscript(Runner(backend.get()).Run(sc));
    }
    std::istringstream a(transcripts[0]), b(transcripts[1]);
    std::string la, lb;
    int n = 0;
    bool more_a, more_b;
    for (;;) {
      more_a = static_cast<bool>(std::getline(a, la));
      more_b = static_cast<bool>(std::getline(b, lb));
      ++n;
      if (!more_a || !more_b || la != lb) break;
    }
    if (!more_a && !more_b) {
      out << path << ": same (" << n - 1 << " lines)\n";
      continue;
    }
    exit_code = std::max(exit_code, 1);
    out << path << ": first difference at transcript line " << n << "\n"
        << "  " << Label(o.backend) << ": " << (more_a ? la : "(end)") << "\n"
        << "  " << Label(o.against) << ": " << (more_b ? lb : "(end)") << "\n";
  }
  return exit_code;
}

}  // namespace qptwin::scenario
