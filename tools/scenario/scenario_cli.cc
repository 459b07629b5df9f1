#include "tools/scenario/scenario_cli.h"

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <sstream>

#include "model/model_backend.h"
#include "spec/differential/canonical.h"
#include "spec/scenario/parser.h"
#include "spec/scenario/runner.h"
#include "spec/scenario/stream_run.h"
#include "spec/scenario/trace_json.h"
#include "spec/scenario/trace_vcd.h"
#include "spec/scenario/transcript.h"
#include "tools/cli/backend_factory.h"
#include "tools/cli/cli_io.h"
#include "tools/cli/escape.h"
#include "tools/cli/flags.h"

namespace qptwin::scenario {
namespace {

constexpr char kRunUsage[] =
    "usage: qptwin run [--backend model|hw] [--profile P] [--device D] [--tick-phase F]\n"
    "                  [--host-us T] [--retry-skip H] [--canonical | --compared | --narrate]\n"
    "                  [--vcd OUT.vcd] [--trace-json OUT.json] [--dma] [--net] FILE...\n"
    "  runs each .qps FILE (- = stdin; spec/scenario/FORMAT.md) and prints its transcript\n"
    "  (--compared: the form `qptwin diff` and the differential fuzzer compare);\n"
    "  --vcd/--trace-json trace one FILE. --dma (model): a '# dma' line for every DMA of\n"
    "  the model's devices and every doorbell they are rung with (TLM-2.0 transactions on\n"
    "  its SystemC platform), before the result of the step it happened in: time, device,\n"
    "  QP, what, bytes. --net (model): a '# net' line for every message between two devices\n"
    "  as it reaches the far device's network port on that platform: time, from -> to, QPs,\n"
    "  kind, PSN, packets, payload and wire bytes. --tick-phase F (model): its host kernel's ticks (rxe: 4 ms\n"
    "  jiffies) fall F of a tick later (0 <= F < 1, default 0): where a real program\n"
    "  starts in the tick is arbitrary, and timer races follow it. --host-us T (model):\n"
    "  every command but advance takes T microseconds of the host's time first, as on a\n"
    "  slow host (rxe in an emulated VM: 200-3000 us), while the device's timers run.\n"
    "  --retry-skip H (model): a retry from behind a WQE's first PSN makes rxe step ~2^24\n"
    "  packets (~0.9 s); the host meanwhile: untimed (default: the loop takes no time),\n"
    "  stalled (it runs on the program's CPU; stalled:D: the program runs again D us after\n"
    "  it ends, 1 <= D <= 100000), beside (on another CPU) or joins:K (beside until the\n"
    "  program's K-th wake-up from an advance, a poll's or an event's wait that waited, or\n"
    "  a --host-us time, 1 <= K <= 64, then on its CPU).\n"
    "  Exit 0: every expectation held, 1: one failed,\n"
    "  2: bad usage, an unreadable or malformed FILE, or no such backend.\n";
constexpr char kDiffUsage[] =
    "usage: qptwin diff [--backend model|hw] [--profile P] [--device D] [--tick-phase F]\n"
    "                   [--host-us T] [--retry-skip H] --against model[:P]|hw FILE...\n"
    "  runs each .qps FILE on both backends and compares the canonical transcripts.\n"
    "  The model runs first: a FILE its profile says would crash the real device (rxe 6.1\n"
    "  oopses on an invalidate of an unbound type 2 window) is not run on hw (exit 2).\n"
    "  Exit 0: identical, 1: a difference (the first one is printed), 2: bad input.\n";

struct Options {
  BackendChoice backend{"model", "", 1, ""};
  bool has_against = false;
  BackendChoice against{"hw", "", 1, ""};
  bool canonical = false;
  bool compared = false;
  bool narrate = false;
  bool dma = false;
  bool net = false;
  std::string vcd, trace_json;  // output paths ("" = none)
  std::vector<std::string> files;
};

// "qptwin: <text>" with control bytes escaped; returns 2.
int Problem(std::ostream& err, const std::string& text) { return cli::BadInput(err, text); }

RunOptions OptionsFor(const BackendChoice& choice) {
  RunOptions options;
  options.host_ns = choice.host_ns;
  return options;
}

void ToChoice(const cli::BackendSpec& spec, BackendChoice* out) {
  out->kind = spec.kind;
  out->profile = spec.profile;
  out->device = spec.device;
  out->tick_phase = spec.tick_phase;
  out->retry_skip = spec.retry_skip;
}

// --against model[:PROFILE] | hw
bool ParseAgainst(const std::string& s, BackendChoice* out, std::string* error) {
  const size_t colon = s.find(':');
  out->kind = s.substr(0, colon);
  if (std::string why = cli::CheckBackendKind(out->kind); !why.empty()) {
    *error = "--against: " + why;
    return false;
  }
  if (colon != std::string::npos) {
    if (out->kind == "hw") {
      *error = "--against hw takes no profile (valid: model[:PROFILE], hw)";
      return false;
    }
    out->profile = s.substr(colon + 1);
  }
  return true;
}

// 0 to go on; else the exit code, the usage or one line printed.
int ParseArgs(const std::vector<std::string>& args, bool diff, Options* o, std::ostream& out,
              std::ostream& err) {
  const char* name = diff ? "diff" : "run";
  std::vector<cli::FlagSpec> specs = cli::BackendFlags();
  specs.push_back({"--host-us"});
  if (diff) {
    specs.push_back({"--against"});
  } else {
    specs.insert(specs.end(), {{"--canonical", false}, {"--compared", false}, {"--narrate", false}, {"--vcd"},
                               {"--trace-json"}, {"--dma", false}, {"--net", false}});
  }
  std::string error;
  auto flags = cli::ParseFlags(args, specs, &error, cli::kAnyNumber);
  if (!flags) return Problem(err, std::string(name) + ": " + error);
  if (flags->help) {
    out << (diff ? kDiffUsage : kRunUsage);
    return -1;
  }
  cli::BackendSpec spec;
  if (!cli::BackendSpecFromFlags(*flags, &spec, &error)) {
    return Problem(err, std::string(name) + ": " + error);
  }
  ToChoice(spec, &o->backend);
  if (flags->Has("--host-us")) {
    const std::string s = flags->Get("--host-us");
    char* end = nullptr;
    const double v = std::strtod(s.c_str(), &end);
    if (s.empty() || end != s.c_str() + s.size() || !(v >= 0 && v <= 100000)) {
      return Problem(err, std::string(name) + ": --host-us '" + cli::EscapeControl(s) +
                              "' is not a host time per command (valid: 0 <= T <= 100000 "
                              "microseconds)");
    }
    if (o->backend.kind == "hw") {
      return Problem(err, std::string(name) +
                              ": --host-us is for --backend model (a real host spends its own)");
    }
    o->backend.host_ns = static_cast<uint64_t>(v * 1000.0 + 0.5);
  }
  if (diff && flags->Has("--against")) {
    if (!ParseAgainst(flags->Get("--against"), &o->against, &error)) {
      return Problem(err, std::string(name) + ": " + error);
    }
    o->against.device = spec.device;
    o->has_against = true;
  }
  o->canonical = flags->Has("--canonical");
  o->compared = flags->Has("--compared");
  o->narrate = flags->Has("--narrate");
  o->dma = flags->Has("--dma");
  o->net = flags->Has("--net");
  o->vcd = flags->Get("--vcd");
  o->trace_json = flags->Get("--trace-json");
  o->files = flags->positional();
  if (o->files.empty()) {
    return Problem(err, std::string(name) + ": no scenario FILE given (see qptwin " + name +
                            " --help)");
  }
  if (diff && !o->has_against) {
    return Problem(err, "diff: missing --against (valid: model[:PROFILE], hw)");
  }
  if (int(o->canonical) + int(o->compared) + int(o->narrate) > 1) {
    return Problem(err, "run: --canonical, --compared and --narrate exclude each other");
  }
  if (o->dma && o->backend.kind != "model") {
    return Problem(err, "run: --dma shows the model's DMA: it needs --backend model");
  }
  if (o->dma && (o->canonical || o->compared)) {
    return Problem(err, "run: --dma adds lines to the transcript: not with --canonical or --compared");
  }
  if (o->net && o->backend.kind != "model") {
    return Problem(err, "run: --net shows the model's messages: it needs --backend model");
  }
  if (o->net && (o->canonical || o->compared)) {
    return Problem(err, "run: --net adds lines to the transcript: not with --canonical or --compared");
  }
  if ((!o->vcd.empty() || !o->trace_json.empty()) && o->files.size() != 1) {
    return Problem(err, "run: --vcd and --trace-json trace one scenario FILE");
  }
  return 0;
}

// Reads and parses `path`; on failure prints why (one line) and returns false.
bool Load(const char* name, const std::string& path, std::istream& in, Scenario* sc,
          std::ostream& err) {
  std::string text, error;
  if (!cli::ReadInputFile(path, in, &text, &error)) {
    Problem(err, std::string(name) + ": " + error);
    return false;
  }
  ParseError pe;
  if (!ParseScenario(text, sc, &pe)) {
    Problem(err, std::string(name) + ": " + path + ":" + std::to_string(pe.line) + ": " +
                     pe.message);
    return false;
  }
  return true;
}

// The backend for one scenario: the flag's profile, else the first device line's, else rxe.
std::unique_ptr<Backend> Make(const char* name, const BackendFactory& make,
                              BackendChoice choice, const Scenario& sc, std::ostream& err) {
  if (choice.kind == "model" && choice.profile.empty()) choice.profile = sc.first_profile;
  if (choice.kind == "model" && choice.profile.empty()) choice.profile = "rxe";
  choice.devices = std::max(1, sc.device_lines);
  std::string why;
  std::unique_ptr<Backend> backend = make(choice, &why);
  if (!backend) Problem(err, std::string(name) + ": " + why);
  return backend;
}

std::string Label(const BackendChoice& c) {
  return c.kind == "hw" ? std::string("hw") : c.kind + "/" + (c.profile.empty() ? "rxe" : c.profile);
}

// `qptwin run` of one FILE without --vcd/--trace-json, streamed (spec/scenario/stream_run.h):
// a file is read and scanned for syntax first, "-" runs line by line as it arrives.
// 0, 1 (an expectation failed), 2 (unreadable, syntax), 3 (no backend).
int StreamOne(const std::string& path, std::istream& in, const Options& o,
              const BackendFactory& make, std::ostream& out, std::ostream& err) {
  std::string text, error;
  Scenario header;
  ParseError pe;
  if (path != "-") {
    if (!cli::ReadInputFile(path, in, &text, &error)) return Problem(err, "run: " + error);
    if (!ScanHeader(text, &header, &pe)) {
      return Problem(err, "run: " + path + ":" + std::to_string(pe.line) + ": " + pe.message);
    }
  }
  ScenarioStream stream = path == "-" ? ScenarioStream(&in) : ScenarioStream(text);
  if (o.files.size() > 1) out << "== " << cli::EscapeControl(path) << "\n";
  if (!o.canonical) out << "# " << cli::EscapeControl(path) << " on " << Label(o.backend) << "\n";
  StreamOptions options{o.canonical, o.narrate, o.backend.host_ns};
  StreamResult r = StreamRun(
      &stream,
      [&](const Scenario& h) { return Make("run", make, o.backend, path == "-" ? h : header, err); },
      options, out,
      [&](const std::string& line) {
        err << "qptwin: run: " << cli::EscapeControl(path + ": " + line) << "\n";
      });
  if (!r.backend_ok) return 3;
  if (const int e = path == "-" ? cli::StreamErrno(in) : 0) {  // stdin a directory, EIO
    return Problem(err, "run: cannot read standard input: " + cli::ErrnoText(e));
  }
  if (!r.syntax_ok) {
    out.flush();
    return Problem(err, "run: " + path + ":" + std::to_string(r.error.line) + ": " + r.error.message);
  }
  return r.failures > 0 ? 1 : 0;
}

}  // namespace

int LoadAndRun(const std::string& path, std::istream& in, const BackendChoice& choice,
               const BackendFactory& make, std::ostream& err, ScenarioRun* out) {
  if (!Load("report", path, in, &out->scenario, err)) return 2;
  std::unique_ptr<Backend> backend = Make("report", make, choice, out->scenario, err);
  if (!backend) return 2;
  BackendChoice used = choice;
  if (used.profile.empty()) used.profile = out->scenario.first_profile;
  out->backend_label = Label(used);
  out->clock = backend->Kind() == "model" ? "simulated" : "real";
  out->result = Runner(backend.get()).Run(out->scenario, OptionsFor(choice));
  return 0;
}

int RunScenarios(const std::vector<std::string>& args, std::istream& in, std::ostream& out,
                 std::ostream& err, const BackendFactory& make) {
  Options o;
  if (int rc = ParseArgs(args, /*diff=*/false, &o, out, err)) return rc < 0 ? 0 : rc;
  if (o.dma) {
    const bool on = model::SetModelDmaObserver([&out](const model::DmaTransfer& t) {
      char line[160];
      std::snprintf(line, sizeof line, "# dma %12.3f us  mdev%d  qp 0x%-6x %-13s %-5s %llu B%s\n",
                    static_cast<double>(t.time_ns) / 1000.0, t.slot, t.qpn, t.kind,
                    t.write ? "write" : "read", static_cast<unsigned long long>(t.bytes),
                    t.ok ? "" : "  FAILED");
      out << line;
    });
    if (!on) return Problem(err, "run: --dma: the model's SystemC platform is not available");
  }
  if (o.net) {
    const bool on = model::SetModelNetObserver([&out](const model::NetTransfer& t) {
      char line[200];
      std::snprintf(line, sizeof line,
                    "# net %12.3f us  mdev%d -> mdev%d  qp 0x%-6x -> 0x%-6x %-11.*s psn %u  "
                    "%u pkt  %llu B  wire %llu B\n",
                    static_cast<double>(t.arrive_ns) / 1000.0, t.src_slot, t.dst_slot,
                    t.src_qpn, t.dst_qpn, static_cast<int>(t.kind.size()), t.kind.data(), t.psn,
                    t.packets, static_cast<unsigned long long>(t.payload_bytes),
                    static_cast<unsigned long long>(t.wire_bytes));
      out << line;
    });
    if (!on) return Problem(err, "run: --net: the model's SystemC platform is not available");
  }
  struct ObserverOff {
    bool dma, net;
    ~ObserverOff() {
      if (dma) (void)model::SetModelDmaObserver(nullptr);
      if (net) (void)model::SetModelNetObserver(nullptr);
    }
  } observer_off{o.dma, o.net};
  int exit_code = 0;
  for (const std::string& path : o.files) {
    // Streamed (bounded memory, stream_run.h) unless a trace or the compared form, which
    // sorts within windows of the whole transcript, is asked for.
    if (o.vcd.empty() && o.trace_json.empty() && !o.compared) {
      int rc = StreamOne(path, in, o, make, out, err);
      if (rc == 3) return 2;  // no backend
      exit_code = std::max(exit_code, rc);
      continue;
    }
    Scenario sc;
    if (!Load("run", path, in, &sc, err)) {
      exit_code = 2;
      continue;
    }
    std::unique_ptr<Backend> backend = Make("run", make, o.backend, sc, err);
    if (!backend) return 2;
    RunResult result = Runner(backend.get()).Run(sc, OptionsFor(o.backend));
    const std::string clock = backend->Kind() == "model" ? "simulated" : "real";
    if (o.files.size() > 1) out << "== " << cli::EscapeControl(path) << "\n";
    if (o.compared) {
      out << differential::ComparableTranscript(result);
    } else if (o.canonical) {
      out << CanonicalTranscript(result);
    } else {
      out << "# " << cli::EscapeControl(path) << " on " << Label(o.backend) << "\n";
      out << NarratedTranscript(result, clock, o.narrate);
    }
    std::string error;
    if (!o.vcd.empty() && !cli::WriteOutputFile(o.vcd, RenderVcd(result, path), out, &error)) {
      return Problem(err, "run: --vcd: " + error);
    }
    if (!o.trace_json.empty() &&
        !cli::WriteOutputFile(o.trace_json,
                              RenderTraceJson(result, path, Label(o.backend), clock), out,
                              &error)) {
      return Problem(err, "run: --trace-json: " + error);
    }
    if (result.FailureCount() > 0) {
      std::istringstream lines(FailureReport(result));
      for (std::string line; std::getline(lines, line);) {
        err << "qptwin: run: " << cli::EscapeControl(path + ": " + line) << "\n";
      }
      exit_code = std::max(exit_code, 1);
    }
  }
  return exit_code;
}

int DiffScenarios(const std::vector<std::string>& args, std::istream& in, std::ostream& out,
                  std::ostream& err, const BackendFactory& make) {
  Options o;
  if (int rc = ParseArgs(args, /*diff=*/true, &o, out, err)) return rc < 0 ? 0 : rc;
  int exit_code = 0;
  for (const std::string& path : o.files) {
    Scenario sc;
    if (!Load("diff", path, in, &sc, err)) {
      exit_code = 2;
      continue;
    }
    std::string transcripts[2];
    const BackendChoice* choices[2] = {&o.backend, &o.against};
    // A model side runs first: when its profile says the scenario would crash the real
    // device on the other side (Backend::DeviceFaults: rxe 6.1 oopses on some invalidates),
    // the device is spared and the file is bad input.
    const bool hw_first = choices[0]->kind == "hw" && choices[1]->kind != "hw";
    std::string fault;
    for (int i = 0; i < 2 && fault.empty(); ++i) {
      const int side = hw_first ? 1 - i : i;
      std::unique_ptr<Backend> backend = Make("diff", make, *choices[side], sc, err);
      if (!backend) return 2;
      // The compared form: where rxe is nondeterministic, a documented window is sorted
      // (spec/differential/canonical.h), as the differential fuzzer compares.
      transcripts[side] = differential::ComparableTranscript(
          Runner(backend.get()).Run(sc, OptionsFor(*choices[side])));
      const std::vector<std::string> faults = backend->DeviceFaults();
      if (i == 0 && !faults.empty() && choices[1 - side]->kind == "hw") {
        fault = Label(*choices[side]) + " says it would crash the device: " + faults.front();
      }
    }
    if (!fault.empty()) {
      Problem(err, "diff: " + path + ": not run on hw: " + fault +
                       " (qptwin run --backend hw runs it anyway)");
      exit_code = 2;
      continue;
    }
    const auto d = differential::FirstDifference(transcripts[0], transcripts[1]);
    if (!d) {
      size_t lines = 0;  // transcript lines, the windows' comments aside
      std::istringstream t(transcripts[0]);
      for (std::string l; std::getline(t, l);) lines += l.rfind("# ", 0) != 0;
      out << cli::EscapeControl(path) << ": same (" << lines << " lines)\n";
      continue;
    }
    exit_code = std::max(exit_code, 1);
    out << cli::EscapeControl(path) << ": first difference at transcript line " << d->line << "\n"
        << "  " << Label(o.backend) << ": " << d->a << "\n"
        << "  " << Label(o.against) << ": " << d->b << "\n";
  }
  return exit_code;
}

}  // namespace qptwin::scenario
