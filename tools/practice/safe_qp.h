// A thread-safe QP handle (the seed article: "one state lock per QP; take it before a state
// change; update the state atomically; notify on change").
//
// Device is single-threaded (backend.h 5), so two locks are involved:
//  - DeviceLock: one mutex for everything that touches a Device (on the model, for every
//    Device of one Backend: they share one engine). Posts, polls and Advance hold it.
//  - each SafeQp's own state mutex: held across a whole state change (one modify, or a
//    sequence such as RESET->INIT->RTR->RTS), so no other thread's state change of that QP
//    interleaves, while other QPs' posts and modifies proceed between the steps.
//
// Contract:
//  1. Lock order: SafeQp state mutex, then DeviceLock. Posts take only DeviceLock. The only
//     code run under both locks that is not ours is StateHistory's callbacks: they must not
//     call SafeQp or DeviceLock (they would deadlock).
//  2. Errors are the verbs' errno values; Connect() from a state other than RESET: EINVAL;
//     a handle that does not exist: EINVAL from every call (the device says so).
//  3. state() is the last state this handle saw (atomic, never torn); Refresh() re-reads it
//     from the device (a device-made change such as ERR after a failed WR).
//  4. Modifies may be driven through a StateHistory (optional, one per Device, used only
//     under the DeviceLock) so they are recorded and observed.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "spec/backend.h"
#include "tools/practice/qp_connect.h"
#include "tools/practice/state_history.h"

namespace qptwin::practice {

class DeviceLock {
 public:
  // Runs fn() with the device mutex held; returns what fn returns.
  template <typename Fn>
  auto Run(Fn&& fn) -> decltype(fn()) {
    std::lock_guard<std::mutex> hold(mu_);
    return fn();
  }

 private:
  std::mutex mu_;
};

class SafeQp {
 public:
  SafeQp(Device* dev, std::shared_ptr<DeviceLock> lock, QpHandle qp,
         StateHistory* history = nullptr);

  QpHandle handle() const { return qp_; }
  QpState state() const { return state_.load(std::memory_order_acquire); }

  [[nodiscard]] int Modify(const QpAttr& attr, AttrMask mask);
  // Steps applied in order under the state mutex; stops at the first error (returned).
  [[nodiscard]] int ModifySequence(const std::vector<std::pair<QpAttr, AttrMask>>& steps);
  // RESET->INIT->RTR->RTS towards conn.remote as one state change.
  [[nodiscard]] int Connect(const StoredConnection& conn);
  [[nodiscard]] int Query(QpAttr* attr, QpInitAttr* init);
  [[nodiscard]] int Refresh();

  [[nodiscard]] int PostSend(const std::vector<SendWr>& wrs, size_t* bad_wr);
  [[nodiscard]] int PostRecv(const std::vector<RecvWr>& wrs, size_t* bad_wr);

 private:
  // With the DeviceLock held.
  int ModifyLocked(const QpAttr& attr, AttrMask mask);
  int ReadStateLocked();

  Device* dev_;
  std::shared_ptr<DeviceLock> lock_;
  QpHandle qp_;
  StateHistory* history_;
  std::mutex state_mu_;
  std::atomic<QpState> state_;
};

}  // namespace qptwin::practice
