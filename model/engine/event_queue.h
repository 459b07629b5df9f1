// Simulated time in nanoseconds: the engine's only notion of time, and who runs the engine's
// sources (event_source.h) when they are due. Two clocks implement it:
//   HeapQueue (here)           a binary heap of wake-ups; plain C++ (the engine's unit tests
//                              and ModelOptions::clock == kHeap).
//   sim::ScClock (model/sim)   SystemC's scheduler: each source a SystemC process woken by
//                              sc_event::notify(delay); time passes only inside sc_start.
//
// Contract (every clock):
//  1. Sources run in (time, scheduling order) = Key order: same inputs, same order, every
//     run. A wake-up's Key comes from Reserve() at the moment the work was scheduled, so two
//     clocks that get the same calls run the same sources in the same order.
//  2. Time never goes backwards; Reserve() of a time in the past gives Now().
//  3. A source may wake itself or others (also at Now(): they run in the same step, after
//     the keys reserved before them).
//  4. RunUntil(done, deadline) runs due sources in order and checks done() after each one;
//     it returns true as soon as done() holds (time stays where it was, the sources still
//     due then run at the next AdvanceBy/RunUntil), else runs everything due at or before
//     deadline, moves Now() to deadline and returns done(). AdvanceBy(d) is RunUntil(never,
//     Now() + d) (saturating).
//  5. A Source (event_source.h: a block's FIFO of messages, its timers) keeps its own items
//     and holds one wake-up here for the earliest, as an sc_module holds one sc_event: the
//     clock holds a few wake-ups per block, never one per QP or per WR in flight. A source
//     calls Wake() only for a key not later than the one it has pending (or with none
//     pending); RunDue() may get a key the source no longer holds (HeapQueue keeps replaced
//     wake-ups): the source then runs nothing.
//  6. A Source is Add()ed before its first Wake() and Remove()d before it dies; a clock
//     outlives its sources (the World owns the clock and destroys it last).
//  7. Single-threaded: one thread uses a clock and its sources (sim::ScClock: the SystemC
//     kernel's thread, model/sim/kernel.h contract 4).
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

namespace qptwin::model::engine {

class EventQueue {
 public:
  // A wake-up's place in the order: its time, then when it was scheduled.
  struct Key {
    uint64_t time = 0;
    uint64_t seq = 0;
    bool operator==(const Key& o) const { return time == o.time && seq == o.seq; }
    bool operator<(const Key& o) const { return time != o.time ? time < o.time : seq < o.seq; }
  };
  // Something that keeps items of its own (contract 5).
  class Source {
   public:
    virtual ~Source() = default;
    // The wake-up for `key` is due: run the item that has it (if it is still there).
    virtual void RunDue(const Key& key) = 0;

   private:
    friend class EventQueue;
    int clock_index_ = -1;  // the clock's own bookkeeping (ScClock: its table of sources)
  };

  virtual ~EventQueue() = default;

  uint64_t Now() const { return now_; }
  // The key of work scheduled now for time_ns (a past time becomes Now()).
  Key Reserve(uint64_t time_ns) { return Key{time_ns < now_ ? now_ : time_ns, seq_++}; }

  virtual void Add(Source* source) { (void)source; }
  virtual void Remove(Source* source) { (void)source; }
  // Calls source->RunDue(key) in key's place of the order (contract 5: replaces the pending
  // wake-up of `source`, which was not earlier).
  virtual void Wake(Source* source, const Key& key) = 0;

  // Contract 4.
  virtual void AdvanceBy(uint64_t delta_ns) = 0;
  virtual bool RunUntil(const std::function<bool()>& done, uint64_t deadline_ns) = 0;

 protected:
  static int& IndexOf(Source* s) { return s->clock_index_; }
  uint64_t now_ = 0;
  uint64_t seq_ = 0;
};

// The heap clock: wake-ups (and, for tests, plain callbacks) in a binary heap ordered by Key.
class HeapQueue : public EventQueue {
 public:
  using Fn = std::function<void()>;
  using StepHook = std::function<void(uint64_t delta_ns)>;

  // A plain callback at time_ns (tests; the engine schedules only through sources).
  void At(uint64_t time_ns, Fn fn);
  void After(uint64_t delay_ns, Fn fn) { At(now_ + delay_ns, std::move(fn)); }
  void Wake(Source* source, const Key& key) override;

  bool Empty() const { return heap_.empty(); }
  // Entries in the heap (plain callbacks and wake-ups), not the sources' own items.
  size_t Size() const { return heap_.size(); }
  // Time of the earliest entry; only meaningful when !Empty().
  uint64_t NextTime() const { return heap_.front().key.time; }

  // Called before time moves forward by delta_ns > 0 (model_backend moved SystemC's clock
  // along with it, sim::Advance).
  void SetStepHook(StepHook hook) { hook_ = std::move(hook); }

  void AdvanceBy(uint64_t delta_ns) override;
  bool RunUntil(const std::function<bool()>& done, uint64_t deadline_ns) override;

 private:
  struct Item {
    Key key;
    Source* source;  // null: a plain callback
    Fn fn;
  };
  struct Later {
    bool operator()(const Item& a, const Item& b) const { return b.key < a.key; }
  };
  void Push(Item item);
  void MoveTo(uint64_t t);
  void RunOne();

  std::vector<Item> heap_;  // a binary heap under Later
  StepHook hook_;
};

}  // namespace qptwin::model::engine
