#include "model/sim/kernel.h"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <mutex>
#include <thread>

// sc_spawn: Bazel defines this (local_defines), tools/fuzz/build.sh's plain build does not.
#ifndef SC_INCLUDE_DYNAMIC_PROCESSES
#define SC_INCLUDE_DYNAMIC_PROCESSES
#endif
#include <systemc>

#include "model/sim/platform.h"
#include "model/sim/sc_clock.h"

namespace qptwin::model::sim {
namespace {

bool& Started() {  // touched only by the kernel's thread
  static bool started = false;
  return started;
}

}  // namespace

void PrepareSystemC() {
  // setenv is not thread-safe against itself; once is enough.
  static std::once_flag once;
  std::call_once(once, [] { setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 0); });
}

// std::thread::id() (no thread, word 0) until the first claim; then changed only by
// MoveKernel.
std::atomic<uint64_t> internal::kernel_owner{0};

bool ClaimKernel() {
  const uint64_t me = internal::ThreadWord(std::this_thread::get_id());
  uint64_t none = internal::ThreadWord(std::thread::id());
  if (internal::kernel_owner.compare_exchange_strong(none, me, std::memory_order_acq_rel)) {
    return true;
  }
  return none == me;  // compare_exchange wrote the current owner into `none`
}

bool MoveKernel(std::thread::id from, std::thread::id to) {
  uint64_t expected = internal::ThreadWord(from);
  return from != std::thread::id() &&
         internal::kernel_owner.compare_exchange_strong(expected, internal::ThreadWord(to),
                                                        std::memory_order_acq_rel);
}

namespace {
// The calling thread process of a running simulation, or an invalid handle.
sc_core::sc_process_handle CallingThread() {
  if (sc_core::sc_get_status() != sc_core::SC_RUNNING) return {};
  sc_core::sc_process_handle h = sc_core::sc_get_current_process_handle();
  if (!h.valid() || (h.proc_kind() != sc_core::SC_THREAD_PROC_ &&
                     h.proc_kind() != sc_core::SC_CTHREAD_PROC_)) {
    return {};
  }
  return h;
}
}  // namespace

bool InSimulationThread() { return CallingThread().valid(); }

bool Advance(uint64_t ns) {
  if (!ClaimKernel()) return false;
  if (!Started()) {
    PrepareSystemC();
    try {
      sc_core::sc_set_time_resolution(1, sc_core::SC_NS);
    } catch (...) {
      // Someone already made sc_time objects: keep SystemC's default (1 ps).
    }
    Started() = true;
    Platform::Elaborate();  // platform.h contract 1: before the first sc_start, or never
  }
  if (ns == 0) return true;
  if (sc_core::sc_get_status() == sc_core::SC_RUNNING) {
    // sc_clock.h contract 8: inside the program's own simulation a thread waits instead;
    // a method cannot.
    if (!InSimulationThread()) return false;
    sc_core::wait(sc_core::sc_time(static_cast<double>(ns), sc_core::SC_NS));
    return true;
  }
  ScClock::SuspendActive();  // sc_clock.h contract 3: no World's source runs in this sc_start
  sc_core::sc_start(sc_core::sc_time(static_cast<double>(ns), sc_core::SC_NS));
  return true;
}

namespace {

// Contract 7: whose turn it is among the program's threads (kernel's thread only).
struct Turn {
  sc_core::sc_process_handle owner;
  int depth = 0;
  int method_depth = 0;  // method processes' calls under way (they hold no turn)
  int outside_waiters = 0;  // threads that found a call begun outside under way
  bool may_yield = false;
  sc_core::sc_event* free_event = nullptr;  // Free(): notified when the turn is given up
  // Made when a thread first waits for or gives up the turn (inside the simulation), not
  // at the first call of all (maybe in a module's constructor, under its name).
  sc_core::sc_event& Free() {
    if (!free_event) free_event = new sc_core::sc_event("qptwin_model_turn");
    return *free_event;
  }
};

Turn& TheTurn() {
  static Turn turn;
  return turn;
}

int& OutsideCalls();

void TakeTurn(Turn& t, const sc_core::sc_process_handle& me, bool may_yield) {
  // A call begun outside the simulation may be running the model's own sc_start: the
  // engine is mid-work until it returns (~ModelCall notifies `free` then).
  while (t.depth > 0 || OutsideCalls() > 0) {
    if (OutsideCalls() > 0) ++t.outside_waiters;
    sc_core::wait(t.Free());
  }
  t.owner = me;
  t.depth = 1;
  t.may_yield = may_yield;
}

void GiveUpTurn(Turn& t) {
  t.depth = 0;
  t.owner = sc_core::sc_process_handle();
  t.Free().notify();  // the threads waiting for it run in this evaluation phase
}

}  // namespace

namespace {
// Model calls begun outside a running simulation (the kernel's thread only): such a call
// may run the model's own sc_start, and every process that runs meanwhile runs inside it.
int& OutsideCalls() {
  static int calls = 0;
  return calls;
}

// The last call begun outside the simulation ended: threads that waited for it take their
// turn in the next sc_start's first delta cycle.
void OutsideCallsEnded() {
  Turn& t = TheTurn();
  if (t.outside_waiters == 0) return;
  t.outside_waiters = 0;
  t.Free().notify(sc_core::SC_ZERO_TIME);
}
}  // namespace

bool ModelCall::UnderWay() {
  // An engine wake-up, or a call begun outside the simulation (whose sc_start runs now, or
  // which is still on the stack): the engine is mid-work.
  if (ScClock::Stepping() || OutsideCalls() > 0) return true;
  const Turn& t = TheTurn();
  // Paused while a thread's call holds the turn (it waits inside): the engine is mid-call.
  if (sc_core::sc_get_status() != sc_core::SC_RUNNING) return t.depth > 0;
  if (t.method_depth > 0) return true;  // a method's call: nothing runs beside a method
  const sc_core::sc_process_handle me = CallingThread();
  // A method runs inside a thread's call that holds the turn (the thread waits within it);
  // a thread is inside its own call, or may wait for the turn (another thread's call).
  if (!me.valid()) return t.depth > 0;
  return t.depth > 0 && t.owner == me;
}

bool ModelCall::ThreadMayWaitForTurn() {
  // A thread process whose call takes its turn by waiting (for another thread's call, or
  // for a call begun outside the simulation to return), not one whose own call is on its
  // stack, nor inside an engine wake-up or a method's call (which run on the caller's stack).
  if (sc_core::sc_get_status() != sc_core::SC_RUNNING || ScClock::Stepping()) return false;
  const Turn& t = TheTurn();
  if (t.method_depth > 0) return false;
  const sc_core::sc_process_handle me = CallingThread();
  return me.valid() && !(t.depth > 0 && t.owner == me);
}

ModelCall::ModelCall(Kind kind) : ok_(OnKernelThread()) {
  if (!ok_) return;
  if (sc_core::sc_get_status() != sc_core::SC_RUNNING) {
    // A thread's call still holds the turn (sc_start returned while it waited inside, as
    // rxe's post does): the engine is mid-call, and this call would run inside it.
    if (TheTurn().depth > 0) {
      ok_ = false;
      return;
    }
    outside_ = true;
    ++OutsideCalls();
    return;
  }
  const sc_core::sc_process_handle me = CallingThread();
  Turn& t = TheTurn();
  if (!me.valid()) {
    // A method cannot wait for a turn: it runs only when the engine is not mid-work (no
    // thread's call, no call begun outside, no engine wake-up on the stack, e.g. a module
    // answering the NIC's DMA).
    ok_ = t.depth == 0 && OutsideCalls() == 0 && !ScClock::Stepping();
    if (!ok_) return;
    method_ = true;
    if (t.method_depth++ == 0) ScClock::BeforeModelCall();
    return;
  }
  turn_ = true;
  if (t.depth > 0 && t.owner == me) {
    ++t.depth;  // a call inside a call of the same thread
    return;
  }
  TakeTurn(t, me, kind == Kind::kWait);
  ScClock::BeforeModelCall();
}

ModelCall::~ModelCall() {
  if (outside_ && --OutsideCalls() == 0) OutsideCallsEnded();
  if (method_ && --TheTurn().method_depth == 0) {
    ScClock::AfterModelCall();  // a thread whose wait the call satisfied wakes now
  }
  if (!turn_) return;
  Turn& t = TheTurn();
  // A thread killed while it yielded its turn (TurnYield did not take it back) holds none:
  // the turn is another thread's now, or nobody's.
  if (!(t.owner == CallingThread()) || t.depth == 0) return;
  if (t.depth > 1) {
    --t.depth;
    return;
  }
  ScClock::AfterModelCall();  // still the turn's owner: a wake-up it makes runs inside it
  GiveUpTurn(t);
}

TurnYield::TurnYield() {
  Turn& t = TheTurn();
  if (t.depth != 1 || !t.may_yield) return;
  const sc_core::sc_process_handle me = CallingThread();
  if (!me.valid() || !(t.owner == me)) return;
  GiveUpTurn(t);
  yielded_ = true;
}

void TurnYield::Retake() {
  if (!yielded_) return;
  yielded_ = false;  // a kill while it waits unwinds from here: the turn is not taken
  TakeTurn(TheTurn(), CallingThread(), true);
}

// Never waits: a wait in a destructor that a kill interrupts would terminate the process.
// Without Retake (a thread killed or reset while it waited), the turn stays another's.
TurnYield::~TurnYield() = default;

uint64_t KernelNowNs() {
  if (!OnKernelThread() || !Started()) return 0;
  return static_cast<uint64_t>(sc_core::sc_time_stamp().to_seconds() * 1e9 + 0.5);
}

RawActivationRates MeasureRawActivations(uint64_t n) {
  RawActivationRates r;
  if (n == 0 || !Advance(0)) return r;  // starts the kernel, or off its thread
  // One method for the process's life (a process cannot be deleted): re-notified while
  // `left` lasts.
  struct Loop {
    sc_core::sc_event tick;
    uint64_t left = 0;
  };
  static Loop* loop = [] {
    auto* l = new Loop;
    sc_core::sc_spawn_options opts;
    opts.spawn_method();
    opts.dont_initialize();
    opts.set_sensitivity(&l->tick);
    sc_core::sc_spawn(
        [l] {
          if (l->left > 0 && --l->left > 0) l->tick.notify(1, sc_core::SC_NS);
        },
        sc_core::sc_gen_unique_name("qptwin_raw_method"), &opts);
    return l;
  }();
  struct Lap {
    std::chrono::steady_clock::time_point wall = std::chrono::steady_clock::now();
    double cpu = CpuSeconds();
    static double CpuSeconds() {
      timespec ts{};
      clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
      return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
    }
    // Activations per wall and per CPU second since the lap began.
    void Rates(uint64_t n, double* per_wall_s, double* per_cpu_s) const {
      const double w =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - wall).count();
      const double c = CpuSeconds() - cpu;
      *per_wall_s = w > 0 ? static_cast<double>(n) / w : 0;
      *per_cpu_s = c > 0 ? static_cast<double>(n) / c : 0;
    }
  };
  loop->left = n;
  loop->tick.notify(1, sc_core::SC_NS);
  {
    const Lap lap;
    (void)Advance(n + 1);
    lap.Rates(n, &r.method_per_s, &r.method_per_cpu_s);
  }
  sc_core::sc_spawn_options opts;  // a thread: its own coroutine, ended before we return
  sc_core::sc_spawn(
      [n] {
        for (uint64_t i = 0; i < n; ++i) sc_core::wait(1, sc_core::SC_NS);
      },
      sc_core::sc_gen_unique_name("qptwin_raw_thread"), &opts);
  const Lap lap;
  (void)Advance(n + 1);
  lap.Rates(n, &r.thread_per_s, &r.thread_per_cpu_s);
  return r;
}

}  // namespace qptwin::model::sim

// libsystemc.so refers to sc_main (its own main() calls it), so every binary linking SystemC
// must define one. Binaries with their own main() (the CLI, the benchmark) get this weak
// fallback and never call it; test binaries override it with //model/sim:test_main.
extern "C" __attribute__((weak)) int sc_main(int, char**) {
  std::fprintf(stderr, "qptwin: this binary has no main(); link //model/sim:test_main or define main()\n");
  return 1;
}
