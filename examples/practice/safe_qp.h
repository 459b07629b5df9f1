// A thread-safe QP handle (the seed article: "one state lock per QP; take it before a state
// change; update the state atomically; notify on change").
//
// A Device belongs to one thread (backend.h 5; the model answers EPERM elsewhere), so two
// locks are involved:
//  - DeviceLock: every call that touches a Device (on the model, every Device of one
//    Backend: they share one engine) runs on the DeviceLock's owner thread, one at a time.
//    Another thread's Run() hands the call over and waits; the owner runs handed-over calls
//    whenever it calls Run() itself or ServeUntil(). Posts, polls and Advance go through it.
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
//  5. The DeviceLock is created on the thread that made the Backend (its owner). A thread
//     that waits for others' SafeQp calls to finish (join) must be serving: the owner calls
//     ServeUntil(all done) before joining.
#pragma once

#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "spec/backend.h"
#include "examples/practice/qp_connect.h"
#include "examples/practice/state_history.h"

namespace qptwin::practice {

class DeviceLock {
 public:
  DeviceLock() : owner_(std::this_thread::get_id()) {}

  // Runs fn() on the owner thread, no other Run() at the same time; returns what fn returns.
  template <typename Fn>
  auto Run(Fn&& fn) -> decltype(fn()) {
    using R = decltype(fn());
    if (std::this_thread::get_id() == owner_) {
      ServePending();
      std::lock_guard<std::mutex> hold(mu_);
      return fn();
    }
    std::packaged_task<R()> task(std::forward<Fn>(fn));
    std::future<R> result = task.get_future();
    {
      std::lock_guard<std::mutex> q(queue_mu_);
      queue_.emplace_back([&task] { task(); });
    }
    queue_cv_.notify_all();
    return result.get();
  }

  // Owner thread only: runs handed-over calls until done() is true.
  void ServeUntil(const std::function<bool()>& done);

 private:
  void ServePending();

  const std::thread::id owner_;
  std::mutex mu_;  // held while a call runs
  std::mutex queue_mu_;
  std::condition_variable queue_cv_;
  std::deque<std::function<void()>> queue_;
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
