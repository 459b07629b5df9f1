// One dedicated thread that owns the SystemC model for the whole process.
//
// The model belongs to the thread that made the first model Backend (spec/backend.h,
// contract 5), but a verbs program may call libibverbs from any thread. Every verbs call on
// a model device therefore runs here: Run() hands a function to the model thread and
// returns when it has run.
//
// Contract:
//  1. Calls are serialized: one Run() at a time, from any number of threads, in the order
//     they take the caller lock. Run() from inside a Run()'d function runs it at once.
//  2. A hand-off costs no system call while both sides are busy: the caller spins on the
//     result and the model thread spins for the next call (kSpinNs), then both sleep on a
//     futex. A program that calls verbs back to back never sleeps.
//  3. When no call arrives for `idle_period_ns`, the idle function runs on the model thread
//     (the preload lets simulated time pass there for programs that wait on an fd).
//  4. After fork() the child has no model thread: Run() returns false there and runs nothing.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>

namespace qptwin::exec {

class ModelThread {
 public:
  explicit ModelThread(std::function<void()> idle, uint64_t idle_period_ns);
  ~ModelThread();
  ModelThread(const ModelThread&) = delete;
  ModelThread& operator=(const ModelThread&) = delete;

  // Runs fn() on the model thread; false (fn not run) in a forked child.
  template <typename Fn>
  bool Run(Fn&& fn) {
    return RunRaw([](void* f) { (*static_cast<Fn*>(f))(); }, &fn);
  }
  bool OnModelThread() const { return std::this_thread::get_id() == thread_.get_id(); }

 private:
  bool RunRaw(void (*tramp)(void*), void* arg);
  void Loop();

  std::function<void()> idle_;
  uint64_t idle_period_ns_;
  int owner_pid_;
  std::mutex caller_mu_;
  void (*tramp_)(void*) = nullptr;
  void* arg_ = nullptr;
  std::atomic<uint32_t> requested_{0};
  std::atomic<uint32_t> done_{0};
  std::atomic<bool> server_sleeping_{false};
  std::atomic<bool> caller_sleeping_{false};
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace qptwin::exec
