// ibv_modify_srq, ibv_query_srq and ibv_resize_cq on the model, with the checks rxe makes
// (kernel 6.1 rxe_srq.c rxe_srq_chk_attr / rxe_srq_from_attr, rxe_verbs.c rxe_query_srq,
// rxe_cq.c rxe_cq_chk_attr / rxe_cq_resize_queue), which are also IBTA 11.2.3 / 11.2.6's.
#include <algorithm>
#include <cerrno>

#include "model/engine/nic.h"
#include "model/engine/world.h"

namespace qptwin::model::engine {

int Nic::ModifySrq(uint32_t ctx, uint32_t srq, const SrqAttr& attr, uint32_t mask) {
  Srq* s = FindSrq(ctx, srq);
  if (!s) return EINVAL;
  if (mask & ~(srq_attr::kMaxWr | srq_attr::kLimit)) return EINVAL;
  const DeviceAttr& d = profile().device;
  uint32_t slots = s->max_wr;
  if (mask & srq_attr::kMaxWr) {
    // rxe_srq_chk_attr: 0 < max_wr <= max_srq_wr, not below the armed limit.
    if (attr.max_wr == 0 || attr.max_wr > static_cast<uint32_t>(d.max_srq_wr)) return EINVAL;
    if (s->limit && attr.max_wr < s->limit) return EINVAL;
    slots = QueueSlots(profile().behaviour, attr.max_wr);
    // rxe_queue_resize: the WRs queued must fit the new ring (a driver's too: recv_queue.h
    // contract 6).
    const size_t held = s->rq.placed() ? s->rq.Held(Cpu(DmaKind::kRecvDbRec, 0)) : s->rq.size();
    if (slots < held) return EINVAL;
  }
  if (mask & srq_attr::kLimit) {
    // rxe_srq_chk_attr: the limit is checked against the ring before this resize.
    if (attr.srq_limit > static_cast<uint32_t>(d.max_srq_wr) || attr.srq_limit > s->max_wr) {
      return EINVAL;
    }
  }
  QueueBlock ring;  // queue_memory.h contract 2: a placed ring moves to a new block
  if (s->rq.placed() && slots != s->max_wr &&
      !TakeResizedBlock(s->rq.arena(), RecvQueue::PlacedBytes(slots, s->max_sge), &ring)) {
    return ENOMEM;
  }
  if (ring) s->rq.MoveTo(std::move(ring), slots, Cpu(DmaKind::kRecvWqe, 0));
  s->max_wr = slots;
  if (mask & srq_attr::kLimit) s->limit = attr.srq_limit;
  return 0;
}

bool Nic::TakeResizedBlock(const std::shared_ptr<QueueArena>& own, uint64_t bytes,
                           QueueBlock* out) {
  // queue_memory.h contract 2: the window named last (a new buffer a driver named for the
  // resized queue), else the queue's own.
  if (queue_arena_ && queue_arena_ != own && QueueBlock::Take(queue_arena_, bytes, out)) return true;
  return QueueBlock::Take(own, bytes, out);
}

int Nic::QuerySrq(uint32_t ctx, uint32_t srq, SrqAttr* out) {
  Srq* s = FindSrq(ctx, srq);
  if (!s || !out) return EINVAL;
  out->max_wr = s->max_wr;
  out->max_sge = s->max_sge;
  out->srq_limit = s->limit;
  return 0;
}

void Nic::CheckSrqLimit(Srq& srq) {
  // IBTA 10.2.9.2 / rxe_resp.c get_srq_wqe: once fewer than srq_limit WRs remain, one
  // SRQ_LIMIT_REACHED and the limit disarms (re-armed only by another modify). The WRs
  // left: the provider's records, or what the NIC last read of the record where a driver
  // of the program's own posts (model_backend.h ModelSrqRing).
  if (srq.limit == 0 || std::max(srq.rq.size(), srq.rq.nic_held()) >= srq.limit) return;
  srq.limit = 0;
  AsyncEvent ev;
  ev.type = EventType::kSrqLimitReached;
  ev.srq = SrqHandle{srq.handle};
  RaiseEvent(srq.ctx, ev);
}

int Nic::ResizeCq(uint32_t ctx, uint32_t cq, int cqe, int* actual) {
  Cq* c = FindCq(ctx, cq);
  if (!c) return EINVAL;
  // rxe_cq_chk_attr: 0 < cqe <= max_cqe and not fewer than the completions it holds.
  if (cqe < 1 || cqe > profile().device.max_cqe) return EINVAL;
  c->TakeDriverPolls(Cpu(DmaKind::kCqDbRec, 0));  // cq.h contract 7: a driver's polls first
  if (static_cast<size_t>(cqe) < c->size()) return EINVAL;
  const int depth = static_cast<int>(QueueSlots(profile().behaviour, static_cast<uint32_t>(cqe)));
  if (c->placed() && depth != c->depth()) {
    // queue_memory.h contract 2: a new block, the CQEs moved by the provider's CPU.
    QueueBlock ring;
    if (!TakeResizedBlock(c->arena(), QueueBlockBytes(depth, Cq::kCqeBytes), &ring)) {
      return ENOMEM;
    }
    c->MoveTo(std::move(ring), depth, Cpu(DmaKind::kCqe, 0));
  } else if (!c->placed()) {
    c->set_depth(depth);
  }
  if (actual) *actual = depth;
  return 0;
}

}  // namespace qptwin::model::engine
