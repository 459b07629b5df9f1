// The one thread that owns the SystemC model for the whole process.
//
// The model belongs to the thread that made the first model Backend (spec/backend.h,
// contract 5), but a verbs program may call libibverbs from any thread. Every verbs call on
// a model device runs on the model thread: Run() runs a function there and returns when it
// has run. Two modes:
//   kCaller    the model thread is the thread that made the ModelThread (the preload: the
//              program's first thread to call libibverbs). Its calls run at once, with no
//              hand-off; a call from another thread waits until the owner next enters Run()
//              (any verbs call of the owner), which runs it first. Measured: a hand-off
//              between two spinning threads on this loaded 2-core machine cost ~140 us per
//              call, a direct call well under 1 us (tools/exec/README.md).
//   kDedicated a thread of its own; every call is a hand-off (spin kSpinNs, then futex).
//              Calls from any thread progress independently, and when no call arrives for
//              `idle_period_ns` the idle function runs there (simulated time passes for a
//              program asleep in poll() on a channel fd).
//
// Contract:
//  1. Calls are serialized: one Run() at a time, from any number of threads. Run() from
//     inside a Run()'d function runs it at once.
//  2. kCaller: a program whose owner thread never calls verbs again while another thread
//     waits in a verbs call waits for ever; such programs use kDedicated
//     (QPTWIN_MODEL_THREAD=dedicated).
//  3. The idle function runs only in kDedicated mode.
//  4. fork(): a child forked by the model thread itself (kCaller) keeps using its copy of
//     the model. In any other child the model thread does not exist: Run() runs fn() on the
//     calling thread, where the model refuses every call with EPERM (spec/backend.h
//     contract 5), and returns false.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>

namespace qptwin::exec {

class ModelThread {
 public:
  enum class Mode { kCaller, kDedicated };
  ModelThread(Mode mode, std::function<void()> idle, uint64_t idle_period_ns);
  ~ModelThread();
  ModelThread(const ModelThread&) = delete;
  ModelThread& operator=(const ModelThread&) = delete;

  // Runs fn() on the model thread; false in a forked child without one (contract 4).
  template <typename Fn>
  bool Run(Fn&& fn) {
    return RunRaw([](void* f) { (*static_cast<Fn*>(f))(); }, &fn);
  }
  bool OnModelThread() const { return std::this_thread::get_id() == owner_; }
  // kDedicated: how long no call must come before the idle function runs (any thread).
  void SetIdlePeriod(uint64_t ns) { idle_period_ns_.store(ns, std::memory_order_relaxed); }

 private:
  struct Request {
    void (*tramp)(void*);
    void* arg;
    bool done = false;
  };
  bool RunRaw(void (*tramp)(void*), void* arg);
  bool RunDedicated(void (*tramp)(void*), void* arg);
  void DrainForeign();  // kCaller: runs the other threads' waiting calls
  static void PrepareFork();
  static void ChildAfterFork();
  bool forking_on_owner_ = false;
  void Loop();

  Mode mode_;
  std::thread::id owner_;
  bool in_call_ = false;  // kCaller: the owner is inside Run()
  std::mutex foreign_mu_;
  std::condition_variable foreign_done_;
  std::deque<Request*> foreign_;
  std::atomic<int> foreign_count_{0};

  std::function<void()> idle_;
  std::atomic<uint64_t> idle_period_ns_;
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
