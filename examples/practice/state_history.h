// State tracking as the seed article advises ("record every QP state change; notify on
// change"): a wrapper that drives modifies, records each transition it drives with its
// cause, merges the device's own record (Device::QpHistory: error transitions the device
// made by itself, e.g. "remote access violation"), and calls registered callbacks.
//
// Contract:
//  1. Modify() returns ModifyQp's errno. A failed modify records nothing and calls nothing
//     (the QP is unchanged, backend.h 3).
//  2. Each recorded change is {Backend::NowNs, from, to, cause}; `from` is the state the QP
//     was really in (a device-made change is merged first), `to` the state after the call.
//  3. Device entries that mirror a modify this wrapper drove are not duplicated; the others
//     (cause other than "modify") are merged in the order the device recorded them, before
//     the wrapper's next own entry. Sync() merges without modifying. A device without a
//     history (EOPNOTSUPP) only gets the wrapper's own entries.
//  4. Callbacks run after each recorded change, in registration order, on the calling
//     thread; they may call History() but not Modify()/Sync() of the same wrapper.
//  5. Not thread-safe (as Device itself, backend.h 5); SafeQp serialises when needed.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "spec/backend.h"

namespace qptwin::practice {

class StateHistory {
 public:
  using Callback = std::function<void(QpHandle qp, const StateChange& change)>;

  StateHistory(Backend* backend, Device* dev) : backend_(backend), dev_(dev) {}

  [[nodiscard]] int Modify(QpHandle qp, const QpAttr& attr, AttrMask mask,
                           const std::string& cause = "modify");
  // Merges the device's record of `qp` (changes the device made on its own).
  [[nodiscard]] int Sync(QpHandle qp);
  // The merged record of `qp`, oldest first (empty for a QP never seen).
  std::vector<StateChange> History(QpHandle qp) const;

  // Returns an id for RemoveCallback.
  int OnChange(Callback cb);
  void RemoveCallback(int id);

 private:
  struct Track {
    std::vector<StateChange> merged;
    size_t device_seen = 0;  // entries of Device::QpHistory already merged
    // Modify entries the device will also report: (from, to) pairs to skip once.
    std::vector<std::pair<QpState, QpState>> expected_echo;
  };
  void Record(QpHandle qp, Track* t, const StateChange& change);

  Backend* backend_;
  Device* dev_;
  std::map<uint32_t, Track> tracks_;
  std::map<int, Callback> callbacks_;
  int next_callback_id_ = 1;
};

}  // namespace qptwin::practice
