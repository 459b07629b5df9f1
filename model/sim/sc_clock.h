// SystemC's scheduler as the engine's clock (model/engine/event_queue.h): every source of a
// World is a SystemC process, its wake-up an sc_event notified with the delay to its time,
// and time passes only inside sc_start. The World's time is the kernel's time minus its
// epoch.
//
// Contract:
//  1. Order (event_queue.h contract 1). SystemC runs the processes of one delta cycle in an
//     order the standard leaves open, so no source runs its own item: the process of any
//     source that wakes at time t runs Step(), which runs every wake-up of the clock due at
//     or before t (and, contract 7, those up to a quantum later) one at a time, smallest Key
//     first, re-reading the keys after each (a
//     source may wake itself or another at t, with an older key: a FIFO's next item). The
//     other sources' processes woken at t then find nothing due. So the order is the Keys',
//     exactly as the engine's former heap of keys gave it, whatever order SystemC picks.
//  2. Stopping (event_queue.h contract 4). RunUntil gives Step its done(); after each wake-up
//     that makes it hold, Step calls sc_pause() and runs nothing more (the other processes
//     of that delta cycle return at once); what is still due is notified anew (for the next
//     delta cycle, or when the Step had run ahead, contract 7, for its own time, which the
//     next RunUntil reaches first), so it runs first at the next sc_start. sc_start(d) leaves
//     the processes due at
//     exactly now + d runnable but unrun: RunUntil then runs sc_start(SC_ZERO_TIME) while
//     SystemC has activity at the current time.
//  3. Many clocks, one kernel. One clock at a time follows the kernel (the last that ran
//     time); before another clock or sim::Advance runs sc_start, the clock that follows
//     is suspended (its notifications cancelled, its time frozen) and, when it runs again,
//     its epoch is moved on by the time that passed meanwhile and its wake-ups notified
//     again. So each World's time starts at 0 and passes only while it runs
//     (model_backend.h contract 4), and no source of one World ever runs inside
//     another's sc_start.
//  4. Processes are pooled (unless a module's own, contract 9): a source takes a process
//     (and its event) from a process-wide pool when added and gives it back when removed,
//     so thousands of Worlds per process spawn only as many SystemC processes as the most
//     sources alive at once (sc_spawn after the first sc_start is SystemC's rule for
//     processes made during simulation).
//  5. Threading: SystemC's (model/sim/kernel.h contracts 4 and 5). Make, use and destroy
//     a clock on the kernel's thread only (whichever thread holds it after a MoveKernel:
//     the processes are SC_METHODs, bound to no thread); the constructor claims the
//     kernel and a clock must not be made on another thread (model_backend refuses before).
//  6. Wait lengths: one RunUntil/AdvanceBy runs at most what the kernel's time can still
//     hold (sc_max_time(); callers cut waits at 2^50 ns, model_backend.h contract 3).
//  7. Temporal decoupling, as a TLM-2.0 LT initiator with a quantum keeper: inside RunUntil
//     a Step that has run what is due goes on with the next wake-ups in key order while
//     they are at most quantum_ns() ahead of the kernel's time (and not past the deadline),
//     each at its own time (Now() is the wake-up's time, as always); the processes of the
//     wake-ups it ran ahead are cancelled, and wake-ups made meanwhile for times it reaches
//     notify no process. So the clock's time may be ahead of the kernel's (a wait that
//     ends with done() can end there too); every notification is made relative to the
//     kernel's time, so a wake-up's process runs at that wake-up's own time, and the
//     next RunUntil runs the kernel from its own time. Order and times are those of
//     contract 1: the same keys run in the same order at the same times whatever the
//     quantum, so transcripts do not depend on it as long as no other SystemC process
//     depends on the kernel's time meanwhile (the model's own platform has none; a user's
//     modules with processes of their own would see the engine's transfers up to a quantum
//     early in kernel time, each annotated with its offset); what changes is the number of
//     SystemC activations a stream of work takes. AheadNs() is how far the active clock is
//     ahead of the kernel, AheadNsAt(t) the same for a transfer of the engine at its time t
//     (0 unless that is the active clock's time): the offset a TLM transaction issued then
//     carries as its delay (platform.h contract 2). The quantum is TLM-2.0's global quantum
//     (tlm::tlm_global_quantum, in whole ns, read at each Step), as a tlm_quantumkeeper
//     reads it, or 1 us (kDefaultQuantumNs) while that is zero (its default);
//     SetQuantumNs(q) overrides it for the process (0: no decoupling), UseGlobalQuantum()
//     drops the override.
//  8. Inside a simulation that a program runs itself (its sc_main called sc_start, and one of
//     its thread processes, SC_THREAD or SC_CTHREAD, makes the model calls): RunUntil
//     cannot call sc_start, so the calling thread waits instead (sc_core::wait) until
//     done() holds (a Step that sees it wakes the thread at once, instead of sc_pause)
//     or the kernel's time reaches the deadline; what is due at exactly the deadline
//     runs first (up to 1000 delta cycles while SystemC has activity then). A Step that
//     ran ahead (7) ends the wait early in kernel time: the thread then waits until the
//     kernel's time is the clock's (a quantum keeper's sync), so when RunUntil returns,
//     sc_time_stamp() is the World's time plus its epoch. Meanwhile
//     the program's own processes run as SystemC schedules them: one scheduler for both.
//     After the wait the clock goes on following the kernel, so the NIC works on while
//     the program's thread waits in its own way (wait(t)), as a device does. Several
//     threads may wait at once (a driver thread per host), each for its own condition
//     and deadline: a Step wakes each thread whose condition holds and stops there (the
//     others wait on), and runs ahead no further than the earliest deadline, nor while a
//     thread waits out a run ahead; a model call that makes a waiting thread's condition
//     hold (a modify to ERR that flushes) wakes it when the call ends (AfterModelCall).
//     The threads' calls take turns (kernel.h contract 7). Every clock follows the kernel
//     there (none is suspended, contract 3 is the model's own sc_start's), from the first
//     model call of the simulation on, and before each call each clock catches up with
//     SystemC's time (BeforeModelCall), so time the program waited its own way passed for
//     every Backend. Called from a method process (which cannot wait), RunUntil lets no
//     time pass and returns done(). The platform (platform.h) must
//     still be elaborated before the first sc_start: make the model Backend first
//     (model_backend.h contract 6).
//  9. A NIC module's blocks as its own processes. A module (sim::NicSlot, so every slot of
//     the platform and every qptwin::sc::Nic) makes a BlockProcesses in its constructor:
//     one SC_METHOD per block of engine::EventQueue::Block, a child of the module named
//     after the block ("qptwin_platform.nic0.send_engine", "nic_a.port", ...), woken by an
//     event of its own ("..._wake"); the World's own two blocks (cqe_visible, roce_in) are
//     a BlockProcesses(Of::kWorld) of the platform module, or of a program's first Nic.
//     Place(k, p) before a World's sources are added (model_backend: device k on its slot,
//     -1 for the World's own) gives each source that says it is block b of device k
//     (event_queue.h contract 8) p's process for b, so the block's wake-ups are that
//     process's notifications. The newest World takes them: a source of an older World
//     that holds the process moves to a pooled one (contract 4) first, its wake-up
//     notified there. A source whose block's process its own World already holds (a
//     device beyond the platform's 16 slots shares slot k % 16) or that says no block
//     takes a pooled process. Contract 1 still holds: the first process woken at a time
//     runs every wake-up due then in key order, and a Step running ahead (contract 7)
//     runs the wake-ups of any block in the quantum; a block's process is the one its
//     wake-ups notify, so it runs at least when its block has work that no other process
//     reached first. activations(b) counts its runs. A BlockProcesses that goes (its
//     module destroyed) first moves the sources on its processes to pooled ones, their
//     wake-ups notified anew, so a World that outlives the module goes on.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "model/engine/event_queue.h"

namespace sc_core {
class sc_event;
}

namespace qptwin::model::sim {

class ScClock : public engine::EventQueue {
 public:
  ScClock();
  ~ScClock() override;
  ScClock(const ScClock&) = delete;
  ScClock& operator=(const ScClock&) = delete;

  void Add(Source* source) override;
  void Remove(Source* source) override;
  void Wake(Source* source, const Key& key) override;
  void AdvanceBy(uint64_t delta_ns) override;
  bool RunUntil(const std::function<bool()>& done, uint64_t deadline_ns) override;
  // Wake-ups pending: one per source at most (event_queue.h contract 5; tests).
  size_t pending() const;

  // Contract 3: suspends the clock that follows the kernel, if any (kernel.cc's Advance
  // calls it before its own sc_start).
  static void SuspendActive();
  // Contract 8, around each model call a thread of the program's own simulation makes
  // (kernel.h ModelCall): the clocks catch up with the time the program waited on its own,
  // and after it a waiting thread whose condition the call made hold wakes.
  static void BeforeModelCall();
  static void AfterModelCall();
  // Contract 7: the quantum (ns) for every clock of the process, and how far the active
  // clock is ahead of the kernel (0 with no active clock); AheadNsAt(t): the same when the
  // active clock's time is t (a transfer of that World), else 0.
  static void SetQuantumNs(uint64_t ns);
  static void UseGlobalQuantum();
  static uint64_t QuantumNs();
  static constexpr uint64_t kDefaultQuantumNs = 1000;
  static uint64_t AheadNs();
  // A clock's Step runs (an engine wake-up is on the stack).
  static bool Stepping() { return stepping_ != nullptr; }
  static uint64_t AheadNsAt(uint64_t engine_now_ns) {  // inline: every transfer asks
    const ScClock* c = stepping_ ? stepping_ : following_;
    if (!c || c->now_ != engine_now_ns) return 0;
    // Inside a Step (a process) the kernel's time is the one the Step began at.
    const uint64_t kernel = c->in_step_ ? c->step_kernel_ : c->KernelNs();
    return c->now_ > kernel ? c->now_ - kernel : 0;
  }

  struct Slot;  // a SystemC process (pooled or a block's) and the sc_event it is sensitive to

  // Contract 9: a NIC module's processes, one per block.
  class BlockProcesses {
   public:
    enum class Of { kNic, kWorld };  // a NIC's eight blocks, or the World's own two
    // In a module's constructor (elaboration): its children.
    explicit BlockProcesses(Of of = Of::kNic);
    ~BlockProcesses();
    BlockProcesses(const BlockProcesses&) = delete;
    BlockProcesses& operator=(const BlockProcesses&) = delete;
    uint64_t activations(engine::EventQueue::Block block) const;

   private:
    friend class ScClock;
    Slot* slots_[engine::EventQueue::kBlocks] = {};  // kNone's is null
  };
  // Contract 9: the sources of device `device` (-1: the World's own) added from now on
  // take `processes`'.
  void Place(int device, BlockProcesses* processes);

 private:
  struct Entry {
    Source* source = nullptr;  // null: a free entry
    Slot* slot = nullptr;
    Key wake;
    bool armed = false;
    bool listed = false;    // in armed_
    bool deferred = false;  // in deferred_
  };
  friend struct Slot;
  static ScClock* following_;  // the clock that follows the kernel (contract 3); its thread only
  static ScClock* stepping_;   // the clock whose Step runs (contract 8: several may follow)
  void Step();  // contract 1: the body of every source's process
  void Activate();
  void Suspend();
  void Notify(Entry& e);
  uint64_t KernelNs() const;  // the kernel's time in this clock's ns (minus the epoch)
  // Contract 6: deadline_ns, or the latest time the kernel's time can still hold when it
  // is further from `kernel` (this clock's KernelNs()) than that.
  static uint64_t ClampDeadline(uint64_t deadline_ns, uint64_t kernel);
  void KickDue();
  Slot* TakeSlot(const Source* source);  // contracts 4 and 9
  static Slot* TakePooled();              // contract 4
  static Slot* SpawnSlot(const char* name, bool named_event);
  void MoveToPool(Entry& e);                // its wake-up notified again there
  void GiveUp(Slot* slot);                  // contract 9: to a newer World
  void Unplace(BlockProcesses* processes);  // contract 9: its sources to pooled processes
  std::vector<BlockProcesses*> places_;  // [0] the World's own, [k + 1] device k's (contract 9)

  std::vector<Entry> entries_;  // by Source index
  // The entries armed since Step last looked (a superset of the armed ones): Step scans
  // these, not every source, and drops the ones no longer armed as it goes.
  std::vector<int> armed_;
  // Wake-ups made inside a Step for a time it may still reach (<= step_limit_): notified
  // only if the Step ends without running them (contract 7).
  std::vector<int> deferred_;
  uint64_t step_limit_ = 0;
  std::vector<int> free_;
  bool active_ = false;   // follows the kernel (contract 3)
  // Inside Step(): a wake-up for a time it may still reach (<= step_limit_) needs no
  // notification unless the Step ends without running it (deferred_).
  bool in_step_ = false;
  bool stopped_ = false;  // done() held: nothing more runs until the next RunUntil
  const std::function<bool()>* done_ = nullptr;
  // Contract 8: the threads waiting in RunInThread, each with its condition and deadline.
  struct Waiter;
  std::vector<Waiter*> waiters_;
  int syncing_ = 0;  // threads waiting out a run ahead (no Step runs ahead meanwhile)
  bool RunInThread(const std::function<bool()>& done, uint64_t deadline_ns);
  bool WakeSatisfied();  // wakes each waiter whose condition holds; true if any
  uint64_t deadline_ = 0;  // RunUntil's, while done_ is set (contract 7)
  uint64_t epoch_ticks_ = 0;  // kernel ticks at this clock's time 0
  uint64_t step_kernel_ = 0;  // KernelNs() when the Step under way (in_step_) began
  uint64_t ticks_per_ns_ = 1;  // the kernel's resolution (1 with kernel.cc's 1 ns)
};

}  // namespace qptwin::model::sim
