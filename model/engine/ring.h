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
//  4. begin()/end() walk front to back (valid until the next push_back or pop_front);
//     swap() exchanges two rings' items and storage in O(1).
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

  template <typename R, typename V>
  class Iter {
   public:
    Iter(R* ring, size_t i) : ring_(ring), i_(i) {}
    V& operator*() const { return (*ring_)[i_]; }
    V* operator->() const { return &(*ring_)[i_]; }
    Iter& operator++() {
      ++i_;
      return *this;
    }
    bool operator==(const Iter& o) const { return i_ == o.i_; }
    bool operator!=(const Iter& o) const { return i_ != o.i_; }

   private:
    R* ring_;
    size_t i_;
  };
  using iterator = Iter<Ring, T>;
  using const_iterator = Iter<const Ring, const T>;
  iterator begin() { return iterator(this, 0); }
  iterator end() { return iterator(this, size_); }
  const_iterator begin() const { return const_iterator(this, 0); }
  const_iterator end() const { return const_iterator(this, size_); }

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
  template <typename... A>
  void emplace_back(A&&... args) {
    push_back(T(std::forward<A>(args)...));
  }
  void swap(Ring& other) noexcept {
    slots_.swap(other.slots_);
    std::swap(head_, other.head_);
    std::swap(size_, other.size_);
  }
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
