// Posting rules: ibv_post_send / ibv_post_recv per state, QP type and capability
// (rdma-facts R2-R5; rdma-core providers/rxe post_one_send / validate_send_wr).
#include <cerrno>
#include <cstring>

#include "model/engine/nic.h"
#include "model/engine/world.h"

namespace qptwin::model::engine {
namespace {

bool OpAllowed(QpType type, WrOpcode op) {
  switch (op) {
    case WrOpcode::kSend:
    case WrOpcode::kSendWithImm: return true;
    case WrOpcode::kRdmaWrite:
    case WrOpcode::kRdmaWriteWithImm: return type == QpType::kRc || type == QpType::kUc;
    case WrOpcode::kRdmaRead:
    case WrOpcode::kAtomicCmpAndSwp:
    case WrOpcode::kAtomicFetchAndAdd: return type == QpType::kRc;
    default: return false;  // LOCAL_INV, BIND_MW, SEND_WITH_INV, TSO: not modelled
  }
}

bool IsAtomic(WrOpcode op) {
  return op == WrOpcode::kAtomicCmpAndSwp || op == WrOpcode::kAtomicFetchAndAdd;
}

uint64_t TotalLength(const std::vector<Sge>& sges) {
  uint64_t n = 0;
  for (const Sge& s : sges) n += s.length;
  return n;
}

}  // namespace

int Nic::PostSend(uint32_t ctx, uint32_t h, const std::vector<SendWr>& wrs, size_t* bad) {
  Qp* qp = FindQp(ctx, h);
  if (!qp) {
    if (bad) *bad = 0;
    return EINVAL;
  }
  bool posted = false;
  for (size_t i = 0; i < wrs.size(); ++i) {
    const SendWr& wr = wrs[i];
    uint64_t len = TotalLength(wr.sg_list);
    bool is_inline = (wr.send_flags & send_flag::kInline) != 0;
    int err = 0;
    // R2: rxe_post_send refuses a QP that is not yet ready to send.
    if (qp->state == QpState::kReset || qp->state == QpState::kInit ||
        qp->state == QpState::kRtr) {
      err = EINVAL;
    } else if (wr.sg_list.size() > qp->cap.max_send_sge) {
      err = EINVAL;  // R5
    } else if (!OpAllowed(qp->type, wr.opcode)) {
      err = EINVAL;
    } else if (is_inline && (len > qp->cap.max_inline_data || wr.opcode == WrOpcode::kRdmaRead ||
                             IsAtomic(wr.opcode))) {
      err = EINVAL;
    } else if (IsAtomic(wr.opcode) && (len < 8 || (wr.remote_addr & 7))) {
      err = EINVAL;  // validate_send_wr: 8-byte, aligned atomics
    } else if (qp->type == QpType::kUd && !FindAh(ctx, wr.ah.id)) {
      err = EINVAL;
    } else if (qp->sq.size() >= qp->cap.max_send_wr) {
      err = ENOMEM;  // R5
    }
    SendWqe w;
    if (!err && is_inline) {
      // Inline data is copied now (the buffer may be reused at once). The model reads only
      // registered memory, so the source must lie inside some MR of this device.
      if (!mrs_.AnyContains(wr.sg_list)) {
        err = EINVAL;
      } else {
        w.inline_data = mrs_.Gather(wr.sg_list);
      }
    }
    if (err) {
      if (bad) *bad = i;
      if (posted) Kick(*qp);
      return err;
    }
    w.serial = qp->next_serial++;
    w.wr = wr;
    w.is_inline = is_inline;
    w.length = len;
    w.signaled = qp->init.sq_sig_all || (wr.send_flags & send_flag::kSignaled);
    if (qp->state == QpState::kErr || qp->state == QpState::kSqe) {
      // Posted to a QP in error: flushed at once.
      qp->sq.push_back(std::move(w));
      FlushSq(*qp);
      continue;
    }
    qp->sq.push_back(std::move(w));
    posted = true;
  }
  if (posted) Kick(*qp);
  return 0;
}

int Nic::PostRecv(uint32_t ctx, uint32_t h, const std::vector<RecvWr>& wrs, size_t* bad) {
  Qp* qp = FindQp(ctx, h);
  if (!qp) {
    if (bad) *bad = 0;
    return EINVAL;
  }
  for (size_t i = 0; i < wrs.size(); ++i) {
    int err = 0;
    if (qp->state == QpState::kReset || qp->srq) {
      err = EINVAL;  // R4
    } else if (wrs[i].sg_list.size() > qp->cap.max_recv_sge) {
      err = EINVAL;  // R5
    } else if (qp->rq.size() >= qp->cap.max_recv_wr) {
      err = ENOMEM;  // R5
    }
    if (err) {
      if (bad) *bad = i;
      return err;
    }
    qp->rq.push_back(wrs[i]);
    if (qp->state == QpState::kErr) FlushRq(*qp);  // R4: flushed at once in ERR
  }
  return 0;
}

}  // namespace qptwin::model::engine
