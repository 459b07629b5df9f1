#include "model/engine/event_queue.h"

#include <algorithm>

namespace qptwin::model::engine {

void HeapQueue::Push(Item item) {
  heap_.push_back(std::move(item));
  std::push_heap(heap_.begin(), heap_.end(), Later{});
}

void HeapQueue::At(uint64_t time_ns, Fn fn) { Push(Item{Reserve(time_ns), nullptr, std::move(fn)}); }

void HeapQueue::Wake(Source* source, const Key& key) { Push(Item{key, source, nullptr}); }

void HeapQueue::MoveTo(uint64_t t) {
  if (t <= now_) return;
  if (hook_) hook_(t - now_);
  now_ = t;
}

void HeapQueue::RunOne() {
  // Take the item out before running it: the callback may push onto the heap.
  std::pop_heap(heap_.begin(), heap_.end(), Later{});
  Item item = std::move(heap_.back());
  heap_.pop_back();
  MoveTo(item.key.time);
  if (item.source) {
    item.source->RunDue(item.key);
  } else {
    item.fn();
  }
}

void HeapQueue::AdvanceBy(uint64_t delta_ns) {
  uint64_t end = delta_ns > ~uint64_t{0} - now_ ? ~uint64_t{0} : now_ + delta_ns;
  while (!heap_.empty() && heap_.front().key.time <= end) RunOne();
  MoveTo(end);
}

bool HeapQueue::RunUntil(const std::function<bool()>& done, uint64_t deadline_ns) {
  for (;;) {
    if (done()) return true;
    if (heap_.empty() || heap_.front().key.time > deadline_ns) break;
    RunOne();
  }
  MoveTo(deadline_ns);
  return done();
}

}  // namespace qptwin::model::engine
