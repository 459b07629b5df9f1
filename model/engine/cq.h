// A completion queue: a bounded FIFO of work completions plus its notification state.
//
// Contract:
//  1. Push() never drops silently: on a full queue it returns false, and the caller
//     reports the overflow (IB_EVENT_CQ_ERR, rxe_cq_post returns -EBUSY).
//  2. With `sticky_error` (IBTA: a CQ overrun is a CQ error), every Push() after an
//     overflow fails too; without it (rxe_cq_post) a Push fails only while the CQ is full.
//  3. Arm()/TakeNotify(): one notification per arm (ibv_req_notify_cq semantics); a
//     solicited-only arm fires for solicited completions and for errors.
//  4. A completion pushed with `visible_at` is in the queue (it counts against the depth)
//     but Poll(.., now) returns it only once now >= visible_at: the CQE's DMA write is on
//     its way. visible_at never decreases from one Push to the next (FIFO stays FIFO).
#pragma once

#include <cstdint>

#include "model/engine/ring.h"

#include "spec/backend.h"

namespace qptwin::model::engine {

class Cq {
 public:
  Cq(uint32_t handle, uint32_t ctx, int depth, uint32_t channel, bool sticky_error = true)
      : handle_(handle), ctx_(ctx), depth_(depth), channel_(channel), sticky_(sticky_error) {}

  uint32_t handle() const { return handle_; }
  uint32_t ctx() const { return ctx_; }
  uint32_t channel() const { return channel_; }
  int depth() const { return depth_; }
  size_t size() const { return entries_.size(); }
  bool in_error() const { return error_; }
  bool sticky_error() const { return sticky_; }

  bool Push(const WorkCompletion& wc, uint64_t visible_at = 0);
  // ibv_resize_cq: the entries stay, in order (Nic::ResizeCq checks depth >= size()).
  void set_depth(int depth) { depth_ = depth; }
  int Poll(int max, WorkCompletion* out, uint64_t now = ~uint64_t{0});

  void Arm(bool solicited_only) {
    armed_ = true;
    solicited_only_ = solicited_only;
  }
  // True when the completion just pushed should wake the channel (and disarms).
  bool TakeNotify(bool solicited, bool error);

  int users = 0;                 // QPs and SRQs that post here
  unsigned events_unacked = 0;   // CQ events delivered and not yet acknowledged

 private:
  uint32_t handle_;
  uint32_t ctx_;
  int depth_;
  uint32_t channel_;
  bool sticky_;
  struct Entry {
    WorkCompletion wc;
    uint64_t visible_at;
  };
  Ring<Entry> entries_;
  uint64_t last_visible_ = 0;
  bool error_ = false;
  bool armed_ = false;
  bool solicited_only_ = false;
};

}  // namespace qptwin::model::engine
