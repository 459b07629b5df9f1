// Timed callbacks in simulated nanoseconds: the engine's only notion of time.
//
// Contract:
//  1. Callbacks run in (time, scheduling order): same inputs, same order, every run.
//  2. Time never goes backwards; At() with a time in the past runs at Now().
//  3. A callback may schedule more callbacks (also at Now(): they run in the same step).
//  4. `on_step(delta_ns)` is called before time moves forward by delta_ns > 0; the SystemC
//     glue (model/sim) uses it to move the kernel's clock. Plain C++, no SystemC here.
//  5. Sources (event_source.h: a block's FIFO of messages, its timers) keep their own
//     callbacks and hold at most a wake-up or two here for their earliest one, as an
//     sc_module holds one sc_event: the heap holds a few entries per block, never one per
//     QP or per WR in flight. A source's callback gets its Key from Reserve() at the moment
//     At() would have been called, so the order of contract 1 is exactly At()'s.
//  6. A Source outlives every wake-up it has pending (the engine's sources live as long as
//     the World that owns the queue).
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

namespace qptwin::model::engine {

class EventQueue {
 public:
  using Fn = std::function<void()>;
  using StepHook = std::function<void(uint64_t delta_ns)>;

  // A callback's place in the order: its time, then when it was scheduled.
  struct Key {
    uint64_t time = 0;
    uint64_t seq = 0;
    bool operator==(const Key& o) const { return time == o.time && seq == o.seq; }
    bool operator<(const Key& o) const { return time != o.time ? time < o.time : seq < o.seq; }
  };
  // Something that keeps callbacks of its own (contract 5).
  class Source {
   public:
    virtual ~Source() = default;
    // The wake-up for `key` is due: run the callback that has it (if it is still there).
    virtual void RunDue(const Key& key) = 0;
  };

  uint64_t Now() const { return now_; }
  void At(uint64_t time_ns, Fn fn);
  void After(uint64_t delay_ns, Fn fn) { At(now_ + delay_ns, std::move(fn)); }
  // The key At(time_ns, ..) would give now (a past time becomes Now()).
  Key Reserve(uint64_t time_ns) { return Key{time_ns < now_ ? now_ : time_ns, seq_++}; }
  // Calls source->RunDue(key) in key's place of the order.
  void Wake(Source* source, const Key& key);

  bool Empty() const { return heap_.empty(); }
  // Entries in the heap (plain callbacks and wake-ups), not the sources' own callbacks.
  size_t Size() const { return heap_.size(); }
  // Time of the earliest callback; only meaningful when !Empty().
  uint64_t NextTime() const { return heap_.front().key.time; }

  void SetStepHook(StepHook hook) { hook_ = std::move(hook); }

  // Runs every callback due at or before Now() + delta, then sets Now() to that time.
  void AdvanceBy(uint64_t delta_ns);
  // Runs callbacks in order until done() holds or the next callback lies beyond
  // deadline_ns; then time moves to deadline_ns if !done(). Returns done().
  bool RunUntil(const std::function<bool()>& done, uint64_t deadline_ns);

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
  uint64_t now_ = 0;
  uint64_t seq_ = 0;
  StepHook hook_;
};

}  // namespace qptwin::model::engine
