#include "model/sim/sc_clock.h"

#include <algorithm>
#include <optional>
#include <string>
#include <cstdio>
#include <cstdlib>

// sc_spawn and sc_spawn_options: Bazel defines this (local_defines), tools/fuzz/build.sh's
// plain clang++ build does not.
#ifndef SC_INCLUDE_DYNAMIC_PROCESSES
#define SC_INCLUDE_DYNAMIC_PROCESSES
#endif
#include <systemc>
#include <tlm>

#include "model/sim/kernel.h"

namespace qptwin::model::sim {

ScClock* ScClock::following_ = nullptr;
ScClock* ScClock::stepping_ = nullptr;

struct ScClock::Slot {
  Slot() = default;
  // Contract 9: a block's event, named in its module ("nic0.send_engine_wake").
  explicit Slot(const std::string& event_name) : event(event_name.c_str()) {}
  sc_core::sc_event event;
  ScClock* clock = nullptr;  // the clock of the source that holds the slot; null: free
  BlockProcesses* owner = nullptr;  // contract 9: a block's process; null: pooled (4)
  uint64_t activations = 0;
};

// Contract 8: a thread waiting in RunInThread.
struct ScClock::Waiter {
  const std::function<bool()>* done = nullptr;
  uint64_t deadline = 0;
  sc_core::sc_event woken;
  bool satisfied = false;
};

namespace {

// Kernel state, touched only on the kernel's thread (contract 5), as ScClock::following_.
std::vector<ScClock::Slot*>& FreeSlots() {  // contract 4; slots are never freed
  static auto* free = new std::vector<ScClock::Slot*>;
  return *free;
}

std::vector<ScClock*>& AllClocks() {  // every clock alive (contract 8)
  static auto* all = new std::vector<ScClock*>;
  return *all;
}

std::vector<ScClock*>& ActiveClocks() {  // the clocks that follow the kernel (contracts 3, 8)
  static auto* active = new std::vector<ScClock*>;
  return *active;
}

// Contract 7: the process-wide override (SetQuantumNs), if any.
std::optional<uint64_t>& QuantumOverride() {
  static std::optional<uint64_t> quantum_ns;
  return quantum_ns;
}

uint64_t TicksPerNs() {  // 1 when kernel.cc got its 1 ns resolution, 1000 at SystemC's 1 ps
  static const uint64_t ticks = sc_core::sc_time(1, sc_core::SC_NS).value();
  return ticks;
}

}  // namespace

ScClock::ScClock() {
  // Contract 5: a clock off the kernel's thread would race SystemC; callers check first
  // (MakeModelBackend refuses), so getting here is a bug, stopped before any harm.
  if (!ClaimKernel()) {
    std::fprintf(stderr, "qptwin: ScClock made off the SystemC kernel's thread\n");
    std::abort();
  }
  (void)Advance(0);  // starts the kernel (its time resolution)
  ticks_per_ns_ = TicksPerNs();
  epoch_ticks_ = sc_core::sc_time_stamp().value();
  AllClocks().push_back(this);
}

ScClock::~ScClock() {
  if (active_) Suspend();
  auto& all = AllClocks();
  all.erase(std::remove(all.begin(), all.end(), this), all.end());
  for (Entry& e : entries_) {
    if (e.source) Remove(e.source);
  }
}

uint64_t ScClock::KernelNs() const {
  const uint64_t ticks = sc_core::sc_time_stamp().value() - epoch_ticks_;
  // SystemC's default resolution (1 ps) as a constant divisor: a multiply, not a division.
  if (ticks_per_ns_ == 1000) return ticks / 1000;
  return ticks_per_ns_ == 1 ? ticks : ticks / ticks_per_ns_;
}

// A process that runs its slot's clock's Step (contract 1), named `name` in the current
// hierarchy scope (a module's constructor: its child).
ScClock::Slot* ScClock::SpawnSlot(const char* name_in, bool named_event) {
  // A copy first: sc_gen_unique_name's buffer is reused by the event's own name below.
  const std::string name = name_in;
  // Never freed: its process may outlive any owner.
  auto* slot = named_event ? new Slot(name + "_wake") : new Slot;
  sc_core::sc_spawn_options opts;
  opts.spawn_method();
  opts.dont_initialize();
  opts.set_sensitivity(&slot->event);
  sc_core::sc_spawn(
      [slot] {
        ++slot->activations;
        if (slot->clock) slot->clock->Step();
      },
      name.c_str(), &opts);
  return slot;
}

ScClock::Slot* ScClock::TakeSlot(const Source* source) {
  // Contract 9: the block's own process, when this clock placed the device (or the World's
  // own blocks); an older World's source that holds it gives it up to this newer one.
  const Where& w = source->where();
  if (w.block != Block::kNone) {
    const int place = IsWorldBlock(w.block) ? 0 : w.device + 1;
    if (w.device >= -1 && static_cast<size_t>(place) < places_.size() && places_[place]) {
      Slot* own = places_[place]->slots_[static_cast<int>(w.block)];
      if (own && own->clock && own->clock != this) own->clock->GiveUp(own);
      if (own && !own->clock) return own;
    }
  }
  return TakePooled();
}

ScClock::Slot* ScClock::TakePooled() {  // contract 4
  if (!FreeSlots().empty()) {
    Slot* slot = FreeSlots().back();
    FreeSlots().pop_back();
    return slot;
  }
  return SpawnSlot(sc_core::sc_gen_unique_name("qptwin_source"), false);
}

void ScClock::MoveToPool(Entry& e) {
  e.slot->event.cancel();
  e.slot->clock = nullptr;
  e.slot = TakePooled();
  e.slot->clock = this;
  // A pending wake-up is notified again on its new process (a deferred one is notified by
  // the Step that deferred it).
  if (active_ && e.armed && !e.deferred) Notify(e);
}

void ScClock::GiveUp(Slot* slot) {
  for (Entry& e : entries_) {
    if (e.source && e.slot == slot) MoveToPool(e);
  }
}

void ScClock::Add(Source* source) {
  Slot* slot = TakeSlot(source);
  slot->clock = this;
  int index;
  if (!free_.empty()) {
    index = free_.back();
    free_.pop_back();
  } else {
    index = static_cast<int>(entries_.size());
    entries_.emplace_back();
  }
  entries_[index] = Entry{source, slot, Key{}, false};
  IndexOf(source) = index;
}

void ScClock::Remove(Source* source) {
  const int index = IndexOf(source);
  if (index < 0 || index >= static_cast<int>(entries_.size())) return;
  Entry& e = entries_[index];
  e.slot->event.cancel();
  e.slot->clock = nullptr;
  if (!e.slot->owner) FreeSlots().push_back(e.slot);  // a block's stays its module's
  if (e.listed) armed_.erase(std::find(armed_.begin(), armed_.end(), index));
  if (e.deferred) deferred_.erase(std::find(deferred_.begin(), deferred_.end(), index));
  e = Entry{};
  free_.push_back(index);
  IndexOf(source) = -1;
}

void ScClock::Place(int device, BlockProcesses* processes) {
  if (device < -1) return;
  const size_t place = static_cast<size_t>(device + 1);  // 0: the World's own blocks
  if (places_.size() <= place) places_.resize(place + 1, nullptr);
  places_[place] = processes;
}

void ScClock::Unplace(BlockProcesses* processes) {
  for (BlockProcesses*& p : places_) {
    if (p == processes) p = nullptr;
  }
  for (Entry& e : entries_) {
    if (e.source && e.slot->owner == processes) MoveToPool(e);
  }
}

ScClock::BlockProcesses::BlockProcesses(Of of) {
  for (int b = 1; b < engine::EventQueue::kBlocks; ++b) {
    if (IsWorldBlock(static_cast<Block>(b)) != (of == Of::kWorld)) continue;
    slots_[b] = SpawnSlot(BlockName(static_cast<Block>(b)), true);
    slots_[b]->owner = this;
  }
}

ScClock::BlockProcesses::~BlockProcesses() {
  for (ScClock* c : AllClocks()) c->Unplace(this);
  for (Slot* slot : slots_) {
    if (slot) slot->owner = nullptr;  // never taken again: no clock places these
  }
}

uint64_t ScClock::BlockProcesses::activations(Block block) const {
  const Slot* slot = slots_[static_cast<int>(block)];
  return slot ? slot->activations : 0;
}

void ScClock::Notify(Entry& e) {
  e.slot->event.cancel();  // contract 5 of event_queue.h: the new key is not later
  // Relative to the kernel's time, which this clock's may be ahead of (contract 7).
  const uint64_t kernel = KernelNs();
  if (e.wake.time <= kernel) {
    e.slot->event.notify(sc_core::SC_ZERO_TIME);
  } else {
    e.slot->event.notify(sc_core::sc_time::from_value((e.wake.time - kernel) * TicksPerNs()));
  }
}

void ScClock::Wake(Source* source, const Key& key) {
  const int index = IndexOf(source);
  Entry& e = entries_[index];
  e.wake = key;
  e.armed = true;
  if (!e.listed) {
    e.listed = true;
    armed_.push_back(index);
  }
  if (!active_) return;                       // notified when it follows the kernel again
  if (in_step_ && key.time <= step_limit_) {  // the running Step takes it (contracts 1, 7)
    if (!e.deferred) {
      e.deferred = true;
      deferred_.push_back(index);
    }
    return;
  }
  Notify(e);
}

void ScClock::KickDue() {
  for (Entry& e : entries_) {
    if (e.armed && e.wake.time <= now_) {
      Notify(e);
      return;
    }
  }
}

void ScClock::Step() {
  if (!active_ || stopped_) return;
  const uint64_t kernel = KernelNs();
  step_kernel_ = kernel;
  now_ = std::max(now_, kernel);  // a clock that ran ahead (contract 7) is not behind
  // Contract 7: inside RunUntil the Step may run wake-ups up to a quantum ahead of the
  // kernel's time (never past the deadline); outside it only what is due.
  const uint64_t q = QuantumNs();
  uint64_t deadline = done_ ? deadline_ : ~uint64_t{0};  // contract 8: or the waiters'
  for (const Waiter* w : waiters_) deadline = std::min(deadline, w->deadline);
  const bool ahead = (done_ || !waiters_.empty()) && syncing_ == 0;  // contract 8
  step_limit_ = ahead ? std::min(deadline, kernel > ~uint64_t{0} - q ? ~uint64_t{0} : kernel + q)
                      : kernel;
  step_limit_ = std::max(step_limit_, now_);
  in_step_ = true;
  stepping_ = this;
  for (;;) {
    int best = -1;  // the smallest armed key (contract 1)
    for (size_t j = 0; j < armed_.size();) {
      const int i = armed_[j];
      Entry& e = entries_[i];
      if (!e.armed) {  // ran or was replaced since: off the list
        e.listed = false;
        armed_[j] = armed_.back();
        armed_.pop_back();
        continue;
      }
      if (best < 0 || e.wake < entries_[best].wake) best = i;
      ++j;
    }
    if (best < 0) break;
    Entry& e = entries_[best];
    if (e.wake.time > now_) {
      if (e.wake.time > step_limit_) break;
      now_ = e.wake.time;  // contract 7: ahead of the kernel
    }
    // Its own process's notification, if any, is for a time this Step has reached: unneeded.
    if (e.wake.time > kernel) e.slot->event.cancel();
    e.armed = false;
    const Key key = e.wake;
    e.source->RunDue(key);
    if (done_ && (*done_)()) {  // contract 2
      stopped_ = true;
      sc_core::sc_pause();
      break;
    }
    if (!waiters_.empty() && WakeSatisfied()) {  // contract 8
      stopped_ = true;
      break;
    }
  }
  in_step_ = false;
  stepping_ = nullptr;
  // Wake-ups this Step deferred and did not run: their processes are notified now.
  for (int i : deferred_) {
    Entry& e = entries_[i];
    e.deferred = false;
    if (e.source && e.armed) Notify(e);
  }
  deferred_.clear();
  // Contract 2: what is still due runs first at the next sc_start (the other processes of
  // this delta cycle return at once, their notifications spent).
  if (stopped_) KickDue();
}

void ScClock::Activate() {
  if (active_) return;
  // Contract 3: one clock follows the kernel in the model's own sc_start calls; in a
  // program's own simulation every clock used there follows it (contract 8).
  if (sc_core::sc_get_status() != sc_core::SC_RUNNING) SuspendActive();
  following_ = this;
  active_ = true;
  ActiveClocks().push_back(this);
  epoch_ticks_ = sc_core::sc_time_stamp().value() - now_ * TicksPerNs();
  for (Entry& e : entries_) {
    if (e.source && e.armed) Notify(e);
  }
}

void ScClock::Suspend() {
  auto& all = ActiveClocks();
  all.erase(std::remove(all.begin(), all.end(), this), all.end());
  if (following_ == this) following_ = all.empty() ? nullptr : all.back();
  active_ = false;
  for (Entry& e : entries_) {
    if (e.slot) e.slot->event.cancel();
  }
}

size_t ScClock::pending() const {
  size_t n = 0;
  for (const Entry& e : entries_) n += e.armed ? 1 : 0;
  return n;
}

void ScClock::SetQuantumNs(uint64_t ns) { QuantumOverride() = ns; }
void ScClock::UseGlobalQuantum() { QuantumOverride().reset(); }
uint64_t ScClock::QuantumNs() {
  if (QuantumOverride()) return *QuantumOverride();
  // TLM-2.0's global quantum, as every LT initiator of the simulation reads it (whole ns).
  const uint64_t global = tlm::tlm_global_quantum::instance().get().value() / TicksPerNs();
  return global > 0 ? global : kDefaultQuantumNs;
}

uint64_t ScClock::AheadNs() {
  const ScClock* c = stepping_ ? stepping_ : following_;
  if (!c) return 0;
  const uint64_t kernel = c->KernelNs();
  return c->now_ > kernel ? c->now_ - kernel : 0;
}

void ScClock::SuspendActive() {
  while (!ActiveClocks().empty()) ActiveClocks().back()->Suspend();
}

void ScClock::BeforeModelCall() {
  // Contract 8: in the program's own simulation every clock follows the kernel (from its
  // first call there on), and time the program spent in its own waits passed for it.
  for (ScClock* c : AllClocks()) {
    c->Activate();
    if (!c->in_step_) c->now_ = std::max(c->now_, c->KernelNs());
  }
}

void ScClock::AfterModelCall() {
  // Contract 8: a call may have made a waiting thread's condition hold (a flush's CQE).
  for (ScClock* c : ActiveClocks()) {
    if (!c->waiters_.empty()) (void)c->WakeSatisfied();
  }
}

uint64_t ScClock::ClampDeadline(uint64_t deadline_ns, uint64_t kernel) {
  // Contract 6: never past what the kernel's time can hold (compared as differences: after
  // a run ahead the epoch may be "negative", contract 7).
  const uint64_t room =
      (sc_core::sc_max_time().value() - sc_core::sc_time_stamp().value()) / TicksPerNs();
  return deadline_ns > kernel && deadline_ns - kernel > room ? kernel + room : deadline_ns;
}

bool ScClock::RunUntil(const std::function<bool()>& done, uint64_t deadline_ns) {
  if (done()) return true;
  if (sc_core::sc_get_status() == sc_core::SC_RUNNING) return RunInThread(done, deadline_ns);
  Activate();
  done_ = &done;
  stopped_ = false;
  // From the kernel's time: this clock's may be ahead of it (contract 7), with wake-ups
  // due between the two.
  const uint64_t kernel = KernelNs();
  deadline_ns = ClampDeadline(deadline_ns, kernel);
  deadline_ = deadline_ns;
  if (deadline_ns > kernel) {
    sc_core::sc_start(sc_core::sc_time::from_value((deadline_ns - kernel) * TicksPerNs()),
                      sc_core::SC_RUN_TO_TIME);
  }
  // Contract 2: what is due at exactly the deadline.
  while (!stopped_ && sc_core::sc_pending_activity_at_current_time()) {
    sc_core::sc_start(sc_core::SC_ZERO_TIME);
  }
  done_ = nullptr;
  now_ = std::max(now_, KernelNs());
  const bool stopped = stopped_;
  stopped_ = false;
  return stopped || done();
}

bool ScClock::WakeSatisfied() {
  bool any = false;
  for (Waiter* w : waiters_) {
    if (!w->satisfied && (*w->done)()) {
      w->satisfied = true;
      w->woken.notify();  // its thread runs in this evaluation phase
      any = true;
    }
  }
  return any;
}

bool ScClock::RunInThread(const std::function<bool()>& done, uint64_t deadline_ns) {
  // Contract 8. A method cannot wait, and its caller's time cannot pass: nothing runs.
  if (!InSimulationThread()) return done();
  Activate();
  deadline_ns = ClampDeadline(deadline_ns, KernelNs());
  Waiter w;
  w.done = &done;
  w.deadline = deadline_ns;
  waiters_.push_back(&w);
  // A thread killed or reset while it waits unwinds through here: it leaves no waiter and
  // no sync behind, and a Step it stopped goes on.
  struct Leave {
    ScClock* clock;
    Waiter* w;
    bool syncing = false;
    // Unlists the waiter (once); if a Step satisfied it, that Step stopped there, and what
    // it left due runs in the next delta cycle.
    void Finish() {
      auto it = std::find(clock->waiters_.begin(), clock->waiters_.end(), w);
      if (it == clock->waiters_.end()) return;
      clock->waiters_.erase(it);
      if (w->satisfied) {
        clock->stopped_ = false;
        clock->KickDue();
      }
    }
    ~Leave() {
      Finish();
      if (syncing) --clock->syncing_;
    }
  } leave{this, &w};
  // kernel.h contract 7: while a kWait call waits, the other threads' calls may run.
  std::optional<TurnYield> yield;
  yield.emplace();
  for (;;) {
    const uint64_t now = KernelNs();
    if (w.satisfied || now >= deadline_ns) break;
    sc_core::wait(sc_core::sc_time::from_value((deadline_ns - now) * TicksPerNs()), w.woken);
  }
  // Contract 2: what is due at exactly the deadline runs before the wait ends (other
  // processes' activity at this time included, a bounded number of delta cycles).
  for (int i = 0; i < 1000 && !w.satisfied && sc_core::sc_pending_activity_at_current_time(); ++i) {
    sc_core::wait(sc_core::SC_ZERO_TIME);
  }
  leave.Finish();
  // A Step that ran ahead (contract 7) ended the wait early in the kernel's time: the
  // thread goes on at the clock's time, as a quantum keeper's sync does; meanwhile no Step
  // runs ahead, so the clock is still there when the thread goes on.
  const uint64_t kernel_now = KernelNs();
  if (now_ > kernel_now) {
    ++syncing_;
    leave.syncing = true;
    sc_core::wait(sc_core::sc_time::from_value((now_ - kernel_now) * TicksPerNs()));
    leave.syncing = false;
    --syncing_;
  }
  yield->Retake();  // the turn again: the engine is this call's
  now_ = std::max(now_, KernelNs());
  return w.satisfied || done();
}

void ScClock::AdvanceBy(uint64_t delta_ns) {
  const uint64_t end = delta_ns > ~uint64_t{0} - now_ ? ~uint64_t{0} : now_ + delta_ns;
  static const std::function<bool()> kNever = [] { return false; };
  (void)RunUntil(kNever, end);
}

}  // namespace qptwin::model::sim
