// The SystemC glue: one SystemC kernel per process carries the simulated time of every
// model Backend in the process.
//
// Contract:
//  1. The kernel starts lazily on the first Advance, with SystemC's banner silenced and,
//     when still possible, a 1 ns time resolution; it then elaborates the model's platform
//     (platform.h: the NIC slots' DMA sockets and the host memory), if no sc_start has
//     run yet.
//  2. Advance(ns) runs sc_start(ns): the process-wide SystemC time is the sum of all
//     simulated time of all Backends. Each Backend keeps its own clock that starts at 0
//     (engine/event_queue.h), so its times do not depend on other Backends: with the
//     SystemC clock (sc_clock.h) a World's time is the kernel's time minus its epoch, and
//     Advance first suspends the ScClock that follows the kernel (sc_clock.h contract 3).
//     Inside a simulation the program runs itself (sc_clock.h contract 8), Advance(ns)
//     from a thread process is that thread's wait(ns); from a method it returns false.
//  3. Never calls sc_stop (it is final).
//  4. Threading (spec/backend.h, contract 5): SystemC is not thread-safe, so the kernel
//     belongs to one thread, the first that calls ClaimKernel() or Advance(), for the
//     rest of the process. On any other thread ClaimKernel() returns false and Advance()
//     and KernelNowNs() leave SystemC alone (Advance returns false, KernelNowNs 0): a
//     wrong thread gets an error, never a race inside SystemC or its E554 abort.
//  5. MoveKernel hands the kernel to another thread, for a front end that serializes every
//     model call itself (tools/exec/model_thread.h: a lock around each call, and a progress
//     thread that runs the model between the owner's calls, as a NIC progresses by itself).
//     Nothing else in SystemC or the model is bound to a thread: the kernel's processes
//     are the engine's SC_METHODs (sc_clock.h), which run on the stack of whoever calls
//     sc_start and have no coroutine stack of their own (no SC_THREAD anywhere, but for the
//     one MeasureRawActivations spawns, which ends before that call returns).
//  7. ModelCall: every model call (thread_checked_device.cc, model_backend.cc) holds one while
//     it runs; ok() is OnKernelThread(). In a simulation the program runs itself
//     (sc_clock.h contract 8) the program's thread processes take turns: a thread's call
//     waits (wait()) while another thread's call is under way, so no call ever runs inside
//     another's (the engine is not re-entrant: a PostSend may wait inside, for rxe's
//     answers). A call of kind kWait (WaitForCompletions, GetCqEvent, WaitForAsyncEvent,
//     Backend::Advance: nothing of the engine is half done while they wait) lets the other
//     threads have their turn while it waits (TurnYield, in ScClock::RunUntil), and takes
//     it back before it goes on. Before a turn the clocks catch up with SystemC's time, and
//     after it a thread whose wait the call satisfied wakes (ScClock::BeforeModelCall,
//     AfterModelCall), for a method process's call too. A thread's call that finds a call
//     begun outside the simulation under way (sc_main's set-up, whose own sc_start runs
//     the program's processes) waits until it has returned: its turn comes in the next
//     sc_start (so while threads make calls, sc_main lets time pass with sc_start, not
//     with a model call's wait). A method process cannot wait: its call fails (ok() false,
//     EPERM) while a thread's call, a call begun outside, or an engine wake-up (a module
//     answering the NIC's DMA) is under way. Outside a running simulation ModelCall checks
//     the thread, and fails (EPERM) while a thread's call still holds the turn (sc_start
//     returned while that thread waited inside its call). UnderWay() tells whether the engine is on the caller's stack (a
//     call of the calling thread, a method's call, a call begun outside the simulation
//     whose sc_start runs now, or a clock's Step): what a program's module that answers
//     the engine's own transfers asks of the model then (a driver's doorbell,
//     platform.h contract 8) is refused, not run inside it.
//  6. MeasureRawActivations(n): SystemC's own speed here and now, in this process, for
//     ratios against it (issue 12: `qptwin bench --vs-systemc`): n activations of a
//     trivial SC_METHOD re-notified by a 1 ns timed event, then of an SC_THREAD that
//     wait()s 1 ns n times, each run by Advance (so n ns of kernel time pass twice, and no
//     World's source runs meanwhile); rates per wall second and per second of the
//     process's CPU time. {0, 0} off the kernel's thread or for n == 0.
//
// SystemC's scheduler is the model's clock (sc_clock.h): every source of the engine is a
// SystemC process woken by sc_event::notify(delay), and Backend waits are sc_start calls that
// sc_pause() when what they wait for happens.
#pragma once

#include <atomic>
#include <cstdint>
#include <cstring>
#include <thread>
#include <type_traits>

namespace qptwin::model::sim {

// Silences the banner; safe to call more than once, from any thread, before anything else.
void PrepareSystemC();
// Binds the kernel to the calling thread if no thread has it yet; true when the calling
// thread is (now) the kernel's thread.
[[nodiscard]] bool ClaimKernel();
namespace internal {
// The kernel's thread as the bytes of its std::thread::id (0: no thread, before any claim);
// kernel.cc changes it. Constant-initialized: no guard, and right from the first call.
extern std::atomic<uint64_t> kernel_owner;
static_assert(sizeof(std::thread::id) == sizeof(uint64_t) &&
              std::is_trivially_copyable_v<std::thread::id>);
inline uint64_t ThreadWord(std::thread::id id) {
  uint64_t w;
  std::memcpy(&w, &id, sizeof w);
  return w;
}
}  // namespace internal

// Whether the calling thread is the kernel's thread (false before any claim). Inline: every
// model call checks it (thread_checked_device.cc).
inline bool OnKernelThread() {
  return internal::kernel_owner.load(std::memory_order_acquire) ==
         internal::ThreadWord(std::this_thread::get_id());
}
// Contract 5: the kernel's thread becomes `to` when it is `from`; false (nothing changed)
// otherwise. The caller guarantees that `from` is not inside SystemC or a model call until
// the kernel is handed back (e.g. it holds the lock `from` takes around every model call).
[[nodiscard]] bool MoveKernel(std::thread::id from, std::thread::id to);
// Lets `ns` of simulated time pass in the SystemC kernel (claiming it if unclaimed).
// False, with SystemC untouched, on a thread that is not the kernel's.
bool Advance(uint64_t ns);
// Whether the caller is a thread process (SC_THREAD, SC_CTHREAD) of a simulation under way,
// i.e. a program's own sc_main called sc_start (sc_clock.h contract 8): its waits are the
// thread's wait(), not an sc_start of the model's. False in a method process, or outside
// sc_start.
bool InSimulationThread();
// The kernel's time (all Backends of the process together), in ns; 0 off the kernel thread.
uint64_t KernelNowNs();

// Contract 7.
class ModelCall {
 public:
  enum class Kind { kCall, kWait };
  explicit ModelCall(Kind kind = Kind::kCall);
  ~ModelCall();
  ModelCall(const ModelCall&) = delete;
  ModelCall& operator=(const ModelCall&) = delete;
  bool ok() const { return ok_; }
  // Whether the engine is on the caller's stack: a model call of the calling process (or,
  // outside a running simulation, of the kernel's thread) is under way, or an engine step
  // runs. A program's module that answers the NIC's DMA runs there; the engine is not
  // re-entrant, so what it asks of the model then is refused (platform.h contract 8).
  static bool UnderWay();
  // Whether the caller is a thread process whose call would take its turn by waiting (for
  // another thread's call, or for a call begun outside the simulation whose sc_start runs
  // it now), with no engine work on its own stack: UnderWay() may say true for the
  // outside call, yet the thread's call is safe (it runs after that call returned).
  static bool ThreadMayWaitForTurn();

 private:
  bool ok_ = false;
  bool turn_ = false;     // this call took (or re-entered) the turn
  bool outside_ = false;  // begun outside a running simulation
  bool method_ = false;   // a method process's
};

// Contract 7: inside a kWait call's wait, the turn is the other threads'; Retake() takes it
// back when the wait ends (it may wait for it, and a kill then unwinds from Retake, never
// from the destructor). A no-op for any other call, or outside a running simulation.
class TurnYield {
 public:
  TurnYield();
  ~TurnYield();
  void Retake();
  TurnYield(const TurnYield&) = delete;
  TurnYield& operator=(const TurnYield&) = delete;

 private:
  bool yielded_ = false;
};

struct RawActivationRates {
  double method_per_s = 0;  // SC_METHOD activations per wall second
  double thread_per_s = 0;  // SC_THREAD activations (returns from wait) per wall second
  double method_per_cpu_s = 0;  // the same per second of the process's CPU time
  double thread_per_cpu_s = 0;
};
RawActivationRates MeasureRawActivations(uint64_t n);  // contract 6

}  // namespace qptwin::model::sim
