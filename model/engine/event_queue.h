// Timed callbacks in simulated nanoseconds: the engine's only notion of time.
//
// Contract:
//  1. Callbacks run in (time, scheduling order): same inputs, same order, every run.
//  2. Time never goes backwards; At() with a time in the past runs at Now().
//  3. A callback may schedule more callbacks (also at Now(): they run in the same step).
//  4. `on_step(delta_ns)` is called before time moves forward by delta_ns > 0; the SystemC
//     glue (model/sim) uses it to move the kernel's clock. Plain C++, no SystemC here.
#pragma once

#include <cstdint>
#include <functional>
#include <queue>
#include <vector>

namespace qptwin::model::engine {

class EventQueue {
 public:
  using Fn = std::function<void()>;
  using StepHook = std::function<void(uint64_t delta_ns)>;

  uint64_t Now() const { return now_; }
  void At(uint64_t time_ns, Fn fn);
  void After(uint64_t delay_ns, Fn fn) { At(now_ + delay_ns, std::move(fn)); }
  bool Empty() const { return heap_.empty(); }
  size_t Size() const { return heap_.size(); }
  // Time of the earliest callback; only meaningful when !Empty().
  uint64_t NextTime() const { return heap_.top().time; }

  void SetStepHook(StepHook hook) { hook_ = std::move(hook); }

  // Runs every callback due at or before Now() + delta, then sets Now() to that time.
  void AdvanceBy(uint64_t delta_ns);
  // Runs callbacks in order until done() holds or the next callback lies beyond
  // deadline_ns; then time moves to deadline_ns if !done(). Returns done().
  bool RunUntil(const std::function<bool()>& done, uint64_t deadline_ns);

 private:
  struct Item {
    uint64_t time;
    uint64_t seq;
    Fn fn;
  };
  struct Later {
    bool operator()(const Item& a, const Item& b) const {
      return a.time != b.time ? a.time > b.time : a.seq > b.seq;
    }
  };
  void MoveTo(uint64_t t);
  void RunOne();

  std::priority_queue<Item, std::vector<Item>, Later> heap_;
  uint64_t now_ = 0;
  uint64_t seq_ = 0;
  StepHook hook_;
};

}  // namespace qptwin::model::engine
