// The requester: takes the next send WQE, checks limits and local memory, and puts the
// message on the wire (rxe_req.c, written as steps).
#include <algorithm>
#include <utility>

#include "spec/posting_rules.h"
#include "model/engine/nic.h"
#include "model/engine/world.h"

namespace qptwin::model::engine {
namespace {

bool IsReadOrAtomic(WrOpcode op) {
  return op == WrOpcode::kRdmaRead || op == WrOpcode::kAtomicCmpAndSwp ||
         op == WrOpcode::kAtomicFetchAndAdd;
}

PacketKind KindOf(WrOpcode op) {
  switch (op) {
    case WrOpcode::kRdmaWrite:
    case WrOpcode::kRdmaWriteWithImm: return PacketKind::kWrite;
    case WrOpcode::kRdmaRead: return PacketKind::kReadReq;
    case WrOpcode::kAtomicCmpAndSwp:
    case WrOpcode::kAtomicFetchAndAdd: return PacketKind::kAtomic;
    default: return PacketKind::kSend;
  }
}

}  // namespace

void Nic::Kick(Qp& qp) {
  // Nothing waiting: the requester would stop at once (ReqGetWqe).
  if (qp.kick_pending || qp.sq_next >= qp.sq.size()) return;
  // A requester in a retry's skip loop (BusyRequesterFor) runs when it ends (EndSkipLoop).
  if (WaitsForSkipLoop(qp)) return;
  qp.kick_pending = true;
  // The send engine's ready list: served in the order kicked, one wake-up for the engine.
  ready_.Push(world_->events().Now(), qp.weak_from_this());
}

void Nic::Doorbell(Qp& qp) {
  const Behaviour& b = profile().behaviour;
  if (qp.requester_dead) {
    WalkStopped(qp);
    return;
  }
  // Behaviour::post_runs_requester: rxe runs the requester inside ibv_post_send.
  if (!b.post_runs_requester) {
    Kick(qp);
    return;
  }
  if (!b.post_answers_each_message) {
    in_post_ = true;
    RunRequester(qp);
    in_post_ = false;
    return;
  }
  // Behaviour::post_answers_each_message: each message the post's requester sends is
  // received, answered and its answer handled before the requester takes the next WQE. A
  // verb call is never inside the event loop, so the loop may run here; what it runs at
  // the far end (and any other QP's exchange that is due) runs as it would after the call.
  // A READ request too: rxe_resp_queue_pkt schedules its responder tasklet, and the pending
  // softirq runs at the requester task's next spin_unlock_bh, before its next WQE (measured:
  // 5 READs whose responses fail locally, one post: one READ is sent; the 2026-12-03
  // exception for READs over loopback, rows 107, 113 and 117, is gone: their sequences
  // match rxe without it, given rows 115 and 116). A requester kicked while this loop runs
  // the event loop (the completer's rxe_run_task on the busy task) is left to this loop,
  // which takes it again, one message at a time (Nic::posting_; seed 20261220 sequence 1202).
  for (;;) {
    in_post_ = true;
    const bool sent = RunRequester(qp, /*one_message=*/true);
    in_post_ = false;
    if (!sent) return;
    EventQueue& clock = world_->events();
    posting_ = &qp;
    clock.RunUntil([this] { return world_->ExchangesSettled(); },
                   clock.Now() + kPostRunNs);
    posting_ = nullptr;
  }
}

void Nic::RunReady(std::weak_ptr<Qp>& weak) {
  if (auto q = weak.lock()) {
    q->kick_pending = false;
    if (q.get() == posting_) return;  // Doorbell's loop runs it next
    RunRequester(*q);
  }
}

bool Nic::RunRequester(Qp& qp, bool one_message) {
  if (WaitsForSkipLoop(qp)) return false;  // BusyRequesterFor: it runs when the loop ends
  // RerunWaitsForAnswer: kicked by a part of the answer (the duplicate ACK of a message's
  // first packet) while the WQE before the local operation is still unanswered: rxe's
  // loopback hands the requester back only after the whole message was answered
  // (differential seed 20261245 sequence 10047: a 2-packet WRITE_IMM resent after an RNR NAK
  // on its second packet, a bind behind it).
  if (RerunWaitsForAnswer(qp)) return false;
  if (qp.retry_after_err && (qp.state == QpState::kRts || qp.state == QpState::kSqd)) {
    RetryAfterErr(qp);
    if (WaitsForSkipLoop(qp)) return false;  // the retry started one
  }
  Payload payload;
  ReqStep step = ReqStep::kGetWqe;
  for (;;) {
    switch (step) {
      case ReqStep::kGetWqe: step = ReqGetWqe(qp); break;
      case ReqStep::kCheckLimits: step = ReqCheckLimits(qp); break;
      case ReqStep::kCheckLocal: step = ReqCheckLocal(qp, &payload); break;
      case ReqStep::kTransmit:
        step = ReqTransmit(qp, &payload);
        if (one_message) return true;
        if (step == ReqStep::kGetWqe && RerunWaitsForAnswer(qp)) return false;
        break;
      case ReqStep::kDone:
        // The completer run a local operation or a local failure scheduled (rxe_req.c
        // rxe_do_local_ops, req_error): it takes a stale timeout.
        if (qp.completer_due) TakeStaleTimeout(qp);
        return false;
    }
  }
}

Nic::ReqStep Nic::ReqGetWqe(Qp& qp) {
  // A local operation already run (a retry went back past it) is not run again, except where
  // the requester takes every WQE from the head again (Behaviour::retry_reruns_local_ops).
  while (qp.sq_next < qp.sq.size() && IsLocalOp(qp.sq[qp.sq_next].wr.opcode) &&
         qp.sq[qp.sq_next].done && !qp.sq[qp.sq_next].failed_locally) {
    if (profile().behaviour.retry_reruns_local_ops) break;  // ReqCheckLocal runs it again
    ++qp.sq_next;
  }
  // R11: in SQD nothing new starts; in SQE/ERR the queue is flushed.
  // Retransmissions of already started WQEs continue in SQD (they are the drain).
  if (qp.sq_next >= qp.sq.size() || qp.requester_dead) return ReqStep::kDone;
  // Waiting out an RNR timer nothing is resent; rxe still sends WQEs not sent yet
  // (Behaviour::rnr_wait_sends_new_wqes).
  if (qp.rnr_wait &&
      (!profile().behaviour.rnr_wait_sends_new_wqes || qp.sq[qp.sq_next].sent)) {
    return ReqStep::kDone;
  }
  if (qp.sq[qp.sq_next].failed_locally) return ReqStep::kDone;  // waits for the head
  if (qp.state == QpState::kRts) return ReqStep::kCheckLimits;
  if (qp.state == QpState::kSqd && qp.sq[qp.sq_next].sent) return ReqStep::kCheckLimits;
  return ReqStep::kDone;
}

Nic::ReqStep Nic::ReqCheckLimits(Qp& qp) {
  SendWqe& w = qp.sq[qp.sq_next];
  const bool fenced = (w.wr.send_flags & send_flag::kFence) != 0;
  // Behaviour::local_inv_waits_for_all (rxe_req.c rxe_wqe_is_fenced).
  const bool inv_fenced =
      w.wr.opcode == WrOpcode::kLocalInv && profile().behaviour.local_inv_waits_for_all;
  if (!fenced && !inv_fenced && !IsReadOrAtomic(w.wr.opcode)) return ReqStep::kCheckLocal;
  int outstanding_rd = 0;
  int outstanding = 0;
  for (size_t i = 0; i < qp.sq_next; ++i) {
    // Ghosts lie before rxe's consumer index (DrainSq): rxe_wqe_is_fenced compares the
    // requester's index with that consumer, so they fence nothing (a helper's review of
    // row 147: a LOCAL_INV behind ghosts waited for them for ever).
    if (qp.sq[i].done || qp.sq[i].ghost) continue;
    ++outstanding;
    if (IsReadOrAtomic(qp.sq[i].wr.opcode)) ++outstanding_rd;
  }
  if (inv_fenced && outstanding > 0) {
    qp.wait_fence = true;
    return ReqStep::kDone;
  }
  // R20: a fenced WR waits for every earlier READ/ATOMIC of this SQ (rxe: for every
  // earlier WR). rxe_wqe_is_fenced decides a LOCAL_INV by the invalidate fence alone: its
  // FENCE flag is not looked at (measured, rxe 2 of 2: probe fence-inv, a FENCE-flagged
  // LOCAL_INV runs while a READ's credit is lost after ERR -> RTS).
  if ((w.wr.send_flags & send_flag::kFence) && !inv_fenced) {
    bool blocking = (profile().behaviour.fence_waits_for_all ? outstanding : outstanding_rd) > 0;
    // Behaviour::fence_counts_sent_rd_atomic (rxe_req.c rxe_wqe_is_fenced: rd_atomic !=
    // max_rd_atomic): any credit taken blocks, a lost one too, and one a READ/atomic at or
    // behind this WR holds that a retry went back past: the retry stalls here.
    if (profile().behaviour.fence_counts_sent_rd_atomic) {
      blocking = blocking || qp.rd_atomic_avail != qp.attr.max_rd_atomic;
      // req_retry had set req.psn back to comp.psn: ibv_query_qp's sq_psn reads that when
      // this WR is the head (its first PSN, or past its packets a sequence NAK acknowledged:
      // campaign 20261283 sequence 343, a FENCE WRITE_WITH_IMM RNR-NAKed at its last
      // packet, a READ behind it NAKed for its PSN, sq_psn 2 on rxe 3 of 3); behind a head
      // the retry resent, req.psn has moved on to this WR's first PSN (update_wqe_psn).
      if (blocking && w.sent) {
        qp.next_psn = qp.sq_next == qp.first_undone() ? RetryPsn(qp, qp.sq_next) : w.psn;
        qp.retry_parked_at_fence = true;
      }
    }
    if (blocking) {
      qp.wait_fence = true;
      return ReqStep::kDone;
    }
  }
  // IBTA 10.2.4 / rxe_req.c rd_atomic: at most max_rd_atomic READ/ATOMICs outstanding;
  // with 0 none ever starts (the WR and those after it wait; measured on rxe).
  // rxe_req.c checks the opcode against the QP type (next_opcode) before the depth: a READ
  // on UC fails in ReqCheckLocal rather than waiting for a depth it never has.
  // A WQE that has its credit (a retry) takes no other (rxe check_init_depth).
  if (IsReadOrAtomic(w.wr.opcode) && OpcodeAllowed(qp.type, w.wr.opcode) && !w.has_rd_credit) {
    if (qp.rd_atomic_avail <= 0) return ReqStep::kDone;
    --qp.rd_atomic_avail;
    w.has_rd_credit = true;
  }
  return ReqStep::kCheckLocal;
}

Nic::ReqStep Nic::ReqCheckLocal(Qp& qp, Payload* payload) {
  SendWqe& w = qp.sq[qp.sq_next];
  payload->clear();
  qp.retry_parked_at_fence = false;  // the requester goes on
  transfers_delay_ns_ = 0;
  if (w.fetch_failed) {  // send_wqe_image.h: the NIC never had this WQE
    FailLocally(qp, WcStatus::kLocQpOpErr, "WQE fetch failed");
    return ReqStep::kDone;
  }
  // A resend (a retry went back to it): the NIC reads the WQE's slot again, as the fetch
  // did (send_wqe_image.h contract 3). A ghost is rxe's stale copy, not read again; a WQE
  // the NIC never fetched (started by a modify to RTS, not by a doorbell) has no image.
  if (w.sent && w.fetched && !w.ghost) {
    const uint64_t before = bus_->delay_total();
    const bool read = RereadWqe(qp, qp.sq_next);
    transfers_delay_ns_ += bus_->delay_total() - before;  // host_bus.h contract 3
    if (!read) {
      FailLocally(qp, WcStatus::kLocQpOpErr, "WQE re-read failed");
      return ReqStep::kDone;
    }
  }
  if (!OpcodeAllowed(qp.type, w.wr.opcode)) {
    // Only with Behaviour::opcode_checked_by_requester (rxe): the post accepted it, the
    // requester finds no packet opcode for this QP type (rxe_req.c next_opcode < 0).
    FailLocally(qp, WcStatus::kLocQpOpErr, "opcode not supported by this QP type");
    return ReqStep::kDone;
  }
  // A connected QP that was never given an address vector (it reached RTS by a modify with
  // IBV_QP_CUR_STATE, skipping RTR) has nowhere to send: rxe's route lookup for the zero GID
  // fails and the WR completes with LOC_QP_OP_ERR (measured: differential sequence 455).
  if (qp.type != QpType::kUd && !qp.av_set && !IsLocalOp(w.wr.opcode)) {
    FailLocally(qp, WcStatus::kLocQpOpErr, "no address vector");
    return ReqStep::kDone;
  }
  // BIND_MW and LOCAL_INV run here and complete without a packet (rxe_req.c
  // rxe_do_local_ops; the completer reports them in order).
  if (IsLocalOp(w.wr.opcode)) {
    const WcStatus st = RunLocalOp(qp, w);
    if (st != WcStatus::kSuccess) {
      FailLocally(qp, st, w.wr.opcode == WrOpcode::kBindMw ? "memory window bind failed"
                                                           : "local invalidate failed");
      return ReqStep::kDone;
    }
    w.wrote_success = true;  // rxe_do_local_ops: wqe->status = IB_WC_SUCCESS
    ++qp.sq_next;
    CompleteWqe(qp, qp.sq_next - 1, WcStatus::kSuccess);
    qp.completer_due = true;
    return ReqStep::kGetWqe;
  }
  // C10-93.1.1 (rxe_req.c rxe_requester): a UD message longer than the path MTU sends nothing
  // and completes successfully, before any check of its SGEs (R22; ReqTransmit completes it).
  if (qp.type == QpType::kUd && w.length > PathMtuBytes(qp)) return ReqStep::kTransmit;
  // rxe_req.c rxe_get_av (after that check): the WQE names its AH by number, looked up now;
  // one destroyed since the post fails the WR (Behaviour::ud_ah_resolved_at_send).
  if (qp.type == QpType::kUd && profile().behaviour.ud_ah_resolved_at_send &&
      !FindAh(qp.ctx, w.wr.ah.id)) {
    FailLocally(qp, WcStatus::kLocQpOpErr, "address handle destroyed since the post");
    return ReqStep::kDone;
  }
  if (w.length > profile().port.max_msg_sz) {
    FailLocally(qp, WcStatus::kLocLenErr, "message longer than max_msg_sz");
    return ReqStep::kDone;
  }
  bool unresolved = false;
  if (KindOf(w.wr.opcode) == PacketKind::kSend || KindOf(w.wr.opcode) == PacketKind::kWrite) {
    if (w.is_inline) {
      payload->assign(w.inline_data.get(), w.inline_data.get() + (w.inline_data ? w.length : 0));
    } else if (mrs_.CheckLocal(w.wr.sg_list, qp.init.pd.id, 0, &unresolved) !=
               WcStatus::kSuccess) {
      // rxe_req.c: copy_data's -EINVAL (lookup_mr found no MR) is LOC_QP_OP_ERR, its
      // -EFAULT (outside the MR) LOC_PROT_ERR (Behaviour::unresolved_lkey_is_qp_op_err).
      if (unresolved && profile().behaviour.unresolved_lkey_is_qp_op_err) {
        FailLocally(qp, WcStatus::kLocQpOpErr, "lkey names no MR of this PD");
      } else {
        FailLocally(qp, WcStatus::kLocProtErr, "local protection error");
      }
      return ReqStep::kDone;
    } else {
      const SgeSpan sges = w.wr.sg_list;
      const uint64_t before = bus_->delay_total();
      const bool read = mrs_.GatherTo(Dma(DmaKind::kPayloadRead, qp.qpn), sges,
                                      payload->ResizeForOverwrite(sges.total_length()));
      transfers_delay_ns_ += bus_->delay_total() - before;  // host_bus.h contract 3
      if (!read) {
        FailLocally(qp, WcStatus::kLocProtErr, "DMA read of the payload failed");
        return ReqStep::kDone;
      }
    }
  }
  return ReqStep::kTransmit;
}

Nic::ReqStep Nic::ReqTransmit(Qp& qp, Payload* payload) {
  SendWqe& w = qp.sq[qp.sq_next];
  const uint32_t mtu = PathMtuBytes(qp);
  Packet p;
  p.kind = KindOf(w.wr.opcode);
  p.transport = WireTransport(qp.type);
  p.src_nic = index_;
  p.src_qpn = qp.qpn;
  p.op = w.wr.opcode;
  p.solicited = (w.wr.send_flags & send_flag::kSolicited) != 0;
  p.has_imm = w.wr.opcode == WrOpcode::kSendWithImm || w.wr.opcode == WrOpcode::kRdmaWriteWithImm;
  p.imm = w.wr.imm_data;
  p.has_inv = w.wr.opcode == WrOpcode::kSendWithInv;  // IETH: the rkey in imm
  p.remote_addr = w.wr.remote_addr;
  p.rkey = w.wr.rkey;
  p.compare_add = w.wr.compare_add;
  p.swap = w.wr.swap;
  p.length = static_cast<uint32_t>(w.length);
  if (qp.type == QpType::kUd) {
    // The AH as the post found it, or (ud_ah_resolved_at_send) as it is now: ReqCheckLocal
    // failed the WR if it is gone.
    const Ah* ah = profile().behaviour.ud_ah_resolved_at_send
                       ? FindAh(qp.ctx, w.wr.ah.id)
                       : (w.ah_at_post ? &*w.ah_at_post : nullptr);
    // R22: a UD message longer than the MTU is not sent but completes successfully.
    if (!ah || w.length > mtu) {
      // rxe_req.c fakes the send: the WQE takes one PSN (ibv_query_qp's sq_psn moves on).
      if (w.length > mtu) w.wrote_success = true;  // rxe_req.c: wqe->status = IB_WC_SUCCESS
      if (w.length > mtu && !w.sent) {
        w.sent = true;
        w.psn = qp.next_psn;
        qp.next_psn = PsnAdd(qp.next_psn, 1);
      }
      ++qp.sq_next;
      CompleteWqe(qp, qp.sq_next - 1, WcStatus::kSuccess);
      return ReqStep::kGetWqe;
    }
    p.dst_nic = ah->dst_nic;
    p.dst_qpn = w.wr.remote_qpn;
    GidAt(roce_gid_index(), &p.sgid);
    p.hop_limit = ah->attr.grh.hop_limit;
    p.traffic_class = ah->attr.grh.traffic_class;
    // IBTA 10.2.5: a Q_Key with the high bit set means "use the QP's own Q_Key".
    p.qkey = (w.wr.remote_qkey & 0x80000000u) ? qp.attr.qkey : w.wr.remote_qkey;
  } else {
    p.dst_nic = qp.dst_nic;
    p.dst_qpn = qp.attr.dest_qp_num;
    p.xrc_srqn = w.wr.remote_srqn;  // XRCETH; not looked at by RC/UC targets
  }
  if (w.emptied_by_retry) {  // one packet, no payload, RETH length 0
    p.length = 0;
    payload->clear();
  }
  uint32_t npkts = PacketCount(p.kind == PacketKind::kAtomic ? 8 : p.length, mtu);
  if (!w.sent && w.resumes_mid_message) {
    // SendWqe::resumes_mid_message: the message keeps its PSNs; req.psn moves past it.
    w.sent = true;
    w.resumes_mid_message = false;
    const uint32_t past = PsnAdd(w.psn, w.npkts);
    if (PsnDiff(past, qp.next_psn) > 0) qp.next_psn = past;
  } else if (!w.sent) {
    w.sent = true;
    w.psn = qp.next_psn;
    w.npkts = npkts;
    qp.next_psn = PsnAdd(qp.next_psn, npkts);
  } else if (profile().behaviour.retry_rewinds_sq_psn) {
    // Sent again after a retry went back (RewindPsn): req.psn moves past it again.
    const uint32_t past = PsnAdd(w.psn, w.npkts);
    if (PsnDiff(past, qp.next_psn) > 0) qp.next_psn = past;
  }
  p.psn = w.psn;
  p.npkts = w.npkts;
  if (p.kind == PacketKind::kReadReq) p.npkts = 1;  // the request itself is one packet
  p.data = std::move(*payload);
  uint64_t serial = w.serial;
  // rxe runs a loopback message's responder before it completes the UC/UD WQE: the
  // receiving side completes it (Nic::Receive). Only where no packet can be lost.
  const bool complete_at_receiver = !IsReliable(qp.type) && p.dst_nic == index_ &&
                                    profile().behaviour.loopback_send_completes_after_receive &&
                                    world_->lossless();
  if (complete_at_receiver) p.sender_serial = serial;
  p.sent_by_post = in_post_;
  // Inline data travelled with the WQE: no payload DMA read (timing.h).
  bool has_payload = p.kind == PacketKind::kSend || p.kind == PacketKind::kWrite;
  uint64_t dma = has_payload && !w.is_inline ? p.data.size() : 0;
  ++qp.sq_next;
  // host_bus.h contract 3: the extra target time of the WQE re-read and the payload read,
  // if they happened just now: after the WQE was ready, or now for one ready long ago (a
  // resend, a WQE that waited behind others).
  const uint64_t extra = std::exchange(transfers_delay_ns_, 0);
  const uint64_t ready = std::max(SendContextsReady(qp, w, w.ready_ns), world_->events().Now());
  uint64_t gone = world_->Transmit(std::move(p), ready + extra,
                                   profile().timing.nic.tx_latency_ns,
                                   dma, mtu);
  if (IsReliable(qp.type)) {
    qp.last_gone_ns = std::max(qp.last_gone_ns, gone);
    if (!qp.timer_armed) ArmTimer(qp);
  } else if (!complete_at_receiver) {
    SendUnreliableDone(qp, serial, gone);  // UC/UD: done when the last byte left
  }
  return ReqStep::kGetWqe;
}

void Nic::SendUnreliableDone(Qp& qp, uint64_t serial, uint64_t at) {
  sent_.Push(at, SentWqe{qp.weak_from_this(), serial});
}

void Nic::RunSent(SentWqe& sent) {
  auto q = sent.qp.lock();
  if (!q) return;
  for (size_t i = 0; i < q->sq_next && i < q->sq.size(); ++i) {
    if (q->sq[i].serial == sent.serial && !q->sq[i].done) {
      CompleteWqe(*q, i, WcStatus::kSuccess);
      return;
    }
  }
}

void Nic::RetryAfterErr(Qp& qp) {
  // Qp::retry_after_err: rxe_req.c req_retry at the first requester run out of ERR.
  qp.retry_after_err = false;
  DropGhosts(qp, qp.sq.size());
  qp.sq_next = qp.first_undone();
  if (profile().behaviour.retry_rewinds_sq_psn) qp.next_psn = qp.retry_after_err_psn;
}

bool Nic::TakeRetry(Qp& qp) {
  if (qp.retry_left <= 0) return false;
  // Behaviour::retry_cnt_7_is_infinite: rxe_comp.c decrements comp.retry_cnt only when != 7.
  if (qp.attr.retry_cnt != 7 || !profile().behaviour.retry_cnt_7_is_infinite) --qp.retry_left;
  return true;
}

bool Nic::StallRetry(Qp& qp) {
  // Behaviour::local_error_stops_retries: the requester that failed a WR locally (rxe:
  // req.state = QP_STATE_ERROR) never runs the retry (req_retry), so none comes.
  if (!RequesterStopped(qp)) return false;
  qp.retry_stalled = true;
  return true;
}

void Nic::ArmTimer(Qp& qp) {
  if (qp.attr.timeout == 0) {  // R19: 0 = wait forever
    StopTimer(qp);             // (a timer armed before keeps running where it runs out)
    return;
  }
  // R19: timeout = 4.096 us * 2^attr.timeout
  uint64_t ns = uint64_t{4096} << qp.attr.timeout;
  if (profile().timing.nic.timer_tick_ns != 0) {
    // rxe_qp.c: qp_timeout_jiffies = nsecs_to_jiffies(4096 << timeout), at least 1; counted
    // as below from when the message has left.
    const uint64_t bucket =
        KernelBucket(std::max(world_->events().Now(), qp.last_gone_ns), ns, /*round_up=*/false);
    // mod_timer to the same expiry leaves a pending timer where it is in its bucket.
    if (!qp.timer_armed || bucket != KernelTick(qp.timer_deadline)) {
      qp.timer_deadline = KernelBucketTime(bucket);
    }
    qp.timer_armed = true;
  } else {
    qp.timer_armed = true;
    // From now, or from when the message still being sent has left (a 1 GiB WRITE takes 86
    // ms on 100 Gb/s, longer than timeout 14 = 67 ms: counting from the post resent it
    // forever).
    qp.timer_deadline = std::max(world_->events().Now(), qp.last_gone_ns) + ns;
  }
  // Re-arming (every ACK that makes progress) only moves the deadline: a pending timer
  // event that fires before it looks again (one event per timeout, not one per ACK).
  if (qp.timer_event_at != 0 && qp.timer_event_at <= qp.timer_deadline) return;
  ScheduleTimer(qp, qp.timer_deadline);
}

uint64_t Nic::KernelTimerAt(uint64_t delay_ns, bool round_up) {
  const uint64_t now = world_->events().Now();
  if (profile().timing.nic.timer_tick_ns == 0) return now + delay_ns;
  return KernelBucketTime(KernelBucket(now, delay_ns, round_up));
}

uint64_t Nic::KernelBucket(uint64_t from_ns, uint64_t delay_ns, bool round_up) const {
  const uint64_t tick = profile().timing.nic.timer_tick_ns;
  // nsecs_to_jiffies rounds down, usecs_to_jiffies up; rxe takes at least one jiffy.
  const uint64_t ticks = std::max<uint64_t>(round_up ? (delay_ns + tick - 1) / tick
                                                     : delay_ns / tick,
                                            1);
  // kernel/time/timer.c calc_wheel_index: the level by the distance (LVL_START(n) = 63 <<
  // 3(n-1)), then calc_index: the next bucket boundary of that level's granularity.
  unsigned shift = 0;
  for (uint64_t start = 63; ticks >= start && shift < 21; start <<= 3) shift += 3;
  const uint64_t expires = (from_ns + profile().timing.nic.timer_tick_phase_ns) / tick + ticks;
  return ((expires >> shift) + 1) << shift;
}

uint64_t Nic::KernelBucketTime(uint64_t bucket) {
  // One bucket's timers fire latest-armed first (expire_timers walks the bucket's hlist from
  // its head): inside the tick, each one armed later runs kTimerOrderNs earlier, time enough
  // for the model to run what the one before starts, as rxe's tasklets run one after the
  // other. Every one runs at jiffies == bucket, as in the kernel.
  static_assert(kMaxTimerRank * kTimerOrderNs < 4'000'000, "inside a 4 ms tick");
  const uint64_t rank = std::min<uint64_t>(world_->ArmTimerAtTick(bucket), kMaxTimerRank);
  return bucket * profile().timing.nic.timer_tick_ns - profile().timing.nic.timer_tick_phase_ns +
         (kMaxTimerRank - rank) * kTimerOrderNs;
}

uint64_t Nic::KernelTick(uint64_t at) const {
  const uint64_t tick = profile().timing.nic.timer_tick_ns;
  return tick == 0 ? at : (at + profile().timing.nic.timer_tick_phase_ns) / tick;
}

void Nic::StopTimer(Qp& qp) {
  // Behaviour::retrans_timer_runs_out: rxe deletes retrans_timer only when the QP is
  // destroyed; stopping the transport means letting it run out (OnTimeout).
  if (!profile().behaviour.retrans_timer_runs_out) qp.timer_armed = false;
}

void Nic::ScheduleTimer(Qp& qp, uint64_t at) {
  qp.timer_event_at = at;
  timers_.Push(at, QpTimer{qp.weak_from_this(), at});
}

void Nic::RunTimer(QpTimer& t) {
  auto q = t.qp.lock();
  if (!q || q->timer_event_at != t.at) {  // superseded by an earlier event
    FinishTickFlushes();
    return;
  }
  q->timer_event_at = 0;
  if (!q->timer_armed || world_->events().Now() < q->timer_deadline) {
    if (q->timer_armed) ScheduleTimer(*q, q->timer_deadline);
    FinishTickFlushes();
    return;
  }
  in_timer_expiry_ = true;
  OnTimeout(*q);
  in_timer_expiry_ = false;
  FinishTickFlushes();
}

uint64_t Nic::LastTransportTimerIn(uint64_t from, uint64_t to, const Qp* except) const {
  uint64_t last = 0;
  for (const auto& [h, q] : qps_) {
    if (q.get() != except && q->timer_armed && q->timer_event_at != 0 &&
        q->timer_deadline >= from && q->timer_deadline <= to) {
      last = std::max(last, q->timer_deadline);
    }
  }
  return last;
}

uint64_t Nic::LastOtherTimerThisTick(const Qp* except) const {
  const uint64_t tick = profile().timing.nic.timer_tick_ns;
  if (tick == 0) return 0;
  const uint64_t now = world_->events().Now();
  // KernelBucketTime: one tick's timers fire from its start to kMaxTimerRank slots later.
  const uint64_t start =
      KernelTick(now) * tick - std::min(KernelTick(now) * tick, profile().timing.nic.timer_tick_phase_ns);
  const uint64_t end = start + kMaxTimerRank * kTimerOrderNs;
  if (now > end) return 0;
  uint64_t last = 0;
  for (int i = 0; i < world_->nic_count(); ++i) {
    last = std::max(last, world_->nic(i)->LastTransportTimerIn(now, end, except));
  }
  return last;
}

bool Nic::DeferFlushToTickEnd(Qp& qp) {
  // Only where the failed WQE's CQE comes before the flush (BeginFlush writes it now).
  if (!in_timer_expiry_ || profile().timing.nic.timer_tick_ns == 0 ||
      !profile().behaviour.tick_timers_complete_before_flushes ||
      !(FlushesRqFirst(qp) || qp.completer_scheduled_first)) {
    return false;
  }
  const uint64_t last = LastOtherTimerThisTick(&qp);
  if (!world_->has_held_work() && last == 0) return false;
  world_->HoldTickFlush(this, qp.weak_from_this());
  // The tick's timers and the tasklets they start run in softirq context, before the
  // program runs again: it wakes up no earlier than the last of them (World::StallHost).
  if (last != 0) world_->StallHost(last);
  return true;
}

void Nic::FinishTickFlushes() {
  if (!world_->has_held_work()) return;
  if (const uint64_t last = LastOtherTimerThisTick(nullptr); last != 0) {
    world_->StallHost(last);  // a timer of the tick moved on within it
    return;
  }
  world_->RunHeldWork();
}

void Nic::RunHeldFlush(Qp& qp) {
  if (!qp.flush_pending) {  // a modify or a post has moved on since
    qp.flush_begun = false;
    return;
  }
  if (qp.requester_busy_until_ns > world_->events().Now()) {
    qp.flush_after_skip_loop = true;  // EnterError's rule
    return;
  }
  FlushOnError(qp);
}

void Nic::OnTimeout(Qp& qp) {
  qp.timer_armed = false;
  // Behaviour::retrans_timer_runs_out (rxe_comp.c retransmit_timer): comp.timeout is set and
  // the completer scheduled; in ERR and RESET it exits before looking at the flag, which
  // stays set (RESET does not clear it) until the completer runs in another state. In INIT
  // and RTR nothing was sent: that run finds nothing outstanding.
  if (profile().behaviour.retrans_timer_runs_out) {
    qp.stale_timeout = qp.state == QpState::kErr || qp.state == QpState::kReset;
    if (qp.state == QpState::kErr) CompleterRunsInError(qp);
    if (qp.state == QpState::kReset) CompleterRunsInReset(qp);
    if (qp.stale_timeout) return;
  }
  CompleterTimedOut(qp);
}

void Nic::TakeStaleTimeout(Qp& qp) {
  qp.completer_due = false;
  // In ERR and RESET rxe_completer exits before it reads comp.timeout.
  if (!qp.stale_timeout || qp.state == QpState::kErr || qp.state == QpState::kReset) return;
  qp.stale_timeout = false;
  CompleterTimedOut(qp);
}

void Nic::CompleterTimedOut(Qp& qp) {
  if (qp.state != QpState::kRts && qp.state != QpState::kSqd) return;
  if (qp.retry_stalled) return;  // rxe_completer exits while req.need_retry is set
  // Waiting out an RNR timer (Behaviour::retry_timer_runs_during_rnr), the NAKed WQE at
  // sq_next is outstanding too; the retry itself waits for the RNR timer (ReqGetWqe).
  const size_t sent = std::min(qp.sq.size(), qp.sq_next + (qp.rnr_wait ? 1 : 0));
  // The completer's head is rxe's consumer index: ghosts (stale WQEs the requester sent again
  // after ERR -> RTS) lie before it, their slots consumed by the flush (seed 20261217
  // sequence 52: the SEND behind them fails RETRY_EXC_ERR).
  const size_t first = ConsumerHead(qp, sent);
  if (first == sent) return;  // nothing outstanding
  // rxe_comp.c COMPST_ERROR_RETRY: a head never started has nothing to retry.
  if (qp.sq[first].stuck) return;
  if (!TakeRetry(qp)) {
    // rxe_comp.c do_complete retires the head and, when the requester stopped at a fence
    // (req.wait_fence), runs it before COMPST_ERROR's rxe_qp_error (RunFencedInvalidate).
    if (ParkedAtInvalidateFence(qp, first)) {
      RunFencedInvalidate(qp);
    } else {
      DrainAtFence(qp, first);
    }
    FailWqe(qp, first, WcStatus::kRetryExcErr, "retry count exceeded");
    return;
  }
  qp.started_retry = true;  // rxe: sequence NAKs of the resent packets count no more
  if (StallRetry(qp)) return;
  GoBackTo(qp, first);
}

bool Nic::StoppedAtFenceBehind(const Qp& qp, size_t head) const {
  // Behaviour::local_inv_waits_for_all (rxe_req.c rxe_wqe_is_fenced): the requester stopped
  // at a fence (wait_fence: do_complete runs the requester only then) on the WQE right behind
  // `head`, never started; do_complete moves the consumer index past `head` alone. A
  // requester stopped for good (requester_dead) or inside a retry's skip loop (busy:
  // rxe_run_task only arms it) does not run here.
  if (!profile().behaviour.local_inv_waits_for_all || !qp.wait_fence) return false;
  if (qp.requester_dead || qp.requester_busy_until_ns > world_->events().Now()) return false;
  if (qp.sq_next != head + 1 || qp.sq_next >= qp.sq.size()) return false;
  const SendWqe& w = qp.sq[qp.sq_next];
  return !w.done && !w.sent;  // ghosts lie before
}

bool Nic::ParkedAtInvalidateFence(const Qp& qp, size_t head) const {
  // In RTS, the LOCAL_INV the requester stopped at may go once `head` is retired (a BIND_MW
  // run but not retired in between keeps it fenced).
  return qp.state == QpState::kRts && StoppedAtFenceBehind(qp, head) &&
         qp.sq[qp.sq_next].wr.opcode == WrOpcode::kLocalInv;
}

void Nic::DrainAtFence(Qp& qp, size_t head) {
  // In SQD, do_complete (wait_fence) runs the requester in DRAIN: rxe_req.c req_next_wqe
  // finds the consumer index at the WQE the requester stopped at, never started, marks the
  // send queue drained and raises SQ_DRAINED, then takes nothing (probes fenced-inv-sqd,
  // -sqd-nonotify: a LOCAL_INV, the window stays bound; fence-send-sqd: a FENCE-flagged SEND
  // behind a READ; rxe 2 of 2 each). A WR posted in SQD set no wait_fence: no event
  // (fenced-inv-posted-in-sqd). Part of Behaviour::local_inv_waits_for_all's rule (row 140):
  // elsewhere the head's error ends the drain without the event.
  if (qp.state != QpState::kSqd || !qp.sq_draining || !StoppedAtFenceBehind(qp, head)) return;
  qp.sq_draining = false;
  if (!profile().behaviour.sqd_event_needs_notify || qp.attr.en_sqd_async_notify) {
    RaiseQpEvent(qp, EventType::kSqDrained);
  }
}

void Nic::RunFencedInvalidate(Qp& qp) {
  // rxe_comp.c do_complete (wait_fence) -> rxe_run_task(req): the requester runs inside the
  // completer, the QP still in RTS, and takes the LOCAL_INV (rxe_do_local_ops). Both ends
  // have the completer run before the responder task that COMPST_ERROR's rxe_qp_error
  // schedules: a failure arms the running completer task (req err: rxe_run_task(comp)), which
  // runs again at once; a success schedules its tasklet (rxe_sched_task) ahead of the
  // responder's. The completer then finds the QP in ERR and drains the send queue (WR_FLUSH_ERR
  // for the LOCAL_INV too) before the receive flush. Measured on rxe 3 of 3: differential
  // seed 20261249 sequence 604 (a WRITE to a peer in INIT, retry_cnt 0, a LOCAL_INV of a type
  // 1 window, a receive on the same CQ) and AnInvalidateFencedBehindATimedOutWriteRunsBefore-
  // TheFlush (a type 2 window so invalidated binds again).
  qp.completer_scheduled_first = true;
  SendWqe& inv = qp.sq[qp.sq_next];
  ++qp.sq_next;  // rxe: req.wqe_index moves past it either way
  if (RunLocalOp(qp, inv) != WcStatus::kSuccess) {
    // rxe_req.c err: wqe_state_error, req.state ERROR; BeginFlush flushes it.
    inv.done = inv.failed_locally = true;
    inv.status = WcStatus::kLocQpOpErr;
    qp.completer_armed = true;
    return;
  }
  // The window is invalidated; BeginFlush flushes the LOCAL_INV (the completer never retired
  // it).
  inv.done = true;
  inv.status = WcStatus::kSuccess;
  inv.wrote_success = true;
  // rxe_do_local_ops returns 0 and the requester's loop goes on with the WQEs behind it, the
  // QP still in RTS, before COMPST_ERROR's rxe_qp_error: a BIND_MW binds, a SEND is sent
  // (probes fenced-inv-send, fenced-inv-bind: sq_psn moves; the bound window keeps its
  // region from deregistration, EINVAL; rxe 2 of 2 each). Their completions wait behind the
  // failed head, so the flush takes them back.
  RunRequester(qp);
}

}  // namespace qptwin::model::engine
