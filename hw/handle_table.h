// A per-Device table of live objects, named by spec handles.
//
// Invariants:
//  1. Ids come from an IdSource shared by every Device of one Backend, so a handle of one
//     Device is never found in another Device's table (foreign handles give EINVAL).
//  2. Ids are never reused: a destroyed handle stays unknown forever.
//  3. Not thread-safe; the owning Device serialises access (spec/backend.h contract 5).
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <vector>

#include "spec/backend.h"

namespace qptwin::hw {

// Hands out handle ids, unique within one Backend (0 is never returned).
class IdSource {
 public:
  uint32_t Next() {
    uint32_t id = next_.fetch_add(1, std::memory_order_relaxed);
    return id == 0 ? next_.fetch_add(1, std::memory_order_relaxed) : id;
  }

 private:
  std::atomic<uint32_t> next_{1};
};

template <typename Tag, typename T>
class HandleTable {
 public:
  using HandleType = Handle<Tag>;

  explicit HandleTable(std::shared_ptr<IdSource> ids) : ids_(std::move(ids)) {}

  HandleType Add(T value) {
    HandleType h;
    h.id = ids_->Next();
    entries_.emplace(h.id, std::move(value));
    return h;
  }

  // nullptr for a null, foreign or removed handle.
  T* Find(HandleType h) {
    auto it = entries_.find(h.id);
    return it == entries_.end() ? nullptr : &it->second;
  }
  const T* Find(HandleType h) const {
    auto it = entries_.find(h.id);
    return it == entries_.end() ? nullptr : &it->second;
  }

  bool Remove(HandleType h) { return entries_.erase(h.id) == 1; }

  // Live handles, newest first (the order a destructor releases them in).
  std::vector<HandleType> NewestFirst() const {
    std::vector<HandleType> out;
    out.reserve(entries_.size());
    for (auto it = entries_.rbegin(); it != entries_.rend(); ++it) {
      HandleType h;
      h.id = it->first;
      out.push_back(h);
    }
    return out;
  }

  // Calls f(handle, value&) for every live entry, oldest first.
  template <typename F>
  void ForEach(F&& f) {
    for (auto& [id, value] : entries_) {
      HandleType h;
      h.id = id;
      f(h, value);
    }
  }

  template <typename F>
  void ForEach(F&& f) const {
    for (const auto& [id, value] : entries_) {
      HandleType h;
      h.id = id;
      f(h, value);
    }
  }

  size_t size() const { return entries_.size(); }

 private:
  std::shared_ptr<IdSource> ids_;
  std::map<uint32_t, T> entries_;
};

}  // namespace qptwin::hw
