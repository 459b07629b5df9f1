// The one place the qptwin subcommands (run, diff, report, fuzz, bench) get a Backend from
// --backend model|hw, --profile P and --device NAME, with one set of error messages.
//
// Contract:
//  1. MakeBackend returns a usable backend or null with *error set to one line naming the
//     problem and the valid choices: an unknown kind or model profile, no RDMA device, or no
//     device of the requested name (the ones found are listed).
//  2. The model gets `devices` devices (mdev0, mdev1, ...); hw opens `device`, else
//     $QPTWIN_DEVICE, else the first one (hw/verbs_backend.h).
//  3. BackendSpecFromFlags rejects --profile with --backend hw (profiles are the model's).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "spec/backend.h"
#include "tools/cli/flags.h"

namespace qptwin::cli {

struct BackendSpec {
  std::string kind = "model";  // "model" or "hw"
  std::string profile;         // model profile; "" = "rxe"
  std::string device;          // a device name ListDevices() reports; "" = the default
  int devices = 1;             // how many model devices
  bool context_cache = true;   // model: false turns the profile's context caches off
  double tick_phase = 0;       // model: where the kernel's ticks fall (ModelOptions)
  std::string retry_skip{};  // model: "untimed" (""), "stalled[:D]", "beside", "joins:K"
};

// The flags of BackendSpecFromFlags, to append to a subcommand's FlagSpec list.
std::vector<FlagSpec> BackendFlags();

// --backend, --profile and --device of `flags` over the defaults in *spec; false with
// *error set (one line, naming the valid choices) when they cannot be combined.
bool BackendSpecFromFlags(const Flags& flags, BackendSpec* spec, std::string* error);

// "unknown backend 'X' (valid: model, hw)" unless kind is model or hw; "" when it is.
std::string CheckBackendKind(const std::string& kind);

std::unique_ptr<Backend> MakeBackend(const BackendSpec& spec, std::string* error);

}  // namespace qptwin::cli
