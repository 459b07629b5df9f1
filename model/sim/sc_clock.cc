#include "model/sim/sc_clock.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

// sc_spawn and sc_spawn_options: Bazel defines this (local_defines), tools/fuzz/build.sh's
// plain clang++ build does not.
#ifndef SC_INCLUDE_DYNAMIC_PROCESSES
#define SC_INCLUDE_DYNAMIC_PROCESSES
#endif
#include <systemc>

#include "model/sim/kernel.h"

namespace qptwin::model::sim {

struct ScClock::Slot {
  sc_core::sc_event event;
  ScClock* clock = nullptr;  // the clock of the source that holds the slot; null: free
};

namespace {

// Kernel state, touched only on the kernel's thread (contract 5).
ScClock*& Active() {
  static ScClock* active = nullptr;
  return active;
}

std::vector<ScClock::Slot*>& FreeSlots() {  // contract 4; slots are never freed
  static auto* free = new std::vector<ScClock::Slot*>;
  return *free;
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
  epoch_ticks_ = sc_core::sc_time_stamp().value();
}

ScClock::~ScClock() {
  if (Active() == this) Active() = nullptr;
  for (Entry& e : entries_) {
    if (e.source) Remove(e.source);
  }
}

uint64_t ScClock::KernelNs() const {
  return (sc_core::sc_time_stamp().value() - epoch_ticks_) / TicksPerNs();
}

void ScClock::Add(Source* source) {
  Slot* slot = nullptr;
  if (!FreeSlots().empty()) {
    slot = FreeSlots().back();
    FreeSlots().pop_back();
  } else {
    slot = new Slot;
    sc_core::sc_spawn_options opts;
    opts.spawn_method();
    opts.dont_initialize();
    opts.set_sensitivity(&slot->event);
    sc_core::sc_spawn(
        [slot] {
          if (slot->clock) slot->clock->Step();
        },
        sc_core::sc_gen_unique_name("qptwin_source"), &opts);
  }
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
  FreeSlots().push_back(e.slot);
  if (e.listed) armed_.erase(std::find(armed_.begin(), armed_.end(), index));
  e = Entry{};
  free_.push_back(index);
  IndexOf(source) = -1;
}

void ScClock::Notify(Entry& e) {
  e.slot->event.cancel();  // contract 5 of event_queue.h: the new key is not later
  if (e.wake.time <= now_) {
    e.slot->event.notify(sc_core::SC_ZERO_TIME);
  } else {
    e.slot->event.notify(sc_core::sc_time::from_value((e.wake.time - now_) * TicksPerNs()));
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
  if (in_step_ && key.time <= now_) return;  // the running Step takes it (contract 1)
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
  now_ = KernelNs();
  in_step_ = true;
  for (;;) {
    int best = -1;
    for (size_t j = 0; j < armed_.size();) {
      const int i = armed_[j];
      Entry& e = entries_[i];
      if (!e.armed) {  // ran or was replaced since: off the list
        e.listed = false;
        armed_[j] = armed_.back();
        armed_.pop_back();
        continue;
      }
      if (e.wake.time <= now_ && (best < 0 || e.wake < entries_[best].wake)) best = i;
      ++j;
    }
    if (best < 0) break;
    entries_[best].armed = false;
    const Key key = entries_[best].wake;
    entries_[best].source->RunDue(key);
    if (done_ && (*done_)()) {  // contract 2
      stopped_ = true;
      sc_core::sc_pause();
      KickDue();
      break;
    }
  }
  in_step_ = false;
}

void ScClock::Activate() {
  if (active_) return;
  if (Active()) Active()->Suspend();
  Active() = this;
  active_ = true;
  epoch_ticks_ = sc_core::sc_time_stamp().value() - now_ * TicksPerNs();
  for (Entry& e : entries_) {
    if (e.source && e.armed) Notify(e);
  }
}

void ScClock::Suspend() {
  if (Active() == this) Active() = nullptr;
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

void ScClock::SuspendActive() {
  if (Active()) Active()->Suspend();
}

bool ScClock::RunUntil(const std::function<bool()>& done, uint64_t deadline_ns) {
  if (done()) return true;
  Activate();
  done_ = &done;
  stopped_ = false;
  // Contract 6: never past what the kernel's time can hold.
  const uint64_t room =
      (sc_core::sc_max_time().value() - sc_core::sc_time_stamp().value()) / TicksPerNs();
  if (deadline_ns > now_ + room) deadline_ns = now_ + room;
  if (deadline_ns > now_) {
    sc_core::sc_start(sc_core::sc_time::from_value((deadline_ns - now_) * TicksPerNs()),
                      sc_core::SC_RUN_TO_TIME);
  }
  // Contract 2: what is due at exactly the deadline.
  while (!stopped_ && sc_core::sc_pending_activity_at_current_time()) {
    sc_core::sc_start(sc_core::SC_ZERO_TIME);
  }
  done_ = nullptr;
  now_ = KernelNs();
  const bool stopped = stopped_;
  stopped_ = false;
  return stopped || done();
}

void ScClock::AdvanceBy(uint64_t delta_ns) {
  const uint64_t end = delta_ns > ~uint64_t{0} - now_ ? ~uint64_t{0} : now_ + delta_ns;
  static const std::function<bool()> kNever = [] { return false; };
  (void)RunUntil(kNever, end);
}

}  // namespace qptwin::model::sim
