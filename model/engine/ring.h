// A FIFO in one growing array (a ring): push_back, front/back, pop_front, operator[] from the
// front. Unlike std::deque (libstdc++: a 512-byte node per 2 items of 200 bytes, allocated
// and freed as the queue moves) it allocates only when it grows past its largest size so
// far, so a queue that keeps moving costs no allocation per item (issue 15).
//
// Contract:
//  1. Order and indices as std::deque's: [0] is the front; size() items.
//  2. Capacity is a power of two and never shrinks (clear() keeps it): memory is the largest
//     size the queue has had, not the number of items that passed through.
//  3. pop_front() moves the front out and leaves a default T in its slot (its resources go).
#pragma once

#include <cstddef>
#include <utility>
#include <vector>

namespace qptwin::model::engine {

template <typename T>
class Ring {
 public:
  bool empty() const { return size_ == 0; }
  size_t size() const { return size_; }
  size_t capacity() const { return slots_.size(); }

  T& operator[](size_t i) { return slots_[(head_ + i) & (slots_.size() - 1)]; }
  const T& operator[](size_t i) const { return slots_[(head_ + i) & (slots_.size() - 1)]; }
  T& front() { return (*this)[0]; }
  const T& front() const { return (*this)[0]; }
  T& back() { return (*this)[size_ - 1]; }
  const T& back() const { return (*this)[size_ - 1]; }

  void push_back(T item) {
    if (size_ == slots_.size()) Grow();
    (*this)[size_] = std::move(item);
    ++size_;
  }
  // The front item, moved out (contract 3).
  T take_front() {
    T item = std::move(front());
    front() = T();
    head_ = (head_ + 1) & (slots_.size() - 1);
    --size_;
    return item;
  }
  void pop_front() { (void)take_front(); }
  void clear() {
    while (!empty()) pop_front();
    head_ = 0;
  }

 private:
  void Grow() {
    std::vector<T> bigger(slots_.empty() ? 4 : 2 * slots_.size());
    for (size_t i = 0; i < size_; ++i) bigger[i] = std::move((*this)[i]);
    slots_.swap(bigger);
    head_ = 0;
  }

  std::vector<T> slots_;
  size_t head_ = 0;
  size_t size_ = 0;
};

}  // namespace qptwin::model::engine
