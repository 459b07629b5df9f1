// Posting rules: ibv_post_send / ibv_post_recv per state, QP type and capability
// (rdma-facts R2-R5; rdma-core providers/rxe post_one_send / validate_send_wr).
#include <cerrno>
#include <cstring>

#include "model/engine/nic.h"
#include "model/engine/world.h"

namespace qptwin::model::engine {
namespace {

// The opcodes the model implements (LOCAL_INV, BIND_MW, SEND_WITH_INV, TSO are not).
bool OpModelled(WrOpcode op) {
  switch (op) {
    case WrOpcode::kSend:
    case WrOpcode::kSendWithImm:
    case WrOpcode::kRdmaWrite:
    case WrOpcode::kRdmaWriteWithImm:
    case WrOpcode::kRdmaRead:
    case WrOpcode::kAtomicCmpAndSwp:
    case WrOpcode::kAtomicFetchAndAdd: return true;
    default: return false;
  }
}

}  // namespace

bool OpAllowed(QpType type, WrOpcode op) {
  // IBTA 9.8: an XRC initiator carries the RC operations; an XRC target sends nothing.
  const bool rc = type == QpType::kRc || type == QpType::kXrcSend;
  switch (op) {
    case WrOpcode::kSend:
    case WrOpcode::kSendWithImm: return type != QpType::kXrcRecv;
    case WrOpcode::kRdmaWrite:
    case WrOpcode::kRdmaWriteWithImm: return rc || type == QpType::kUc;
    case WrOpcode::kRdmaRead:
    case WrOpcode::kAtomicCmpAndSwp:
    case WrOpcode::kAtomicFetchAndAdd: return rc;
    default: return false;  // LOCAL_INV, BIND_MW, SEND_WITH_INV, TSO: not modelled
  }
}

namespace {

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
  // An XRC_RECV QP has no send queue (ibv_create_qp_ex(3): it only receives through XRC
  // SRQs); mlx5 creates it without a SQ, so ibv_post_send has nothing to post to.
  if (!qp || qp->type == QpType::kXrcRecv) {
    if (bad) *bad = 0;
    return EINVAL;
  }
  // Host: one call builds every WQE and rings one doorbell; the NIC then fetches the WQEs
  // (one DMA read), except a single inline WR pushed with the doorbell (BlueFlame).
  const Timing& t = profile().timing;
  uint64_t ready = ChargeHost(t.host.post_call_ns + wrs.size() * t.host.post_wr_ns) +
                   t.nic.doorbell_ns;
  bool by_mmio = t.nic.wqe_by_mmio && wrs.size() == 1 &&
                 (wrs[0].send_flags & send_flag::kInline) != 0;
  if (!by_mmio && t.nic.pcie_gbps > 0) {
    ready += t.nic.pcie_read_ns +
             (SerializationPs(t.nic.pcie_gbps, wrs.size() * uint64_t{t.nic.wqe_bytes}) + 999) / 1000;
  }
  bool posted = false;
  // R2: a QP below RTS refuses the post. With post_send_below_rts_queues (rxe) the WRs are
  // queued first and the doorbell refuses afterwards: EINVAL, bad = the first WR not queued.
  const bool below_rts = qp->state == QpState::kReset || qp->state == QpState::kInit ||
                         qp->state == QpState::kRtr;
  const bool queue_anyway = below_rts && profile().behaviour.post_send_below_rts_queues;
  for (size_t i = 0; i < wrs.size(); ++i) {
    const SendWr& wr = wrs[i];
    uint64_t len = TotalLength(wr.sg_list);
    bool is_inline = (wr.send_flags & send_flag::kInline) != 0;
    int err = 0;
    if (below_rts && !queue_anyway) {
      err = EINVAL;
    } else if (wr.sg_list.size() > qp->cap.max_send_sge) {
      err = EINVAL;  // R5
    } else if (!OpModelled(wr.opcode) ||
               (!OpAllowed(qp->type, wr.opcode) && !profile().behaviour.opcode_checked_by_requester)) {
      err = EINVAL;  // an opcode the QP type lacks (UD: sends only; UC: no READ or atomics)
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
      return queue_anyway ? EINVAL : err;  // rxe: the doorbell's EINVAL wins
    }
    w.serial = qp->next_serial++;
    w.wr = wr;
    w.is_inline = is_inline;
    w.length = len;
    w.signaled = qp->init.sq_sig_all || (wr.send_flags & send_flag::kSignaled);
    w.ready_ns = ready;
    if (qp->state == QpState::kErr || qp->state == QpState::kSqe) {
      // Posted to a QP in error: flushed at once.
      qp->sq.push_back(std::move(w));
      FlushSq(*qp);
      continue;
    }
    qp->sq.push_back(std::move(w));
    posted = true;
  }
  if (queue_anyway) {
    // Queued, not started: the requester starts them once the QP is in RTS.
    if (bad) *bad = wrs.size();
    return EINVAL;
  }
  if (posted) Kick(*qp);
  return 0;
}

int Nic::PostRecv(uint32_t ctx, uint32_t h, const std::vector<RecvWr>& wrs, size_t* bad) {
  Qp* qp = FindQp(ctx, h);
  // XRC QPs have no receive queue: XRC_SEND only sends, XRC_RECV receives into XRC SRQs.
  if (!qp || qp->type == QpType::kXrcSend || qp->type == QpType::kXrcRecv) {
    if (bad) *bad = 0;
    return EINVAL;
  }
  const HostTiming& host = profile().timing.host;
  ChargeHost(host.post_call_ns + wrs.size() * host.post_wr_ns);
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
    // R4: flushed at once in ERR. rxe: queued until the responder runs (Behaviour::recv_in_err_waits).
    if (qp->state == QpState::kErr && !profile().behaviour.recv_in_err_waits) FlushRq(*qp);
  }
  return 0;
}

}  // namespace qptwin::model::engine
