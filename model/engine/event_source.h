// The two kinds of EventQueue::Source a NIC block uses (event_queue.h contract 5):
//  EventFifo<T>    items that come due in the order they were pushed (a port's packets on
//                  their way to the far NIC, the send engine's ready list of QPs): one
//                  wake-up in the queue, for the head.
//  EventTimers<T>  items due at any time (one transport timer per QP): their own heap,
//                  one wake-up in the clock for the earliest (an earlier timer replaces it).
//
// Contract:
//  1. Push(time, item) runs handler(item) exactly where EventQueue::At(time, ..) called at
//     the same moment would have run it: same time, same order against every other
//     callback (the item takes its key from EventQueue::Reserve()).
//  2. EventFifo: a push earlier than the last one pushed would break the FIFO; it is put
//     in its place by key instead (still contract 1; O(items it passes)) and counted
//     (out_of_order()) so that tests can show it never happens on the data path.
//  3. size() is what the source holds; the clock holds 1 wake-up per source at most.
//  4. Single-threaded, like the clock; a source is Add()ed to its clock when made and
//     Remove()d when destroyed (event_queue.h contract 6), with the block it is
//     (EventQueue::Where, event_queue.h contract 8) given to its constructor.
#pragma once

#include <cstdint>
#include <functional>
#include <queue>
#include <utility>
#include <vector>

#include "model/engine/event_queue.h"
#include "model/engine/ring.h"

namespace qptwin::model::engine {

template <typename T>
class EventFifo : public EventQueue::Source {
 public:
  using Handler = std::function<void(T&)>;
  EventFifo(EventQueue* queue, Handler handler, EventQueue::Where where = {})
      : Source(where), queue_(queue), handler_(std::move(handler)) {
    queue_->Add(this);
  }
  ~EventFifo() override { queue_->Remove(this); }
  EventFifo(const EventFifo&) = delete;
  EventFifo& operator=(const EventFifo&) = delete;

  void Push(uint64_t time_ns, T item) {
    PushFilled(time_ns, [&item](T& slot) { slot = std::move(item); });
  }
  // Push of an item that fill(T&) writes into its slot (a default or moved-from T): no
  // temporary to move (ring.h contract 5).
  template <typename Fill>
  void PushFilled(uint64_t time_ns, Fill&& fill) {
    const uint64_t t = time_ns < queue_->Now() ? queue_->Now() : time_ns;
    Entry& e = entries_.append();
    e.key = queue_->Reserve(t);
    fill(e.item);
    size_t i = entries_.size() - 1;
    if (i > 0 && t < entries_[i - 1].key.time) {
      ++out_of_order_;  // contract 2: back to its place by key (its seq is the largest)
      for (; i > 0 && t < entries_[i - 1].key.time; --i) std::swap(entries_[i], entries_[i - 1]);
    }
    if (i == 0) queue_->Wake(this, entries_.front().key);
  }

  size_t size() const { return entries_.size(); }
  bool empty() const { return entries_.empty(); }
  // The time of the last item pushed (0 when empty).
  uint64_t back_time() const { return entries_.empty() ? 0 : entries_.back().key.time; }
  uint64_t out_of_order() const { return out_of_order_; }

  void RunDue(const EventQueue::Key& key) override {
    if (entries_.empty() || !(entries_.front().key == key)) return;  // a replaced wake-up
    T item = std::move(entries_.front().item);
    entries_.drop_front();  // its item is moved out (ring.h contract 5)
    if (!entries_.empty()) queue_->Wake(this, entries_.front().key);
    handler_(item);
  }

 private:
  struct Entry {
    EventQueue::Key key;
    T item;
  };
  EventQueue* queue_;
  Handler handler_;
  Ring<Entry> entries_;  // no allocation per item (ring.h)
  uint64_t out_of_order_ = 0;
};

template <typename T>
class EventTimers : public EventQueue::Source {
 public:
  using Handler = std::function<void(T&)>;
  EventTimers(EventQueue* queue, Handler handler, EventQueue::Where where = {})
      : Source(where), queue_(queue), handler_(std::move(handler)) {
    queue_->Add(this);
  }
  ~EventTimers() override { queue_->Remove(this); }
  EventTimers(const EventTimers&) = delete;
  EventTimers& operator=(const EventTimers&) = delete;

  void Push(uint64_t time_ns, T item) {
    const EventQueue::Key key = queue_->Reserve(time_ns);
    const bool earliest = heap_.empty() || key < heap_.top().key;
    heap_.push(Entry{key, std::move(item)});
    if (earliest) Arm();
  }

  size_t size() const { return heap_.size(); }
  bool empty() const { return heap_.empty(); }

  void RunDue(const EventQueue::Key& key) override {
    // An older wake-up of an entry that is no longer the earliest, or already ran.
    if (!armed_ || !(key == armed_key_)) return;
    T item = std::move(const_cast<Entry&>(heap_.top()).item);
    heap_.pop();
    armed_ = false;
    if (!heap_.empty()) Arm();
    handler_(item);
  }

 private:
  struct Entry {
    EventQueue::Key key;
    T item;
  };
  struct Later {
    bool operator()(const Entry& a, const Entry& b) const { return b.key < a.key; }
  };
  void Arm() {
    armed_ = true;
    armed_key_ = heap_.top().key;
    queue_->Wake(this, armed_key_);
  }

  EventQueue* queue_;
  Handler handler_;
  std::priority_queue<Entry, std::vector<Entry>, Later> heap_;
  bool armed_ = false;
  EventQueue::Key armed_key_;
};

}  // namespace qptwin::model::engine
