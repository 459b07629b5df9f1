// QP creation, modify (legality, values, effects), query, and the state effects shared
// with the data path: ERR (flush), SQE, RESET (discard), SQD (drain).
#include <cerrno>

#include <algorithm>
#include <cstring>

#include "model/engine/nic.h"
#include "model/engine/world.h"
#include "spec/attr_checks.h"
#include "spec/qp_state_table.h"

namespace qptwin::model::engine {
namespace {

bool TypeSupported(QpType t, const Behaviour& q) {
  switch (t) {
    case QpType::kRc: return true;
    case QpType::kUc: return q.supports_uc;
    case QpType::kUd: return q.supports_ud;
    case QpType::kXrcSend:
    case QpType::kXrcRecv: return q.supports_xrc;
    default: return false;  // R1: rxe_qp_chk_init accepts RC/UC/UD (+GSI in the kernel)
  }
}

// rxe_qp_from_attr: roundup_pow_of_two(n) stored in a u8 (200 -> 256 -> 0; 0 stays 0).
uint8_t RoundUpPow2U8(uint32_t n) {
  uint32_t p = 1;
  while (p < n) p <<= 1;
  return n == 0 ? 0 : static_cast<uint8_t>(p);
}

}  // namespace

WcOpcode SendWcOpcode(WrOpcode op) {
  switch (op) {
    case WrOpcode::kRdmaWrite:
    case WrOpcode::kRdmaWriteWithImm: return WcOpcode::kRdmaWrite;
    case WrOpcode::kRdmaRead: return WcOpcode::kRdmaRead;
    case WrOpcode::kAtomicCmpAndSwp: return WcOpcode::kCompSwap;
    case WrOpcode::kAtomicFetchAndAdd: return WcOpcode::kFetchAdd;
    case WrOpcode::kBindMw: return WcOpcode::kBindMw;
    case WrOpcode::kLocalInv: return WcOpcode::kLocalInv;
    default: return WcOpcode::kSend;  // SEND, SEND_WITH_IMM, SEND_WITH_INV
  }
}

uint32_t Nic::SendWcFlags(WrOpcode op) const {
  bool imm = op == WrOpcode::kSendWithImm || op == WrOpcode::kRdmaWriteWithImm;
  return imm && profile().behaviour.send_wc_with_imm ? wc_flag::kWithImm : 0;  // imm_data 0
}

int Nic::CreateXrcRecvQp(uint32_t ctx, const QpInitAttr& given, uint32_t* out, QpCap* actual) {
  // ib_uverbs create_qp for IB_QPT_XRC_TGT looks up the XRCD only: the PD, CQs, SRQ and
  // caps of the call are not used. The QP has no queues; its receives go to XRC SRQs.
  if (!TypeSupported(given.qp_type, profile().behaviour)) return EOPNOTSUPP;  // R1 (rxe)
  auto x = xrcds_.find(given.xrcd.id);
  if (x == xrcds_.end() || x->second.ctx != ctx) return EINVAL;
  if (static_cast<int>(qps_.size()) >= profile().device.max_qp) {
    return profile().behaviour.over_limit_errno;  // rxe 6.1 __rxe_add_to_pool (nic_resources.cc)
  }
  QpInitAttr init;
  init.qp_type = QpType::kXrcRecv;
  init.xrcd = given.xrcd;
  auto qp = std::make_shared<Qp>();
  qp->handle = world_->NewHandle();
  qp->ctx = ctx;
  qp->qpn = next_qpn_++ & 0xffffff;
  qp->type = init.qp_type;
  qp->init = init;
  qp->xrcd = init.xrcd.id;
  qp->attr.path_mtu = profile().port.active_mtu;
  ++x->second.users;
  qp->history.push_back({world_->events().Now(), QpState::kReset, QpState::kReset, "create"});
  ++history_version_;
  *out = qp->handle;
  if (actual) *actual = qp->cap;
  by_qpn_[qp->qpn] = qp.get();
  if (TracePort* t = tracing()) t->QpCreated(world_->events().Now(), qp->qpn);
  InstallQpContext(*qp);  // nic_cache.cc
  qps_[qp->handle] = std::move(qp);
  ChargeHost(profile().timing.control.create_qp_ns);
  return 0;
}

int Nic::CreateQp(uint32_t ctx, const QpInitAttr& given, uint32_t* out, QpCap* actual) {
  if (given.qp_type == QpType::kXrcRecv) return CreateXrcRecvQp(ctx, given, out, actual);
  QpInitAttr init = given;
  const bool xrc_send = init.qp_type == QpType::kXrcSend;
  if (xrc_send) {
    // rdma-core libibverbs cmd.c create_qp_ex_common sends no recv_cq/srq handle for
    // XRC_SEND, and ib_uverbs create_qp sets max_recv_wr = max_recv_sge = 0 for XRC_INI:
    // they are ignored, not refused. The QP has no receive side.
    init.recv_cq = init.send_cq;
    init.srq = SrqHandle{};
    init.cap.max_recv_wr = init.cap.max_recv_sge = 0;
  }
  auto pd = pds_.find(init.pd.id);
  if (pd == pds_.end() || pd->second.ctx != ctx) return EINVAL;
  Cq* scq = FindCq(ctx, init.send_cq.id);
  Cq* rcq = FindCq(ctx, init.recv_cq.id);
  if (!scq || !rcq) return EINVAL;
  Srq* srq = nullptr;
  if (init.srq && !(srq = FindSrq(ctx, init.srq.id))) return EINVAL;
  if (!TypeSupported(init.qp_type, profile().behaviour)) return EOPNOTSUPP;
  if (!CheckQpCaps(init, profile().device).empty()) return EINVAL;
  if (static_cast<int>(qps_.size()) >= profile().device.max_qp) {
    return profile().behaviour.over_limit_errno;  // rxe 6.1 __rxe_add_to_pool (nic_resources.cc)
  }
  if (QueuesUnreachable()) return EINVAL;

  auto qp = std::make_shared<Qp>();
  qp->cap = GrantedCaps(profile().behaviour, init.cap);
  if (srq || xrc_send) qp->cap.max_recv_wr = qp->cap.max_recv_sge = 0;
  if (queue_arena_) {
    // queue_memory.h contract 2: the whole send ring, and the receive ring and its record,
    // before the QP takes a number (ENOMEM as a provider whose buffer allocation fails).
    qp->sq_stride = SqStride(qp->cap);
    if (!QueueBlock::Take(queue_arena_, QueueBlockBytes(qp->send_ring_slots(), qp->sq_stride, false),
                          &qp->sq_block)) {
      return ENOMEM;
    }
    if (qp->cap.max_recv_wr > 0) {
      QueueBlock rq;
      if (!QueueBlock::Take(queue_arena_,
                            RecvQueue::PlacedBytes(qp->cap.max_recv_wr, qp->cap.max_recv_sge),
                            &rq)) {
        return ENOMEM;
      }
      qp->rq.PlaceAt(std::move(rq), qp->cap.max_recv_wr,
                     RecvQueue::PlacedStride(qp->cap.max_recv_sge), Cpu(DmaKind::kRecvDbRec, 0));
    }
  }
  qp->handle = world_->NewHandle();
  qp->ctx = ctx;
  qp->qpn = next_qpn_++ & 0xffffff;
  qp->type = init.qp_type;
  qp->init = init;
  qp->send_cq = cqs_[scq->handle()];
  if (xrc_send) {
    rcq = nullptr;
    qp->init.recv_cq = CqHandle{};
  } else {
    qp->recv_cq = cqs_[rcq->handle()];
  }
  if (srq) qp->srq = srqs_[srq->handle];
  qp->attr.port_num = 0;
  qp->attr.path_mtu = profile().port.active_mtu;
  ++pd->second.users;
  ++scq->users;
  if (rcq) ++rcq->users;
  if (srq) ++srq->users;
  qp->history.push_back({world_->events().Now(), QpState::kReset, QpState::kReset, "create"});
  ++history_version_;
  *out = qp->handle;
  if (actual) *actual = qp->cap;
  by_qpn_[qp->qpn] = qp.get();
  if (TracePort* t = tracing()) t->QpCreated(world_->events().Now(), qp->qpn);
  InstallQpContext(*qp);  // nic_cache.cc
  qps_[qp->handle] = std::move(qp);
  ChargeHost(profile().timing.control.create_qp_ns);  // a command to the device
  return 0;
}

int Nic::DestroyQp(uint32_t ctx, uint32_t h) {
  Qp* qp = FindQp(ctx, h);
  if (!qp) return EINVAL;
  if (qp->type == QpType::kXrcRecv) {
    --xrcds_[qp->xrcd].users;
  } else {
    --pds_[qp->init.pd.id].users;
    --qp->send_cq->users;
  }
  if (qp->recv_cq) --qp->recv_cq->users;
  if (qp->srq) --qp->srq->users;
  // ControlTiming::destroy_qp_bound_mw_wait_ns: a bound type 2 window's reference keeps the
  // call waiting; the QP is unreachable from the start.
  const uint64_t mw_wait = profile().timing.control.destroy_qp_bound_mw_wait_ns;
  const bool waits = profile().behaviour.destroy_qp_waits_for_bound_type2_window &&
                     mw_wait > 0 && mws_.BoundToQp(h) > 0;
  by_qpn_.erase(qp->qpn);
  qps_.erase(h);  // pending callbacks hold weak references and find nothing
  const uint64_t done = ChargeHost(profile().timing.control.destroy_qp_ns);
  if (waits) world_->StallHost(done + mw_wait);  // the caller's wait: ModelDevice::DestroyQp
  return 0;
}

int Nic::QpNum(uint32_t ctx, uint32_t h, uint32_t* qpn) {
  Qp* qp = FindQp(ctx, h);
  if (!qp) return EINVAL;
  *qpn = qp->qpn;
  return 0;
}

int Nic::ModifyQp(uint32_t ctx, uint32_t h, const QpAttr& a, AttrMask mask) {
  Qp* qp = FindQp(ctx, h);
  if (!qp) return EINVAL;
  // ib_uverbs / rxe: bits beyond IB_QP_ATTR_STANDARD_BITS are refused before anything else.
  if (profile().behaviour.reject_extended_mask && (mask & ~attr::kStandardBits)) return EOPNOTSUPP;
  // ib_uverbs_modify_qp / ib_modify_qp_is_ok: a state beyond ERR is EINVAL.
  if (((mask & attr::kState) && a.qp_state > QpState::kErr) ||
      ((mask & attr::kCurState) && a.cur_qp_state > QpState::kErr)) {
    return EINVAL;
  }
  // rxe_qp_chk_attr: cur_state = CUR_STATE in mask ? attr->cur_qp_state : qp's state.
  QpState cur = (mask & attr::kCurState) ? a.cur_qp_state : qp->state;
  QpState next = NextState(cur, a.qp_state, mask);
  if (!IsModifyOk(cur, next, qp->type, mask)) return EINVAL;
  // R12 (__qp_chk_state): leaving SQD while still draining is refused, except to ERR; only a
  // modify that carries IBV_QP_STATE counts (a modify without it changes no state).
  if ((mask & attr::kState) && cur == QpState::kSqd && qp->sq_draining &&
      next != QpState::kErr) {
    return EINVAL;
  }
  ports_one_.assign(1, port_attr());
  if (!CheckAttrValues(a, mask, qp->type, profile().device, ports_one_, qp->attr.port_num,
                       profile().behaviour.lax_attr_checks).empty()) {
    return EINVAL;
  }

  // Apply the attributes (everything is valid now). The command costs device time.
  ChargeHost(profile().timing.control.modify_qp_ns);
  QpAttr& s = qp->attr;
  if (mask & attr::kEnSqdAsyncNotify) s.en_sqd_async_notify = a.en_sqd_async_notify;
  if (mask & attr::kAccessFlags) s.qp_access_flags = a.qp_access_flags;
  if (mask & attr::kPkeyIndex) s.pkey_index = a.pkey_index;
  if (mask & attr::kPort) s.port_num = a.port_num;
  if (mask & attr::kQkey) s.qkey = a.qkey;
  if (mask & attr::kAv) {
    s.ah_attr = a.ah_attr;
    qp->av_set = true;
    qp->dst_nic = world_->ResolveAddress(a.ah_attr);
  }
  if (mask & attr::kPathMtu) {
    s.path_mtu = a.path_mtu;
    qp->path_mtu_set = true;
  }
  if (mask & attr::kCurState) qp->cur_state_given = a.cur_qp_state;
  if (mask & attr::kTimeout) s.timeout = a.timeout;
  if (mask & attr::kRetryCnt) qp->retry_left = s.retry_cnt = a.retry_cnt;
  if (mask & attr::kRnrRetry) qp->rnr_left = s.rnr_retry = a.rnr_retry;
  if (mask & attr::kRqPsn) qp->epsn = s.rq_psn = a.rq_psn & 0xffffff;  // verbs.c: 24 bits
  const bool pow2 = profile().behaviour.rd_atomic_rounded_up;
  if (mask & attr::kMaxQpRdAtomic) {
    s.max_rd_atomic = pow2 ? RoundUpPow2U8(a.max_rd_atomic) : a.max_rd_atomic;
    int held = 0;
    if (!profile().behaviour.failed_rd_atomic_keeps_credit) {
      for (const SendWqe& w : qp->sq) held += w.has_rd_credit ? 1 : 0;
    }
    qp->rd_atomic_avail = s.max_rd_atomic - held;
  }
  if (mask & attr::kAltPath) {
    s.alt_ah_attr = a.alt_ah_attr;
    qp->alt_av_set = true;
    s.alt_pkey_index = a.alt_pkey_index;
    s.alt_port_num = a.alt_port_num;
    s.alt_timeout = a.alt_timeout;
  }
  if (mask & attr::kMinRnrTimer) s.min_rnr_timer = a.min_rnr_timer;
  if (mask & attr::kSqPsn) qp->next_psn = qp->comp_psn = s.sq_psn = a.sq_psn & 0xffffff;
  if (mask & attr::kMaxDestRdAtomic) {
    s.max_dest_rd_atomic = pow2 ? RoundUpPow2U8(a.max_dest_rd_atomic) : a.max_dest_rd_atomic;
    // rxe_qp.c: free_rd_atomic_resources, then alloc_rd_atomic_resources (res_head 0).
    qp->rd_res.clear();
    qp->rd_res_head = 0;
  }
  if (mask & attr::kDestQpn) s.dest_qp_num = a.dest_qp_num & 0xffffff;

  // rxe_qp_from_attr runs rxe_qp_reset on every modify to RESET, RESET -> RESET too: it
  // discards what a refused post left queued (Behaviour::post_send_below_rts_queues).
  if ((mask & attr::kState) && next == QpState::kReset && qp->state == QpState::kReset) {
    ResetQueues(*qp);
  }
  // rxe_qp.c rxe_qp_from_attr: RESET and INIT set resp.state to RESET/INIT, RTR to READY.
  if ((mask & attr::kState) && (next == QpState::kReset || next == QpState::kInit)) {
    qp->responder_not_ready = true;
  }
  if ((mask & attr::kState) && next == QpState::kRtr) qp->responder_not_ready = false;
  if (next == qp->state && next != QpState::kErr) return 0;
  // Behaviour::requester_walks_one_wqe_in_error: out of ERR (IBV_QP_CUR_STATE), not by RESET,
  // the requester starts where it stopped in the ring.
  if (qp->state == QpState::kErr && next != QpState::kErr && next != QpState::kReset &&
      profile().behaviour.requester_walks_one_wqe_in_error) {
    ResumeUnwalked(*qp);
  }
  switch (next) {
    case QpState::kReset:
      SetState(*qp, next, "modify");
      ResetQueues(*qp);  // R9: discarded, no completions
      break;
    case QpState::kErr:
      EnterError(*qp, "modify");  // R6: flush
      break;
    case QpState::kSqd:
      SetState(*qp, next, "modify");
      qp->sq_draining = true;  // R11: in-flight messages finish, nothing new starts
      // rxe_qp_drain schedules the requester: a retry the RNR timer set in ERR
      // (Qp::retry_after_err) runs now, req.psn back to comp.psn (measured: seed 20261237
      // sequence 207, 3 of 3 runs: sq_psn 0, not 2, in SQD after ERR -> RTS).
      if (qp->retry_after_err) RetryAfterErr(*qp);
      // rxe_qp_drain sets req.state DRAIN over ERROR: a requester a stale WQE stopped
      // (Nic::FailLocally, a bind run again from a consumed slot) runs again (seed
      // 301565882534 sequence 1830, 3 of 3: its WQEs posted in SQD go out after SQD -> RTS).
      qp->requester_dead = false;
      RetryStalledInSqd(*qp);
      CheckDrained(*qp);
      // rxe_qp.c rxe_qp_drain schedules the completer of an RC QP: it takes a stale timeout.
      if (IsReliable(qp->type)) TakeStaleTimeout(*qp);
      break;
    case QpState::kRts:
      SetState(*qp, next, "modify");
      // rxe: the next doorbell starts what was queued (Behaviour::rts_waits_for_doorbell).
      if (!profile().behaviour.rts_waits_for_doorbell) Kick(*qp);
      break;
    default:
      SetState(*qp, next, "modify");
      break;
  }
  return 0;
}

namespace {
AhAttr ZeroAv() {
  AhAttr ah;
  ah.grh.hop_limit = 0;
  ah.port_num = 0;
  ah.is_global = true;
  return ah;
}
}  // namespace

// Behaviour::query_qp_stored_view: rxe_qp_to_attr / rxe_av_to_attr / rxe_qp_init_misc.
void Nic::StoredView(const Qp& qp, QpAttr* attr) const {
  attr->cur_qp_state = qp.cur_state_given;
  attr->en_sqd_async_notify = false;  // measured: 0 after modify en_sqd_async_notify=1
  if (!qp.path_mtu_set) attr->path_mtu = Mtu::k256;
  for (AhAttr* ah : {&attr->ah_attr, &attr->alt_ah_attr}) {
    ah->is_global = true;
    ah->dlid = 0;
    ah->sl = 0;
    ah->src_path_bits = 0;
    ah->static_rate = 0;
  }
  // An AV never given is all zero (rxe_qp_init_misc leaves pri_av/alt_av zeroed).
  if (!qp.av_set) attr->ah_attr = ZeroAv();
  if (!qp.alt_av_set) attr->alt_ah_attr = ZeroAv();
}

int Nic::QueryQp(uint32_t ctx, uint32_t h, QpAttr* attr, QpInitAttr* init) {
  Qp* qp = FindQp(ctx, h);
  if (!qp) return EINVAL;
  if (attr) {
    *attr = qp->attr;
    attr->qp_state = attr->cur_qp_state = qp->state;
    attr->cap = qp->cap;
    attr->sq_draining = qp->sq_draining;
    attr->sq_psn = qp->next_psn;
    // rxe_qp_to_attr: resp.psn, for every type (a UD QP's: the last received PSN + 1).
    if (qp->type != QpType::kUd || profile().behaviour.query_qp_stored_view) {
      attr->rq_psn = qp->epsn;
    }
    if (profile().behaviour.query_qp_stored_view) StoredView(*qp, attr);
  }
  if (init) {
    *init = qp->init;
    init->cap = qp->cap;
  }
  return 0;
}

int Nic::History(uint32_t ctx, uint32_t h, size_t first, std::vector<StateChange>* out) {
  Qp* qp = FindQp(ctx, h);
  if (!qp) return EINVAL;
  if (first >= qp->history.size()) {  // the usual case: nothing new since the last look
    out->clear();
    return 0;
  }
  out->assign(qp->history.begin() + first, qp->history.end());
  return 0;
}

void Nic::SetState(Qp& qp, QpState to, const std::string& cause) {
  if (to != qp.state) {
    if (TracePort* t = tracing()) t->QpState(world_->events().Now(), qp.qpn, to);
  }
  qp.history.push_back({world_->events().Now(), qp.state, to, cause});
  ++history_version_;
  qp.state = to;
  qp.attr.qp_state = to;
}

void Nic::ReportQueues(Qp& qp) {
  const auto sq = static_cast<uint32_t>(qp.posted_wqes());
  const auto rq = static_cast<uint32_t>(qp.rq.size());
  if (sq == qp.traced_sq && rq == qp.traced_rq) return;
  qp.traced_sq = sq;
  qp.traced_rq = rq;
  trace_->QpQueues(world_->events().Now(), qp.qpn, sq, rq);
}

void Nic::ResetQueues(Qp& qp) {
  QueuesNote note(*this, qp);
  for (SendWqe& w : qp.sq) ReturnRdCredit(qp, w);
  qp.sq.clear();
  qp.unwalked.clear();
  qp.ghosts = 0;
  qp.req_index_on_failed = qp.may_have_stuck = qp.read_nak_in_post = false;
  qp.requester_dead = false;
  qp.rq.clear();
  qp.sq_next = 0;
  StopTimer(qp);
  qp.rnr_wait = qp.sq_draining = false;
  // Behaviour::psn_nak_uses_retry: a retry under way stays so (rxe_qp_reset leaves
  // comp.started_retry; only reset_retry_counters clears it).
  if (!profile().behaviour.psn_nak_uses_retry) qp.started_retry = false;
  qp.completer_due = false;  // (a stale_timeout stays: rxe_qp_reset leaves comp.timeout)
  qp.retry_stalled = qp.retry_parked_at_fence = qp.requester_revived = false;
  qp.retry_after_err = qp.rnr_timer_in_err = false;
  qp.uc_mid_message = qp.write_imm_waiting = qp.sent_psn_nak = false;
  qp.comm_est_raised = qp.last_wqe_raised = qp.flush_pending = qp.flush_begun = false;
  qp.completer_scheduled_first = qp.completer_armed = false;
  qp.send_slots.clear();  // rxe_queue_reset memsets the slots (the indices go on)
  qp.flush_after_skip_loop = qp.kick_after_skip_loop = false;
  qp.requester_busy_until_ns = 0;
  qp.atomic_replay.clear();
  qp.rd_res.clear();
  qp.rd_res_head = 0;
}

void Nic::EnterError(Qp& qp, const std::string& cause, bool defer_flush) {
  if (qp.rnr_wait && qp.rnr_index < qp.sq.size() && IsReliable(qp.type) &&
      profile().behaviour.requester_walks_one_wqe_in_error) {
    qp.rnr_timer_in_err = true;  // RunRnrWait sets retry_after_err when it fires
    qp.retry_after_err_psn = RetryPsn(qp, qp.rnr_index);
  }
  SetState(qp, QpState::kErr, cause);
  qp.responder_not_ready = true;
  StopTimer(qp);
  qp.rnr_wait = qp.sq_draining = false;
  // Packet::responder_flush_first: this requester's flush follows the responder's (Receive).
  if (defer_requester_flush_) defer_flush = true;
  qp.flush_pending = defer_flush;
  // NicTiming::retry_skip_ps_per_packet: the completer's tasklet is in a retry's skip loop;
  // the flush it was scheduled for runs when the loop ends (EndSkipLoop).
  if (!defer_flush && qp.requester_busy_until_ns > world_->events().Now()) {
    qp.flush_pending = qp.flush_after_skip_loop = true;
    return;
  }
  // A timer's expiry with more of the tick's timers due: the failed WQE's CQE now (the
  // completer's do_complete), the flush after them (DeferFlushToTickEnd).
  if (!defer_flush && DeferFlushToTickEnd(qp)) {
    BeginFlush(qp);
    qp.flush_pending = qp.flush_begun = true;
    // An armed completer (RunFencedInvalidate) drains the send queue now; the receive flush
    // waits with the tick's.
    if (std::exchange(qp.completer_armed, false)) FlushSq(qp);
    return;
  }
  if (!defer_flush) FlushOnError(qp);
}

namespace {
SendWqe GhostOf(const SendWqe& w) {
  SendWqe g;
  g.wr = w.wr;
  if (w.is_inline && w.length > 0 && w.inline_data) {
    g.inline_data.reset(new uint8_t[w.length]);
    std::memcpy(g.inline_data.get(), w.inline_data.get(), w.length);
  }
  g.ah_at_post = w.ah_at_post;
  g.length = w.length;
  g.is_inline = w.is_inline;
  g.signaled = w.signaled;
  g.slot = w.slot;
  g.ghost = true;
  return g;
}
}  // namespace

bool Nic::FlushesRqFirst(const Qp& qp) const {
  return qp.type == QpType::kRc && profile().behaviour.rc_flushes_rq_first && !in_retry_response_ &&
         !qp.completer_scheduled_first;
}

void Nic::FlushOnError(Qp& qp) {
  qp.flush_pending = false;
  if (!std::exchange(qp.flush_begun, false)) BeginFlush(qp);
  // A flush ordered by a LOCAL_INV that ran first (RunFencedInvalidate) uses that order once.
  const bool rq_first = FlushesRqFirst(qp);
  qp.completer_scheduled_first = qp.completer_armed = false;
  // rxe_qp_error schedules the responder task (receive flush) before the completer's (send
  // flush). From a post (process context) they run at the next spin_unlock_bh, in that order.
  // A requester failed by a loopback response to a request a timer's retry sent runs in a
  // tasklet: its own loop goes on first (rxe_req.c: QP_STATE_ERROR -> WR_FLUSH_ERR -> the
  // completer drains the send queue) and the scheduled receive flush follows (differential
  // seed 20261206 sequence 1918; from a post: 20261202 sequence 2386). So does one failed by
  // a NAK from another device to such a retry (Behaviour::retried_request_nak_flushes_sq_first,
  // seed 308692050115 sequence 395).
  if (rq_first) {
    FlushRq(qp);
    FlushSq(qp);
  } else {
    FlushSq(qp);
    FlushRq(qp);
  }
  // IBTA 11.6.3: a QP with an SRQ reports LAST_WQE_REACHED when it enters ERR (not rxe on
  // Linux 6.1: Behaviour::last_wqe_reached_event).
  if (qp.srq && !qp.last_wqe_raised && profile().behaviour.last_wqe_reached_event) {
    qp.last_wqe_raised = true;
    RaiseQpEvent(qp, EventType::kQpLastWqeReached);
  }
  const bool walks = profile().behaviour.requester_walks_one_wqe_in_error;
  if (walks) WalkOneInError(qp);
  if (std::exchange(qp.read_nak_in_post, false) && walks) WalkOneInError(qp);
}

void Nic::BeginFlush(Qp& qp) {
  // rxe_qp_error: the completer flushes every WQE; the requester, scheduled once, takes one.
  const bool walks = profile().behaviour.requester_walks_one_wqe_in_error;
  if (walks && std::exchange(qp.req_index_on_failed, false) && qp.sq_next > 0) {
    qp.unwalked.push_back(GhostOf(qp.sq[qp.sq_next - 1]));  // its slot comes first
  }
  if (walks) NoteUnwalked(qp, qp.sq_next);
  // rxe_comp.c flush_send_queue: WR_FLUSH_ERR for every WQE left, finished or failed. DrainSq
  // retires a finished head at once, so a WQE still here waits behind one that is not: a WR
  // that failed locally, a BIND_MW or LOCAL_INV the requester ran behind a WR still
  // unacknowledged (differential seed 1101 sequence 52), a UD or UC SEND sent behind a head
  // the requester never took (OverwriteStaleSlots; seed 20261277 sequence 1015).
  for (SendWqe& w : qp.sq) {
    if (w.ghost) continue;  // its completion was reported, or its slot consumed
    if (w.failed_locally || (w.done && w.status == WcStatus::kSuccess)) w.done = false;
  }
  // The CQE of the error that moved it comes first when the receive flush does
  // (FlushOnError; rxe_comp.c do_complete), or when the flush is held to a tick's end.
  if (FlushesRqFirst(qp) || qp.completer_scheduled_first) DrainSq(qp);
}

void Nic::NoteUnwalked(Qp& qp, size_t from) {
  // rxe_req.c: req.wqe_index has passed the WQEs the requester sent, ran or failed; those
  // it has not reached stay in the ring after the completer flushed them.
  for (size_t i = from; i < qp.sq.size(); ++i) {
    if (!qp.sq[i].done) qp.unwalked.push_back(GhostOf(qp.sq[i]));
  }
  // req.wqe_index and the producer index count modulo the ring's slots (rxe_queue.c: the
  // granted max_send_wr + 1, a power of two). The requester sees (producer - wqe_index) mod
  // slots WQEs, the newest ones: a slot the posts went round to holds a newer WQE. With
  // the stale WQEs and the new ones a whole ring apart, it sees none (seed 20261220
  // sequence 1092).
  const size_t slots = qp.send_ring_slots();
  for (size_t lapped = qp.unwalked.size() - qp.unwalked.size() % slots; lapped > 0; --lapped) {
    qp.unwalked.pop_front();
  }
}

void Nic::WalkOneInError(Qp& qp) {
  if (qp.unwalked.empty()) return;
  // rxe_req.c in QP_STATE_ERROR writes WR_FLUSH_ERR into the slot it takes (over a failed
  // WR's own status where the walk starts at it: Qp::req_index_on_failed).
  NoteSlotStatus(qp, qp.unwalked.front().slot, WcStatus::kWrFlushErr);
  qp.unwalked.pop_front();
}

void Nic::FlushPostedInError(Qp& qp, size_t from) {
  // The post's one requester run takes the oldest WQE not taken yet (sq[from] on: this
  // call's WQEs) and has the completer drain the ring (rxe_req.c err: -> rxe_run_task
  // comp): everything queued is flushed, WQEs left by an earlier post too.
  if (profile().behaviour.requester_walks_one_wqe_in_error) {
      NoteUnwalked(qp, from);
    if (qp.unwalked.empty()) {
      // req_next_wqe finds req.wqe_index == producer (the ring went round, NoteUnwalked):
      // the requester takes nothing and runs no completer. These WQEs wait unflushed for
      // the next requester run (measured: 11 WRs posted in ERR behind 5 a flush left
      // untaken in a 16-slot ring complete only at the next post, with its WR).
      return;
    }
    WalkOneInError(qp);
  }
  FlushSq(qp);
}

void Nic::ResumeUnwalked(Qp& qp) {
  QueuesNote note(*this, qp);
  qp.requester_dead = false;  // rxe_qp.c: req.state READY (RTS) or INIT
  if (qp.unwalked.empty()) return;
  Ring<SendWqe> sq;
  while (!qp.unwalked.empty()) {
    SendWqe g = std::move(qp.unwalked.front());
    qp.unwalked.pop_front();
    g.serial = qp.next_serial++;
    // The stale WQE is its slot: a credit the flushed WR never gave back is its own.
    TakeSlotCredit(qp, g);
    sq.push_back(std::move(g));
    ++qp.ghosts;
  }
  while (!qp.sq.empty()) {
    sq.push_back(std::move(qp.sq.front()));
    qp.sq.pop_front();
  }
  qp.sq.swap(sq);
  qp.sq_next = 0;
}

void Nic::OverwriteStaleSlots(Qp& qp, size_t first_posted) {
  QueuesNote note(*this, qp);
  // rxe: the stale WQEs ResumeUnwalked put ahead sit in ring slots req.wqe_index .. consumer
  // - 1, the WQEs the program posted since from the consumer on; a post writes its WQEs at
  // the producer, modulo the ring's slots, onto stale ones once it goes round. The requester
  // walks slot by slot from its index up to the producer (req_next_wqe: index == producer is
  // an empty ring). So when O of this post's WQEs land on stale slots, the requester sends
  // just those O (the post's last ones) and stops: the stale slots after them are written
  // over by later posts before it reaches them, and the WQEs from the consumer on lie behind
  // it for good. The completer's head is then a WQE never started: rxe_comp.c get_wqe drops
  // every response (COMPST_DONE) and COMPST_ERROR_RETRY has nothing to retry, so the QP
  // hangs in RTS until it is moved to ERR or RESET (measured: seed 20261232 sequence 12293;
  // 15 SEND_IMMs posted, the first RNR-NAKed with rnr_retry 0, ERR -> RTS by IBV_QP_CUR_STATE,
  // then 12 SENDs: sq_psn moves from 1 to 10, 9 SENDs sent, no completion for 60 ms; with 8
  // and 12: 2 sent; 15 and 4: 1; 15 and 1, 4 and 12: all, ghosts first).
  size_t stale = 0;
  while (qp.sq_next + stale < first_posted && qp.sq[qp.sq_next + stale].ghost &&
         !qp.sq[qp.sq_next + stale].sent) {
    ++stale;
  }
  if (stale == 0) return;
  size_t behind = 0;  // WQEs the program posted earlier that are not retired
  for (size_t i = qp.sq_next + stale; i < first_posted; ++i) {
    if (!qp.sq[i].ghost && !qp.sq[i].done) ++behind;
  }
  const size_t slots = qp.send_ring_slots();
  const size_t posted = qp.sq.size() - first_posted;
  // Round to the requester's own slot (the sum is the ring) counts too: req_next_wqe then sees
  // index == producer, an empty ring, and sends none of them.
  if (stale + behind + posted < slots) return;  // not round to a stale slot
  const size_t over = stale + behind + posted - slots;
  for (size_t i = qp.sq_next + stale; i < qp.sq.size() - over; ++i) {
    if (!qp.sq[i].ghost && !qp.sq[i].done) qp.sq[i].stuck = qp.may_have_stuck = true;
  }
  // The stale WQEs are never sent: out of the queue (the ghosts before sq_next stay).
  Ring<SendWqe> sq;
  for (size_t i = 0; i < qp.sq.size(); ++i) {
    if (i >= qp.sq_next && i < qp.sq_next + stale) {
      GhostLeaves(qp, qp.sq[i]);
      continue;
    }
    sq.push_back(std::move(qp.sq[i]));
  }
  qp.sq.swap(sq);
  qp.ghosts -= stale;
  qp.sq_next = qp.sq.size() - over;
  // A post written over a stale WQE's slot takes over the credit it held (SendSlot::rd_credit).
  for (size_t i = 0; i < qp.sq.size(); ++i) {
    SendWqe& w = qp.sq[i];
    if (!w.ghost && !w.sent && !w.has_rd_credit) TakeSlotCredit(qp, w);
  }
}

void Nic::ClearStuck(Qp& qp) {
  if (!std::exchange(qp.may_have_stuck, false)) return;
  for (SendWqe& w : qp.sq) w.stuck = false;
}

size_t Nic::ConsumerHead(const Qp& qp, size_t end) {
  end = std::min(end, qp.sq.size());
  for (size_t i = 0; i < end; ++i) {
    if (!qp.sq[i].ghost && !qp.sq[i].done) return i;
  }
  return end;
}

bool Nic::HeadStuck(const Qp& qp) const {
  if (!qp.may_have_stuck) return false;
  const size_t head = ConsumerHead(qp);
  return head < qp.sq.size() && qp.sq[head].stuck;
}

bool Nic::ConsumerHeadUnsent(const Qp& qp) const {
  // rxe_comp.c get_wqe compares a response only with the WQE at the consumer index (queue_head),
  // and drops it when there is none or the requester has not started that one (state posted).
  // Ghosts, the stale WQEs the requester sends again after ERR -> RTS, lie before that index:
  // their responses arrive, over loopback inside the requester's send, while the WQE the
  // program posted still waits behind them, and are dropped. Seed 970377600547 sequence 1120
  // (rxe 3 of 3): a ghost WRITE at PSN 1 drew a sequence NAK at PSN 0 from a peer reset to
  // rq_psn 0; rxe ignored it (retry_cnt 0), sent the SEND behind it, which the peer dropped
  // as out of sequence, and the transport timer ended the SEND RETRY_EXC_ERR.
  if (qp.ghosts == 0) return false;
  const size_t head = ConsumerHead(qp);
  return head == qp.sq.size() || !qp.sq[head].sent;
}

void Nic::WalkStopped(Qp& qp) {
  // rxe_req.c in QP_STATE_ERROR: the WQE at req.wqe_index is marked WR_FLUSH_ERR; the
  // completer reports it only when it is the head, i.e. one the program posted, and then
  // moves the QP to ERR (rxe_comp.c COMPST_ERROR -> rxe_qp_error).
  if (qp.sq_next >= qp.sq.size()) return;
  SendWqe& w = qp.sq[qp.sq_next++];
  if (w.ghost) {
    w.done = true;
    w.status = WcStatus::kWrFlushErr;  // written into its slot (send_slot_keeps_status)
    DrainSq(qp);
    return;
  }
  if (HeadStuck(qp)) {  // marked, but the completer's head never started: no CQE, no ERR
    w.done = true;
    w.status = WcStatus::kWrFlushErr;
    return;
  }
  FailWqe(qp, qp.sq_next - 1, WcStatus::kWrFlushErr, "requester stopped by a stale WQE");
}

void Nic::EnterSqe(Qp& qp, const std::string& cause) {
  SetState(qp, QpState::kSqe, cause);
  StopTimer(qp);
  FlushSq(qp);  // C10-38: the send queue is flushed, receives continue
}

void Nic::FlushSq(Qp& qp) {
  QueuesNote note(*this, qp);
  // R6/R7: head to tail; a finished WQE reports its own outcome, the rest WR_FLUSH_ERR.
  Ring<SendWqe> sq;
  sq.swap(qp.sq);
  qp.sq_next = 0;
  qp.ghosts = 0;
  for (SendWqe& w : sq) {
    if (w.ghost) {  // the completer consumed it before
      GhostLeaves(qp, w);
      continue;
    }
    ReturnRdCredit(qp, w);
    WorkCompletion wc;
    // Step (b): one the NIC never fetched is known by its slot's image.
    wc.wr_id = w.fetched ? w.wr.wr_id : UnfetchedWrId(qp, w);
    wc.qp_num = qp.qpn;
    wc.status = w.done ? w.status : WcStatus::kWrFlushErr;
    if (wc.status != WcStatus::kSuccess) NoteSlotStatus(qp, w.slot, wc.status);
    if (wc.status == WcStatus::kSuccess) {
      if (!w.signaled) continue;
      wc.opcode = SendWcOpcode(w.wr.opcode);
      wc.byte_len = static_cast<uint32_t>(w.length);
      wc.wc_flags = SendWcFlags(w.wr.opcode);
    }
    PushCqe(qp, *qp.send_cq, wc, false);  // an XRC_RECV QP has no SQ: never here
  }
}

void Nic::FlushRq(Qp& qp) {
  QueuesNote note(*this, qp);
  // recv_queue.h contract 7: the NIC reads the record and the images up to its producer.
  const Ring<RecvWr> flushed = qp.rq.Flush(Dma(DmaKind::kRecvWqe, qp.qpn));
  for (const RecvWr& r : flushed) {
    WorkCompletion wc;
    wc.wr_id = r.wr_id;
    wc.qp_num = qp.qpn;
    wc.status = WcStatus::kWrFlushErr;
    PushCqe(qp, *qp.recv_cq, wc, true);  // rxe_resp.c do_complete: no packet, solicited 1
  }
}

void Nic::CheckDrained(Qp& qp) {
  if (qp.state != QpState::kSqd || !qp.sq_draining || qp.sq_next != 0) return;
  // A message waiting out an RNR timer went back to sq_next but is still in flight; one a
  // retry parked at a fence is not (rxe_req.c req_next_wqe: the head is wqe_state_posted).
  for (const SendWqe& w : qp.sq) {
    if (w.sent && !w.done && !qp.retry_parked_at_fence) return;
  }
  qp.sq_draining = false;
  if (profile().behaviour.sqd_event_needs_notify && !qp.attr.en_sqd_async_notify) return;
  RaiseQpEvent(qp, EventType::kSqDrained);  // R11
}

bool Nic::PushCqe(Qp& qp, Cq& cq, const WorkCompletion& wc, bool solicited, uint64_t ready_ns,
                  bool from_completer) {
  bool was_error = cq.in_error();
  // The CQE reaches host memory cqe_ns later (completion engine + PCIe write); a no-op
  // event then lets waiters see it.
  const uint64_t cqe_ns = profile().timing.nic.cqe_ns;
  const uint64_t now = world_->events().Now();
  const uint64_t visible = std::max(now, ready_ns) + cqe_ns;
  // Refused when full, or when the CQE's DMA write failed (cq.h contract 5).
  if (!cq.Push(wc, visible, Dma(DmaKind::kCqe, wc.qp_num))) {
    if (!was_error || !cq.sticky_error()) {  // R13: IB_EVENT_CQ_ERR (rxe: on every refusal)
      AsyncEvent ev;
      ev.type = EventType::kCqErr;
      ev.cq = CqHandle{cq.handle()};
      RaiseEvent(cq.ctx(), ev);
    }
    // rxe_comp.c do_complete ignores rxe_cq_post's -EBUSY: a requester CQE that does not fit
    // is lost and the QP carries on (Behaviour::send_cq_overrun_keeps_qp); the responder's
    // overrun is RESPST_ERR_CQ_OVERFLOW (ERR) there too.
    if (from_completer && profile().behaviour.send_cq_overrun_keeps_qp) return false;
    if (qp.state != QpState::kErr) {
      // R14; IBTA 11.6.3.2: the QP's work queue is in a catastrophic error.
      if (profile().behaviour.qp_error_events) RaiseQpEvent(qp, EventType::kQpFatal);
      EnterError(qp, "CQ overflow");
    }
    return false;
  }
  // The CQE's time as the CQ took it (a bus's extra time added, cq.h contract 5).
  if (cq.last_visible() > now) world_->WakeAt(cq.last_visible());
  // Behaviour::solicited_arm_ignores_errors: only `solicited` counts for a solicited-only arm.
  const bool error = wc.status != WcStatus::kSuccess &&
                     !profile().behaviour.solicited_arm_ignores_errors;
  if (cq.TakeNotify(solicited, error)) {
    if (Channel* ch = FindChannel(cq.ctx(), cq.channel())) ch->events.push_back(cq.handle());
  }
  // cq.h contract 8: a driver's arm (errors always count, as IBTA's solicited-only arm).
  if (cq.TakeDriverNotify(solicited, wc.status != WcStatus::kSuccess)) WriteCqEvent(cq, wc.qp_num);
  return true;
}

}  // namespace qptwin::model::engine
