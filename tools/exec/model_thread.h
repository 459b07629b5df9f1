// The one thread that owns the SystemC model for the whole process.
//
// The model belongs to the thread that made the first model Backend (spec/backend.h,
// contract 5), but a verbs program may call libibverbs from any thread. Every verbs call on
// a model device runs on the model thread: Run() runs a function there and returns when it
// has run. Two modes:
//   kCaller    the model thread is the thread that made the ModelThread (the preload: the
//              program's first thread to call libibverbs). Its calls run at once, with no
//              hand-off (under a lock nobody else takes until StartProgress); a call from
//              another thread waits until the owner next enters Run() (any verbs call of the
//              owner), which runs it first. Measured: a hand-off between two spinning
//              threads on this loaded 2-core machine cost ~140 us per call, a direct call
//              well under 1 us (tools/exec/README.md).
//   kDedicated a thread of its own; every call is a hand-off (spin kSpinNs, then futex).
//              Calls from any thread progress independently, and when no call arrives for
//              `idle_period_ns` the idle function runs there (simulated time passes for a
//              program asleep in poll() on a channel fd).
//
// Contract:
//  1. Calls are serialized: one Run() at a time, from any number of threads. Run() from
//     inside a Run()'d function runs it at once.
//  2. kCaller without progress: a program whose owner thread never calls verbs again while
//     another thread waits in a verbs call waits for ever (with progress, below, the
//     progress thread runs it).
//  3. The idle function runs only in kDedicated mode.
//  4. fork(): a child forked by the model thread itself (kCaller) keeps using its copy of
//     the model, without a progress thread. In any other child the model thread does not
//     exist: Run() runs fn() on the calling thread, where the model refuses every call
//     with EPERM (spec/backend.h contract 5), and returns false.
//  5. Progress (kCaller, StartProgress): a NIC works while its program does something else
//     (spins on memory, sleeps in read()). A progress thread sleeps in Progress::wait
//     (which returns early when input arrives) and, when the owner has not called
//     NoteProgress for period_ns and is not inside Run(), takes the model's lock, hands
//     the model's thread-bound state to itself (Progress::move: the SystemC kernel,
//     model/sim/kernel.h contract 5), runs the other threads' waiting calls and
//     Progress::pump, and hands it back. While pump reports activity it looks every
//     period_ns, else the period doubles up to max_period_ns; while the owner runs the
//     model itself it sleeps (not on input, which the owner drains) for a period that
//     doubles up to busy_max_ns, or up to max_period_ns when no pump of the last 10 ms
//     moved anything (a program that polls all the time): each wake-up is a chance for
//     the scheduler to take the core from the program (measured on this loaded 2-core
//     host: looking every 20 us doubled ib_write_lat's typical latency and made
//     ibv_rc_pingpong 5x slower, tools/exec/README.md). The owner's calls stay direct (one
//     uncontended lock more). It stops at exit() (atexit) or destruction.
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
  // The calling thread may use the model now: the owner, or the progress thread in its turn.
  bool OnModelThread() const {
    const std::thread::id me = std::this_thread::get_id();
    return me == owner_ || me == holder_.load(std::memory_order_relaxed);
  }
  // kDedicated: how long no call must come before the idle function runs (any thread).
  void SetIdlePeriod(uint64_t ns) { idle_period_ns_.store(ns, std::memory_order_relaxed); }

  struct Progress {
    std::function<bool()> pump;  // runs the model; true when something happened
    std::function<void(uint64_t ns)> wait;  // sleeps up to ns, less when input arrives
    std::function<void(std::thread::id from, std::thread::id to)> move;  // may be empty
    uint64_t period_ns = 20'000;
    uint64_t max_period_ns = 1'000'000;  // while nothing comes or goes
    uint64_t busy_max_ns = 200'000;      // while the owner runs the model itself (5)
  };
  // Contract 5 (kCaller; at most once, from inside Run() or from the owner). False, and
  // nothing started, in kDedicated mode or when already started.
  bool StartProgress(Progress progress);
  bool progress_running() const { return progress_running_.load(std::memory_order_acquire); }
  // The model progressed in a call of the program: the progress thread need not pump now.
  void NoteProgress();

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
  static void ParentAfterFork();
  static void ChildAfterFork();
  static void StopProgressAtExit();
  bool forking_on_owner_ = false;
  bool locked_for_fork_ = false;
  void Loop();
  void ProgressLoop();
  void StopProgress();

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

  // kCaller: held by the owner during each outermost call and by the progress thread in
  // its turn (contract 5); holder_ is the progress thread while it holds it.
  std::mutex model_mu_;
  std::atomic<std::thread::id> holder_{};
  Progress progress_;
  std::atomic<bool> progress_running_{false};
  std::atomic<bool> progress_stop_{false};
  std::atomic<uint64_t> last_note_ns_{0};  // CLOCK_MONOTONIC of the last NoteProgress
  int progress_pid_ = 0;
  std::thread progress_thread_;
};

}  // namespace qptwin::exec
