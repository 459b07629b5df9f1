// TimedChannel<T>: a FIFO channel whose items become readable at their own time, T::ready
// (an absolute sc_time). A writer never blocks and a reader is woken once per due item (or
// batch), so a hop that only forwards costs one process activation, and a writer that runs
// ahead of SystemC time (a quantum keeper) hands over exact times.
//
// Contract:
//  1. Items leave in the order written; an item is due when sc_time_stamp() >= its ready.
//     Writers keep ready non-decreasing (each hop of this library does); an item behind a
//     later one waits for it (head of line), never overtakes.
//  2. TryGet pops the head if it is due. ready_event() is notified when the head is due;
//     a reader calls TryGet before it waits, so a notification it missed is never lost.
//     A reader that runs ahead (temporal decoupling) takes items due by a horizon with
//     TryGetBefore and calls ArmHead before it waits.
//  3. Unbounded: the transport's windows (SQ depth, outstanding WQEs) bound what is queued.
//     size() is the occupancy, for tracing.
#pragma once

#include <systemc>

#include <deque>
#include <utility>

namespace qptwin::sc {

template <typename T>
class TimedOutIf : public virtual sc_core::sc_interface {
 public:
  virtual void Put(const T& item) = 0;
};

template <typename T>
class TimedInIf : public virtual sc_core::sc_interface {
 public:
  virtual bool TryGet(T* item) = 0;
  virtual const sc_core::sc_event& ready_event() const = 0;
};

template <typename T>
class TimedChannel : public sc_core::sc_prim_channel, public TimedOutIf<T>, public TimedInIf<T> {
 public:
  TimedChannel() : sc_prim_channel(sc_core::sc_gen_unique_name("timed_channel")) {}
  explicit TimedChannel(const char* name) : sc_prim_channel(name) {}
  // Notifies `shared` (instead of its own event) when the head is due: one reader of several
  // channels waits on one event (an sc_event_or_list costs an allocation per wait).
  TimedChannel(const char* name, sc_core::sc_event* shared) : sc_prim_channel(name), ready_(shared) {}

  void Put(const T& item) override {
    items_.push_back(item);
    if (items_.size() == 1) NotifyHead();
  }
  void Put(T&& item) {
    items_.push_back(std::move(item));
    if (items_.size() == 1) NotifyHead();
  }
  bool TryGet(T* item) override {
    if (items_.empty() || items_.front().ready > sc_core::sc_time_stamp()) return false;
    *item = std::move(items_.front());
    items_.pop_front();
    if (!items_.empty()) NotifyHead();
    return true;
  }
  const sc_core::sc_event& ready_event() const override { return *ready_; }
  // For a reader ahead of SystemC time (temporal decoupling): pops the head if it is due by
  // `horizon`, without notifying the next head; the reader calls ArmHead() before it waits.
  bool TryGetBefore(T* item, const sc_core::sc_time& horizon) {
    if (items_.empty() || items_.front().ready > horizon) return false;
    *item = std::move(items_.front());
    items_.pop_front();
    return true;
  }
  void ArmHead() {
    if (!items_.empty()) NotifyHead();
  }
  int size() const { return static_cast<int>(items_.size()); }

 private:
  void NotifyHead() {
    const sc_core::sc_time now = sc_core::sc_time_stamp();
    const sc_core::sc_time& t = items_.front().ready;
    ready_->notify(t > now ? t - now : sc_core::SC_ZERO_TIME);
  }

  std::deque<T> items_;
  sc_core::sc_event own_;
  sc_core::sc_event* ready_ = &own_;
};

}  // namespace qptwin::sc
