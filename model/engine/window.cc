#include "model/engine/window.h"

#include <cerrno>

namespace qptwin::model::engine {
namespace {

constexpr uint32_t kKeyByte = 0xff;

uint32_t IndexOf(uint32_t key) { return key >> 8; }

}  // namespace

Mw* MwTable::Alloc(uint32_t handle, uint32_t ctx, uint32_t pd, MwType type) {
  // The first free index from next_index_ on, wrapping once (rxe_pool.c xa_alloc_cyclic).
  const uint32_t span = kMaxIndex - kMinIndex + 1;
  uint32_t index = 0;
  for (uint32_t i = 0; i < span; ++i) {
    const uint32_t candidate = kMinIndex + (next_index_ - kMinIndex + i) % span;
    if (by_index_.count(candidate) == 0) {
      index = candidate;
      break;
    }
  }
  if (index == 0) return nullptr;
  next_index_ = index == kMaxIndex ? kMinIndex : index + 1;
  Mw mw;
  mw.handle = handle;
  mw.ctx = ctx;
  mw.pd = pd;
  mw.type = type;
  // rxe_alloc_mw: index << 8 | rxe_get_next_key(-1); type 1 VALID, type 2 FREE.
  mw.rkey = mw.host_rkey = (index << 8) | next_key_++;
  mw.valid = type == MwType::kType1;
  by_index_[index] = handle;
  return &(by_handle_[handle] = mw);
}

void MwTable::Dealloc(uint32_t handle) {
  auto it = by_handle_.find(handle);
  if (it == by_handle_.end()) return;
  by_index_.erase(IndexOf(it->second.rkey));
  by_handle_.erase(it);  // rxe_mw_cleanup: unbound from its region and QP with it
}

void MwTable::DeallocContext(uint32_t ctx) {
  for (auto it = by_handle_.begin(); it != by_handle_.end();) {
    if (it->second.ctx == ctx) {
      by_index_.erase(IndexOf(it->second.rkey));
      it = by_handle_.erase(it);
    } else {
      ++it;
    }
  }
}

Mw* MwTable::ByHandle(uint32_t handle) {
  auto it = by_handle_.find(handle);
  return it == by_handle_.end() ? nullptr : &it->second;
}

Mw* MwTable::ByIndex(uint32_t key) {
  auto it = by_index_.find(IndexOf(key));
  return it == by_index_.end() ? nullptr : ByHandle(it->second);
}

size_t MwTable::CountForPd(uint32_t pd) const {
  size_t n = 0;
  for (const auto& [h, mw] : by_handle_) n += mw.pd == pd;
  return n;
}

size_t MwTable::BoundToQp(uint32_t qp) const {
  size_t n = 0;
  for (const auto& [h, mw] : by_handle_) {
    n += mw.type == MwType::kType2 && mw.valid && mw.qp == qp && qp != 0;
  }
  return n;
}

size_t MwTable::BoundTo(uint32_t mr) const {
  size_t n = 0;
  for (const auto& [h, mw] : by_handle_) n += mw.mr == mr && mw.mr != 0;
  return n;
}

int MwTable::Bind(const BindRequest& r) {
  Mw* mw = ByIndex(r.mw_rkey);
  if (mw == nullptr || mw->rkey != r.mw_rkey) return EINVAL;  // not the window's current rkey
  // A region is looked up only for a bind with a length (rxe_bind_mw).
  const Mr* mr = r.length ? r.mr : nullptr;
  if (r.length && mr == nullptr) return EINVAL;
  if (mw->type == MwType::kType1) {
    if (r.access & access::kZeroBased) return EINVAL;  // o10-36.2.2
  } else {
    if (mw->valid) return EINVAL;                     // o10-37.2.30: only a FREE one
    if (r.qp_pd != mw->pd) return EINVAL;             // C10-72
    if (mr == nullptr) return EINVAL;                 // o10-37.2.40: no unbind by length 0
  }
  if (mr != nullptr) {
    if (mr->access & access::kZeroBased) return EINVAL;
    if (!(mr->access & access::kMwBind)) return EINVAL;  // C10-73
    if ((r.access & (access::kRemoteWrite | access::kRemoteAtomic)) &&
        !(mr->access & access::kLocalWrite)) {
      return EINVAL;  // C10-74
    }
    const uint64_t start = reinterpret_cast<uint64_t>(mr->buf);
    if (r.access & access::kZeroBased) {  // C10-75
      if (r.length > mr->length) return EINVAL;
    } else if (r.addr < start || r.length > mr->length || r.addr - start > mr->length - r.length) {
      return EINVAL;
    }
  }
  // rxe_do_bind_mw: the key byte is the WR's; the index stays.
  mw->rkey = (mw->rkey & ~kKeyByte) | (r.new_rkey & kKeyByte);
  mw->access = r.access;
  mw->valid = true;
  mw->addr = r.addr;
  mw->length = r.length;
  mw->mr = mr ? mr->handle : 0;
  if (mw->type == MwType::kType2) mw->qp = r.qp;
  return 0;
}

int MwTable::Invalidate(uint32_t rkey) {
  Mw* mw = ByIndex(rkey);
  if (mw == nullptr || mw->rkey != rkey) return EINVAL;
  if (mw->type == MwType::kType1) return EINVAL;  // o10-37.2.26
  // A FREE type 2 window: rxe 6.1 rxe_do_invalidate_mw puts its NULL QP (a kernel oops, so
  // no answer to twin; the caller records the fault, NamesFreeType2); the model refuses it
  // like an invalid one.
  if (!mw->valid) return EINVAL;
  mw->valid = false;
  mw->mr = 0;
  mw->qp = 0;
  mw->access = 0;
  mw->addr = 0;
  mw->length = 0;
  return 0;
}

bool MwTable::NamesFreeType2(uint32_t rkey) const {
  auto it = by_index_.find(IndexOf(rkey));
  if (it == by_index_.end()) return false;
  const Mw& mw = by_handle_.at(it->second);
  return mw.rkey == rkey && mw.type == MwType::kType2 && !mw.valid;
}

const Mw* MwTable::Lookup(uint32_t rkey, const WindowAccess& a, uint64_t* region_addr) const {
  auto it = by_index_.find(IndexOf(rkey));
  if (it == by_index_.end()) return nullptr;
  const Mw& mw = by_handle_.at(it->second);
  // rxe_lookup_mw: the rkey, the PD, the QP of a type 2 window, a length, the rights, VALID.
  if (mw.rkey != rkey || mw.pd != a.pd || (mw.type == MwType::kType2 && mw.qp != a.qp) ||
      mw.length == 0 || (a.need & mw.access) != a.need || !mw.valid || mw.mr == 0) {
    return nullptr;
  }
  const uint64_t at = a.addr + ((mw.access & access::kZeroBased) ? mw.addr : 0);
  if (!a.range_of_region && a.len > 0 &&
      (at < mw.addr || a.len > mw.length || at - mw.addr > mw.length - a.len)) {
    return nullptr;  // IBTA: the bytes lie inside the window
  }
  *region_addr = at;
  return &mw;
}

}  // namespace qptwin::model::engine
