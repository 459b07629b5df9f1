#include "model/engine/event_queue.h"

namespace qptwin::model::engine {

void EventQueue::At(uint64_t time_ns, Fn fn) {
  heap_.push(Item{time_ns < now_ ? now_ : time_ns, seq_++, std::move(fn)});
}

void EventQueue::MoveTo(uint64_t t) {
  if (t <= now_) return;
  if (hook_) hook_(t - now_);
  now_ = t;
}

void EventQueue::RunOne() {
  // Copy out before popping: the callback may push onto the heap.
  Fn fn = std::move(const_cast<Item&>(heap_.top()).fn);
  MoveTo(heap_.top().time);
  heap_.pop();
  fn();
}

void EventQueue::AdvanceBy(uint64_t delta_ns) {
  uint64_t end = delta_ns > ~uint64_t{0} - now_ ? ~uint64_t{0} : now_ + delta_ns;
  while (!heap_.empty() && heap_.top().time <= end) RunOne();
  MoveTo(end);
}

bool EventQueue::RunUntil(const std::function<bool()>& done, uint64_t deadline_ns) {
  for (;;) {
    if (done()) return true;
    if (heap_.empty() || heap_.top().time > deadline_ns) break;
    RunOne();
  }
  MoveTo(deadline_ns);
  return done();
}

}  // namespace qptwin::model::engine
