#include "tools/cli/backend_factory.h"

#include <algorithm>
#include <cstdlib>

#include "hw/verbs_backend.h"
#include "model/model_backend.h"
#include "tools/cli/escape.h"

namespace qptwin::cli {
namespace {

std::string Join(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
  return out.empty() ? "none" : out;
}

}  // namespace

std::vector<FlagSpec> BackendFlags() {
  return {{"--backend"}, {"--profile"}, {"--device"}, {"--tick-phase"}, {"--retry-skip"}};
}

std::string CheckBackendKind(const std::string& kind) {
  if (kind == "model" || kind == "hw") return {};
  return "unknown backend '" + EscapeControl(kind) + "' (valid: model, hw)";
}

bool BackendSpecFromFlags(const Flags& flags, BackendSpec* spec, std::string* error) {
  spec->kind = flags.Get("--backend", spec->kind);
  if (std::string why = CheckBackendKind(spec->kind); !why.empty()) {
    *error = why;
    return false;
  }
  if (flags.Has("--profile")) {
    if (spec->kind == "hw") {
      *error = "--profile is for --backend model (valid: model profiles " +
               Join(model::ProfileNames()) + "); a device is chosen with --device";
      return false;
    }
    spec->profile = flags.Get("--profile");
  }
  spec->device = flags.Get("--device", spec->device);
  if (flags.Has("--tick-phase")) {
    const std::string s = flags.Get("--tick-phase");
    char* end = nullptr;
    const double v = std::strtod(s.c_str(), &end);
    if (s.empty() || end != s.c_str() + s.size() || !(v >= 0 && v < 1)) {
      *error = "--tick-phase '" + EscapeControl(s) +
               "' is not a fraction of a tick (valid: 0 <= F < 1, e.g. 0.375)";
      return false;
    }
    if (spec->kind == "hw") {
      *error = "--tick-phase is for --backend model (where its kernel's ticks fall)";
      return false;
    }
    spec->tick_phase = v;
  }
  if (flags.Has("--retry-skip")) {
    const std::string s = flags.Get("--retry-skip");
    model::ModelOptions check;
    if (!model::ParseRetrySkip(s, &check)) {
      *error = "--retry-skip '" + EscapeControl(s) + "' is not a host (valid: untimed, stalled, "
               "stalled:D with 1 <= D <= 100000 us, beside, joins:K with 1 <= K <= 64)";
      return false;
    }
    if (spec->kind == "hw") {
      *error = "--retry-skip is for --backend model (what the host does during rxe's skip loop)";
      return false;
    }
    spec->retry_skip = s;
  }
  return true;
}

std::unique_ptr<Backend> MakeBackend(const BackendSpec& spec, std::string* error) {
  if (std::string why = CheckBackendKind(spec.kind); !why.empty()) {
    *error = why;
    return nullptr;
  }
  std::unique_ptr<Backend> backend;
  if (spec.kind == "model") {
    model::ModelOptions opts;
    opts.profile = spec.profile.empty() ? "rxe" : spec.profile;
    opts.devices = std::max(1, spec.devices);
    opts.context_cache = spec.context_cache;
    opts.tick_phase = spec.tick_phase;
    (void)model::ParseRetrySkip(spec.retry_skip, &opts);  // "": untimed
    backend = model::MakeModelBackend(opts);
    if (!backend) {
      *error = "unknown model profile '" + EscapeControl(opts.profile) +
               "' (valid: " + Join(model::ProfileNames()) + ")";
      return nullptr;
    }
  } else {
    hw::VerbsOptions opts;
    opts.device = spec.device;
    backend = hw::MakeVerbsBackend(opts);
  }
  const std::vector<std::string> found = backend->ListDevices();
  if (found.empty()) {
    *error = "--backend hw: no RDMA device found (load Soft-RoCE with `rdma link add rxe0 type "
             "rxe netdev IFACE`, or run inside tools/rxe-vm/run)";
    return nullptr;
  }
  std::string wanted = spec.device;
  const char* env = std::getenv("QPTWIN_DEVICE");
  if (wanted.empty() && spec.kind == "hw" && env != nullptr) wanted = env;
  if (!wanted.empty() && std::find(found.begin(), found.end(), wanted) == found.end()) {
    *error = "--backend " + spec.kind + ": no device '" + EscapeControl(wanted) +
             "' (found: " + Join(found) + ")";
    return nullptr;
  }
  return backend;
}

}  // namespace qptwin::cli
