// A FIFO in a growing ring of slots: push_back, front/back, pop_front, operator[] from the
// front. Unlike std::deque (libstdc++: a 512-byte node per 2 items of 200 bytes, allocated
// and freed as the queue moves) it allocates only when it grows past its largest size so
// far, so a queue that keeps moving costs no allocation per item (issue 15). Up to kBlock
// slots are one array (growing moves the items); a larger ring is blocks of kBlock slots
// (about 64 KiB) and grows by adding blocks, moving fewer than kBlock items: half a million
// messages in flight are neither copied whole nor held twice while the ring grows.
//
// Contract:
//  1. Order and indices as std::deque's: [0] is the front; size() items.
//  2. Capacity is a power of two and never shrinks (clear() keeps it): memory is the largest
//     size the queue has had, not the number of items that passed through.
//  3. pop_front() moves the front out and leaves a default T in its slot (its resources go).
//  4. begin()/end() walk front to back (valid until the next push_back, append, pop_front
//     or drop_front);
//     swap() exchanges two rings' items and storage in O(1).
//  5. append() is push_back without an item: it adds a slot at the back and returns it for
//     the caller to fill (the slot holds a default or moved-from T); drop_front() removes
//     the front without touching its slot, for a caller that has moved the front's
//     resources out itself. Each saves a move of T (a packet on the data path).
#pragma once

#include <cstddef>
#include <memory>
#include <new>
#include <type_traits>
#include <utility>
#include <vector>

namespace qptwin::model::engine {

template <typename T>
class Ring {
 public:
  // Slots per block of a large ring: a power of two, about 64 KiB of slots, at least 4.
  static constexpr size_t kBlock = [] {
    size_t n = 4;
    while (2 * n * sizeof(T) <= 65536) n *= 2;
    return n;
  }();

  bool empty() const { return size_ == 0; }
  size_t size() const { return size_; }
  size_t capacity() const { return blocks_.size() << shift_; }

  T& operator[](size_t i) { return Slot((head_ + i) & mask_); }
  const T& operator[](size_t i) const {
    const size_t s = (head_ + i) & mask_;
    return blocks_[s >> shift_][s & block_mask_];
  }
  T& front() { return (*this)[0]; }
  const T& front() const { return (*this)[0]; }
  T& back() { return (*this)[size_ - 1]; }
  const T& back() const { return (*this)[size_ - 1]; }

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

  // An item of this ring itself may be pushed (as std::vector's): when it grows, the item
  // is taken out of it first.
  void push_back(T&& item) {
    if (size_ == capacity()) {
      T held(std::move(item));
      Grow();
      (*this)[size_++] = std::move(held);
      return;
    }
    (*this)[size_++] = std::move(item);
  }
  void push_back(const T& item) { push_back(T(item)); }
  T& append() {  // contract 5
    if (size_ == capacity()) Grow();
    return (*this)[size_++];
  }
  void drop_front() {  // contract 5
    head_ = (head_ + 1) & mask_;
    --size_;
  }
  template <typename... A>
  void emplace_back(A&&... args) {
    push_back(T(std::forward<A>(args)...));
  }
  // The front item, moved out (contract 3).
  T take_front() {
    T& f = front();
    T item = std::move(f);
    f = T();
    head_ = (head_ + 1) & mask_;
    --size_;
    return item;
  }
  void pop_front() {  // contract 3, without moving the item out first
    T& f = front();
    if constexpr (std::is_nothrow_default_constructible_v<T>) {
      // Made anew in place: no default item built beside it and moved in (a WQE is large).
      f.~T();
      ::new (static_cast<void*>(&f)) T();
    } else {
      f = T();
    }
    head_ = (head_ + 1) & mask_;
    --size_;
  }
  void clear() {
    while (!empty()) pop_front();
    head_ = 0;
  }
  void swap(Ring& other) noexcept {
    blocks_.swap(other.blocks_);
    std::swap(head_, other.head_);
    std::swap(size_, other.size_);
    std::swap(mask_, other.mask_);
    std::swap(shift_, other.shift_);
    std::swap(block_mask_, other.block_mask_);
  }

 private:
  T& Slot(size_t s) { return blocks_[s >> shift_][s & block_mask_]; }

  // Called when full.
  void Grow() {
    const size_t cap = capacity();
    if (cap < kBlock) {  // one array: twice as large, the items moved in order
      const size_t n = cap == 0 ? 4 : 2 * cap;
      std::unique_ptr<T[]> bigger(new T[n]);
      for (size_t i = 0; i < size_; ++i) bigger[i] = std::move((*this)[i]);
      blocks_.clear();
      blocks_.push_back(std::move(bigger));
      SetGeometry(n, n);
      head_ = 0;
      return;
    }
    // Blocks: rotate them so the head's block comes first, then as many new blocks again.
    // The head's block also holds the last items (its slots before the head's offset): they
    // move to the first new block, at the same offsets, which keeps every index in place.
    const size_t nb = blocks_.size();
    const size_t head_block = head_ >> shift_;
    const size_t offset = head_ & block_mask_;
    std::vector<std::unique_ptr<T[]>> blocks;
    blocks.reserve(2 * nb);
    for (size_t j = 0; j < nb; ++j) blocks.push_back(std::move(blocks_[(head_block + j) % nb]));
    for (size_t j = 0; j < nb; ++j) blocks.emplace_back(new T[kBlock]);
    for (size_t k = 0; k < offset; ++k) {
      blocks[nb][k] = std::move(blocks[0][k]);
      blocks[0][k] = T();
    }
    blocks_.swap(blocks);
    SetGeometry(2 * cap, kBlock);
    head_ = offset;
  }
  void SetGeometry(size_t cap, size_t block) {
    mask_ = cap - 1;
    block_mask_ = block - 1;
    shift_ = 0;
    while ((size_t{1} << shift_) < block) ++shift_;
  }

  std::vector<std::unique_ptr<T[]>> blocks_;
  size_t head_ = 0;
  size_t size_ = 0;
  size_t mask_ = 0;        // capacity - 1
  size_t shift_ = 0;       // log2 of the slots per block
  size_t block_mask_ = 0;  // slots per block - 1
};

}  // namespace qptwin::model::engine
