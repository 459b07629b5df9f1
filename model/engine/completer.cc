// The completer: ACKs, NAKs and read/atomic responses retire send WQEs in order
// (rxe_comp.c); RNR and transport retries; errors end in ERR (or SQE) with a flush.
#include <cstring>

#include "model/engine/nic.h"
#include "model/engine/world.h"

namespace qptwin::model::engine {
namespace {

// IBTA 9.7.5.2.8 table 45: RNR NAK timer field -> microseconds x 100.
constexpr uint32_t kRnrTimerCentiUs[32] = {
    65536, 1,    2,    3,    4,    6,    8,     12,    16,    24,    32,
    48,    64,   96,   128,  192,  256,  384,   512,   768,   1024,  1536,
    2048,  3072, 4096, 6144, 8192, 12288, 16384, 24576, 32768, 49152};

uint64_t RnrDelayNs(uint8_t timer) { return uint64_t{kRnrTimerCentiUs[timer & 31]} * 10000; }

bool IsSendOrWrite(WrOpcode op) {
  return op == WrOpcode::kSend || op == WrOpcode::kSendWithImm || op == WrOpcode::kSendWithInv ||
         op == WrOpcode::kRdmaWrite || op == WrOpcode::kRdmaWriteWithImm;
}

uint32_t LastPsn(const SendWqe& w) { return PsnAdd(w.psn, w.npkts - 1); }

}  // namespace

void Nic::CompleterRunsInError(Qp& qp) {
  // rxe_comp.c rxe_completer in ERR: rxe_drain_resp_pkts completes every WQE from the
  // consumer to the producer, WR_FLUSH_ERR, whatever the requester's index: WQEs posted in
  // ERR that the post's walk did not reach (Behaviour::requester_walks_one_wqe_in_error,
  // FlushPostedInError) are flushed by the completer's next run, which the transport timer
  // running out starts (a response to a QP in ERR is dropped before the completer,
  // rxe_recv.c check_type_state) (measured: seed 20261232 sequence 16220, 10
  // FETCH_ADDs posted in ERR 80 us after a CMP_SWP's NAK are flushed when the CMP_SWP's timer
  // runs out; 17 variants in tools/rxe-vm).
  if (qp.state != QpState::kErr || qp.flush_pending || qp.sq.empty()) return;
  if (!profile().behaviour.requester_walks_one_wqe_in_error) return;
  FlushSq(qp);
}

void Nic::CompleterRunsInReset(Qp& qp) {
  QueuesNote note(*this, qp);
  // rxe_comp.c rxe_completer in RESET: rxe_drain_resp_pkts(qp, false) moves the consumer past
  // every WQE queued, without a completion: the WRs a post refused in RESET left queued
  // (Behaviour::post_send_below_rts_queues) never complete when the transport timer armed
  // before the RESET runs out there (Behaviour::retrans_timer_runs_out). The requester's
  // index stays on them: after RTS it sends them again, as ghosts (measured: seed 20261235
  // sequence 1226, 3 of 3 runs: a SEND_IMM posted in RESET arrives at the peer after RTS
  // and never completes; the probe tests/differential/probes/resetA.qps, 1 of 2 runs: the
  // SEND posted in RESET takes the peer's one receive; in the other run it was not sent).
  if (qp.state != QpState::kReset || qp.sq.empty()) return;
  if (!profile().behaviour.post_send_below_rts_queues) return;
  for (size_t i = qp.sq_next; i < qp.sq.size(); ++i) {
    SendWqe& w = qp.sq[i];
    if (w.ghost || w.done) continue;
    ReturnRdCredit(qp, w);
    w.ghost = true;
    ++qp.ghosts;
  }
}

void Nic::RequesterRunsInError(Qp& qp) {
  // rxe_req.c rnr_nak_timer schedules the requester, which in QP_STATE_ERROR takes the WQE
  // at req.wqe_index (req_next_wqe: none when the index is the producer) and runs the
  // completer, which drains the ring (measured: seed 605888837999 sequence 1321, 3 of 3 rxe
  // runs: 14 SEND_IMMs into a QP without a receive, rnr_retry 7, retry_cnt 0, fail the QP
  // while an RNR timer is pending; three single posts in ERR later, a post of 5 is flushed at
  // once, which it is not without this walk: its producer would be the requester's index).
  if (qp.state != QpState::kErr || qp.flush_pending) return;
  if (!profile().behaviour.requester_walks_one_wqe_in_error || qp.unwalked.empty()) return;
  WalkOneInError(qp);
  FlushSq(qp);
}

void Nic::HandleResponse(Qp& qp, Packet& pkt) {
  // R10: responses are dropped while the QP is not (or no longer) sending (rxe_recv.c
  // check_type_state: req.state beyond DRAINED, ERR included, drops them before the
  // completer).
  if (qp.state != QpState::kRts && qp.state != QpState::kSqd && qp.state != QpState::kSqe) return;
  if (!IsReliable(qp.type)) return;
  qp.stale_timeout = false;  // this completer run has a response: no timeout is taken
  // rxe_comp.c get_wqe: the head never started: the response is dropped (COMPST_DONE).
  if (HeadStuck(qp)) return;
  if (ConsumerHeadUnsent(qp)) {
    // COMPST_DONE; the completer runs again without a packet, finds the head still posted and
    // exits (COMPST_EXIT), pushing retrans_timer on while PSNs are outstanding (as below).
    if (profile().behaviour.retry_timer_runs_during_rnr && qp.timer_armed && Outstanding(qp)) {
      ArmTimer(qp);
    }
    return;
  }
  if (qp.retry_stalled) return;  // rxe_completer exits while req.need_retry is set
  const uint32_t comp_psn_before = qp.comp_psn;
  // The WQE the response is about, and implicit ACKs of earlier SEND/WRITEs.
  // Waiting out an RNR timer the requester went back to the NAKed WQE (sq_next), yet the
  // WQEs after it were sent: rxe's completer matches a response against the head of the SQ
  // whatever the requester does (Behaviour::psn_nak_uses_retry: a sequence NAK of a later
  // WQE's packets counts then).
  size_t sent = qp.sq_next;
  if (qp.rnr_wait && profile().behaviour.psn_nak_uses_retry) {
    while (sent < qp.sq.size() && qp.sq[sent].sent && !qp.sq[sent].done) ++sent;
  }
  size_t index = sent;
  bool progress = false;
  // Behaviour::psn_nak_uses_retry: this sequence (or implied) NAK counted a retry (after the
  // counters were reset for the WQEs it acknowledged implicitly, as rxe_comp.c check_psn
  // does first).
  bool nak_counted = false;
  // rxe's comp.psn when check_psn reaches the WQE the response is about: a WQE acknowledged
  // implicitly on the way moves it past its last packet (rxe_comp.c complete_wqe); a ghost
  // lies before the consumer index and moves nothing.
  uint32_t comp_psn_at_wqe = comp_psn_before;
  bool matched = false;  // `index` holds the response's PSN
  for (size_t i = 0; i < sent; ++i) {
    SendWqe& w = qp.sq[i];
    if (w.done || !w.sent) continue;
    bool contains = PsnDiff(pkt.psn, w.psn) >= 0 && PsnDiff(pkt.psn, LastPsn(w)) <= 0;
    if (contains) {
      index = i;
      matched = true;
      break;
    }
    if (PsnDiff(LastPsn(w), pkt.psn) < 0) {
      if (!w.ghost && IsSendOrWrite(w.wr.opcode) &&
          PsnDiff(PsnAdd(LastPsn(w), 1), comp_psn_at_wqe) > 0) {
        comp_psn_at_wqe = PsnAdd(LastPsn(w), 1);
      }
      if (w.ghost && !IsSendOrWrite(w.wr.opcode)) {
        // Before rxe's consumer index: check_psn never sees it, so a later response is no
        // implied NAK of this READ/atomic (its own response was dropped, ConsumerHeadUnsent).
        w.done = true;
        continue;
      }
      if (IsSendOrWrite(w.wr.opcode)) {
        w.done = true;  // covered by a later response: acknowledged
        w.implied_ack = true;
        // A ghost lies before rxe's consumer index: check_psn never completes it, and it
        // resets no retry counter (reset_retry_counters).
        if (!w.ghost) progress = true;
      } else {
        // A READ/ATOMIC whose response never came, overtaken by a later ACK or response (an
        // implied NAK, IBTA 9.7.5.2.1; rxe_comp.c check_psn: COMPST_ERROR_RETRY): resend it,
        // the later response is not taken (its WQE is answered again).
        index = sent;
        if (profile().behaviour.psn_nak_uses_retry) {
          if (progress) ResetRetries(qp);
          nak_counted = true;
          if (qp.started_retry) break;  // a retry is under way: this starts none
          if (!TakeRetry(qp)) {
            FailWqe(qp, i, WcStatus::kRetryExcErr, "retry count exceeded (implied NAK)");
            return;
          }
          qp.started_retry = true;
        }
        GoBackTo(qp, i);
        break;
      }
    }
  }
  if (index == sent && pkt.kind == PacketKind::kNak) index = NakBehindHead(qp, pkt, sent);
  // Behaviour::read_response_waits_for_comp_psn: rxe_comp.c check_psn drops any packet newer
  // than comp.psn inside a READ/atomic WQE (COMPST_DONE): a response, and a NAK too. comp.psn
  // lags where a ghost's response was dropped before the WR behind it started
  // (ConsumerHeadUnsent; probes ghost-read-*: after ERR -> RTS a ghost, then a READ: its
  // response is dropped, the transport timer resends it from the ghost's PSN), and where a
  // NAK PSN sequence error names a packet inside a multi-packet READ (rxe acknowledges none
  // of it). A SEND/WRITE's ACK is taken (check_ack).
  const bool dropped_ahead = matched && profile().behaviour.read_response_waits_for_comp_psn &&
                             !qp.sq[index].ghost && !IsSendOrWrite(qp.sq[index].wr.opcode) &&
                             PsnDiff(pkt.psn, comp_psn_at_wqe) > 0;
  if (index < sent && !dropped_ahead) {
    SendWqe& w = qp.sq[index];
    switch (pkt.kind) {
      case PacketKind::kAck:
        if (IsSendOrWrite(w.wr.opcode) && PsnDiff(LastPsn(w), pkt.psn) <= 0) {
          w.done = progress = true;
        }
        break;
      case PacketKind::kReadResp:
      case PacketKind::kAtomicResp: {
        if (IsSendOrWrite(w.wr.opcode)) break;
        uint8_t orig[8];
        const uint8_t* data = pkt.data.data();
        size_t len = pkt.data.size();
        if (pkt.kind == PacketKind::kAtomicResp) {
          std::memcpy(orig, &pkt.atomic_orig, 8);
          data = orig;
          len = 8;
        }
        const uint64_t before = bus_->delay_total();
        WcStatus st = mrs_.Scatter(Dma(DmaKind::kResponseData, qp.qpn), w.wr.sg_list,
                                   qp.init.pd.id, data, len);
        // host_bus.h contract 3: the CQE waits for the data's write.
        if (const uint64_t extra = bus_->delay_total() - before) {
          w.data_written_ns = world_->events().Now() + extra;
        }
        if (st != WcStatus::kSuccess) {
          // rxe_comp.c check_ack resets the retry counters (comp.started_retry too) for a
          // READ response or atomic ACK before do_read/do_atomic writes the data, so a retry
          // under way ends here even though the write fails; started_retry survives the
          // modifies that follow (seed 271681157250 sequence 636: after RESET -> RTS with
          // retry_cnt 0, a NAK PSN sequence error fails the next SEND with RETRY_EXC_ERR).
          ResetRetries(qp);
          FailWqe(qp, index, st, "local error on response data");
          return;
        }
        w.done = progress = true;
        break;
      }
      case PacketKind::kNak:
        switch (pkt.nak) {
          case NakCode::kRnr: OnRnrNak(qp, index, pkt.psn, pkt.rnr_timer); return;
          case NakCode::kPsnSeqErr:
            AdvanceCompPsn(qp, pkt.psn);  // rxe_comp.c check_ack: a NAK acknowledges before it
            if (profile().behaviour.psn_nak_uses_retry) {
              if (progress) ResetRetries(qp);
              nak_counted = true;
              if (qp.started_retry) break;  // a retry is under way: this NAK starts none
              if (!TakeRetry(qp)) {
                // As for a fatal NAK (StopAtNak): rxe answers inside the post, so the
                // requester stops after the packet that drew this NAK.
                if (profile().behaviour.post_send_runs_to_completion) {
                  uint32_t next = PsnAdd(pkt.drawn_by_psn, 1);
                  // A READ request that drew it took the PSNs of all its response packets
                  // when it left (rxe_req.c update_wqe_psn; seed 20261243 sequence 10898:
                  // a 2-packet READ behind an RNR-NAKed SEND, sq_psn 3).
                  for (const SendWqe& d : qp.sq) {
                    if (d.sent && d.wr.opcode == WrOpcode::kRdmaRead && d.psn == pkt.drawn_by_psn) {
                      next = PsnAdd(d.psn, std::max<uint32_t>(d.npkts, 1));
                      break;
                    }
                  }
                  if (PsnDiff(qp.next_psn, next) > 0) qp.next_psn = next;
                }
                FailWqe(qp, index, WcStatus::kRetryExcErr,
                        "retry count exceeded (PSN sequence NAK)");
                return;
              }
              qp.started_retry = true;
            }
            GoBackTo(qp, index);
            break;
          case NakCode::kInvalidRequest:
            StopAtNak(qp, index, pkt.psn);
            FailWqe(qp, index, WcStatus::kRemInvReqErr, "remote invalid request");
            return;
          case NakCode::kRemoteAccess:
            StopAtNak(qp, index, pkt.psn);
            FailWqe(qp, index, WcStatus::kRemAccessErr, "remote access error");
            return;
          default:
            StopAtNak(qp, index, pkt.psn);
            FailWqe(qp, index, WcStatus::kRemOpErr, "remote operational error");
            return;
        }
        break;
      default:
        break;
    }
  }
  if (progress && !nak_counted) ResetRetries(qp);
  // rxe_comp.c COMPST_UPDATE_COMP: comp.psn = the response's PSN + 1. A READ's response
  // is one packet here for the npkts rxe sends: comp.psn passes the last one (seed 20261232
  // sequence 12735: a 2-packet READ, then a SEND's RNR retry resends it from PSN 2, not 1).
  if (dropped_ahead) {
    AdvanceCompPsn(qp, comp_psn_at_wqe);
  } else if (pkt.kind != PacketKind::kNak && (progress || index < sent)) {
    const uint32_t npkts = pkt.kind == PacketKind::kReadResp ? std::max<uint32_t>(pkt.npkts, 1) : 1;
    AdvanceCompPsn(qp, PsnAdd(pkt.psn, npkts));
  }
  DrainSq(qp);
  if (qp.state == QpState::kErr) return;
  if (progress) {
    bool outstanding = false;
    for (size_t i = 0; i < qp.sq_next && !outstanding; ++i) outstanding = !qp.sq[i].done;
    if (outstanding) {
      ArmTimer(qp);
    } else {
      StopTimer(qp);
    }
  } else if (pkt.kind == PacketKind::kAck && index < sent &&
             profile().behaviour.partial_ack_resets_retries_only) {
    // rxe_comp.c: an ACK inside the head message that is newer than comp.psn reaches
    // check_ack (reset_retry_counters); an older one is dropped (check_psn COMPST_DONE). The
    // timer is not pushed: the inline ACK has caught comp.psn up with req.psn (COMPST_EXIT).
    // Older than comp.psn: dropped. rxe's retry resends a message from comp.psn
    // (retry_first_write_send), the model's from its first packet, whose duplicate's ACK rxe
    // never sees: it neither resets the counters nor pushes the timer (seed 20261257 sequence
    // 1904: a NAK PSN sequence error had moved comp.psn into the message; rxe's retry stays
    // under way and the RNR loop goes on).
    const SendWqe& w = qp.sq[index];
    if (PsnDiff(pkt.psn, comp_psn_before) >= 0 &&
        (qp.partial_ack_serial != w.serial || PsnDiff(pkt.psn, qp.partial_ack_psn) > 0)) {
      qp.partial_ack_serial = w.serial;
      qp.partial_ack_psn = pkt.psn;
      ResetRetries(qp);
    }
  } else if (profile().behaviour.retry_timer_runs_during_rnr && qp.timer_armed &&
             Outstanding(qp)) {
    // rxe_comp.c COMPST_EXIT: a completer run that handled a response other than an RNR NAK
    // (here: a NAK PSN sequence error, a duplicate's ACK) pushes retrans_timer on while PSNs
    // are outstanding; only RNR NAKs leave it running (measured: one SEND into an RNR loop
    // ends with RETRY_EXC_ERR, two or more are RNR-retried on, the second one's NAK pushing it).
    ArmTimer(qp);
  }
  CheckDrained(qp);
  Kick(qp);
}

void Nic::StopAtNak(Qp& qp, size_t index, uint32_t psn) {
  // Behaviour::post_send_runs_to_completion: rxe's loopback answers each packet inside the
  // post, so a fatal NAK reaches the completer before the next packet leaves, and the
  // requester, finding the QP in ERR, sends nothing more: its PSN stops after the NAKed
  // packet (measured: sq_psn 1 after a 3-packet SEND into a 16-byte receive).
  if (!profile().behaviour.post_send_runs_to_completion) return;
  // A READ request is one packet that takes the PSNs of all its response packets.
  const SendWqe& w = qp.sq[index];
  const uint32_t next = w.wr.opcode == WrOpcode::kRdmaRead ? PsnAdd(w.psn, w.npkts) : PsnAdd(psn, 1);
  if (PsnDiff(qp.next_psn, next) > 0) qp.next_psn = next;
  // Nor did it take the WQEs behind this one: req.wqe_index is just past it (update_state),
  // and the WQEs from there on stay in the ring untaken (NoteUnwalked; measured with the
  // ring's wrap, seed 20261220 sequence 1092: 8 WRs whose second failed leave 5).
  if (qp.sq_next > index + 1) qp.sq_next = index + 1;
  // A NAK before the message's last packet: the requester never sent its END packet, so
  // req.wqe_index is still on this WQE (Qp::req_index_on_failed; measured: seed 20261232
  // sequence 16527, a 2-packet WRITE to an invalidated window NAKed at its first packet; the
  // 15 WQEs three later posts in ERR leave bring the producer round to the requester's index,
  // which is one behind the consumer, and nothing is flushed).
  if (w.wr.opcode != WrOpcode::kRdmaRead && PsnDiff(LastPsn(w), psn) > 0) {
    qp.req_index_on_failed = true;
  }
  // A READ's NAK inside the post: rxe's responder runs a READ request as a tasklet, at the
  // requester's next spin_unlock_bh (row 120), and the requester walks two slots in ERR, not
  // one (measured, 2 of 2 each: 3 READs NAKed at the first, max_rd_atomic 1 or 4, leave no
  // stale WQE; 4 READs leave one; 3 FETCH_ADDs, answered inline, leave one, as every other
  // NAK does; seed 20261235 sequence 414).
  if (w.wr.opcode == WrOpcode::kRdmaRead && posting_ == &qp) qp.read_nak_in_post = true;
}

void Nic::ReturnRdCredit(Qp& qp, SendWqe& w) {
  if (!w.has_rd_credit) return;
  w.has_rd_credit = false;
  // rxe_comp.c complete_ack alone gives the credit back (a successful response to the WQE at
  // the consumer index): not for a ghost (before that index), a local operation or a WQE
  // completed by a later response (COMPST_COMP_WQE), which hold one taken over from their slot
  // (SendSlot::rd_credit).
  if (profile().behaviour.failed_rd_atomic_keeps_credit &&
      !(w.done && w.status == WcStatus::kSuccess && !w.ghost && !w.implied_ack &&
        !IsLocalOp(w.wr.opcode))) {
    // rxe: wqe->has_rd_atomic stays set in the slot (SendSlot::rd_credit).
    if (SendSlot* s = SlotToWrite(qp, w.slot)) s->rd_credit = true;
    return;
  }
  ++qp.rd_atomic_avail;
}

void Nic::ResetRetries(Qp& qp) {
  qp.retry_left = qp.attr.retry_cnt;
  qp.rnr_left = qp.attr.rnr_retry;
  qp.started_retry = false;
}

void Nic::CompleteWqe(Qp& qp, size_t index, WcStatus status) {
  qp.sq[index].done = true;
  qp.sq[index].status = status;
  DrainSq(qp);
  CheckDrained(qp);
  if (qp.state == QpState::kRts) Kick(qp);
}

void Nic::DrainSq(Qp& qp) {
  QueuesNote note(*this, qp);
  // SQ completions in posting order: only the head may retire.
  while (!qp.sq.empty() && qp.sq.front().done) {
    if (qp.sq_next == 0 && RerunsFromStaleSlot(qp.sq.front())) {
      // Behaviour::retry_reruns_local_ops: a retry sent the requester back before this local
      // operation it had run, and the answer to the message before it arrived first (rxe's
      // loopback answers inside the requester's send). rxe_comp.c retires it (its CQE now);
      // req.wqe_index still points at its slot, so the requester runs it again there and
      // fails without a CQE (FailLocally: a ghost; measured, probes bind-rnr-a and -f).
      SendWqe& head = qp.sq.front();
      head.ghost = true;
      ++qp.ghosts;
      const Retired r = RetireWqe(qp, head);
      if (r == Retired::kOk) qp.sq.front().done = false;  // its slot is still to be visited
      return;
    }
    SendWqe w = std::move(qp.sq.front());
    qp.sq.pop_front();
    if (qp.sq_next > 0) --qp.sq_next;
    if (qp.rnr_index > 0) --qp.rnr_index;
    if (w.ghost) {  // rxe: the completer consumed its slot before; no CQE
      --qp.ghosts;
      GhostLeaves(qp, w);
      continue;
    }
    ReturnRdCredit(qp, w);
    if (RetireWqe(qp, w) == Retired::kQpFailed) return;
  }
  // Ghosts lie before rxe's consumer index, so they hold no completion back: a finished WQE
  // behind them completes now and becomes a ghost itself (its slot consumed; differential
  // seed 20261214 sequence 81: a BIND_MW behind ghosts completes before the SEND after it
  // fails).
  if (qp.ghosts == 0) return;
  for (size_t i = 0; i < qp.sq.size(); ++i) {
    SendWqe& w = qp.sq[i];
    if (w.ghost) continue;
    if (!w.done) return;
    ReturnRdCredit(qp, w);
    w.ghost = true;
    ++qp.ghosts;
    if (RetireWqe(qp, w) != Retired::kOk) return;  // the queue may have changed
  }
}

Nic::Retired Nic::RetireWqe(Qp& qp, SendWqe& w) {
  qp.wait_fence = false;  // rxe_comp.c do_complete
  // Context caches (timing.h contract 5): the completer reads the WQE it retires.
  const uint64_t ready =
      std::max(RetireWqeReady(qp, w, IsReliable(qp.type) && w.status == WcStatus::kSuccess),
               w.data_written_ns);
  const WcStatus status = SlotStatusAtRetire(qp, w);
  // R21: a CQE only for signaled WRs or errors.
  if (status == WcStatus::kSuccess && !w.signaled) return Retired::kOk;
  WorkCompletion wc;
  wc.wr_id = w.wr.wr_id;
  wc.status = status;
  wc.qp_num = qp.qpn;
  // A slot's stale error (Behaviour::send_slot_keeps_status) has the fields rxe_comp.c
  // make_send_cqe fills for any error: no opcode, byte_len or wc_flags.
  if (status == w.status) {
    wc.opcode = SendWcOpcode(w.wr.opcode);
    bool atomic = w.wr.opcode == WrOpcode::kAtomicCmpAndSwp ||
                  w.wr.opcode == WrOpcode::kAtomicFetchAndAdd;
    wc.byte_len = atomic && !profile().behaviour.atomic_wc_byte_len_is_sge_length
                      ? 8
                      : static_cast<uint32_t>(w.length);
    wc.wc_flags = SendWcFlags(w.wr.opcode);
  }
  const bool failed_locally = w.failed_locally;  // `w` may live in qp.sq: read it first
  const QpState before = qp.state;
  // A requester's CQE: the slot's stale status, or the WR's success.
  const bool from_completer = status != w.status || status == WcStatus::kSuccess;
  PushCqe(qp, *qp.send_cq, wc, false, ready, from_completer);
  if (failed_locally && qp.state != QpState::kErr) {
    EnterSendError(qp, "local error");  // rxe_comp.c COMPST_ERROR at the head
    return Retired::kQpFailed;
  }
  return qp.state == before ? Retired::kOk : Retired::kQpChanged;
}

WcStatus Nic::SlotStatusAtRetire(Qp& qp, SendWqe& w) {
  // Behaviour::send_slot_keeps_status: rxe_comp.c do_complete reports wqe->status, which rxe
  // writes only for an error, a flush, a local operation or a faked UD send; the post
  // (providers/rxe init_send_wqe) leaves the slot's last one. Differential seed 858754918255
  // sequence 859: a READ posted after ERR -> RTS into a slot the flush had marked completes
  // WR_FLUSH_ERR though it was executed, and the QP stays in RTS.
  if (!profile().behaviour.send_slot_keeps_status) return w.status;
  w.slot_noted = true;
  if (w.status != WcStatus::kSuccess || w.wrote_success) {
    NoteSlotStatus(qp, w.slot, w.status);
    return w.status;
  }
  return qp.send_slots.empty() ? WcStatus::kSuccess : qp.send_slots[w.slot].status;
}

void Nic::GhostLeaves(Qp& qp, SendWqe& g) {
  // A stale WQE leaves the model's queue: its slot keeps what rxe's requester wrote into it
  // (a status, a credit never given back), unless its completion had noted it already.
  if (g.done && !g.slot_noted && (g.status != WcStatus::kSuccess || g.wrote_success)) {
    NoteSlotStatus(qp, g.slot, g.status);
  }
  ReturnRdCredit(qp, g);
}

SendSlot* Nic::SlotToWrite(Qp& qp, uint32_t slot) {
  if (!profile().behaviour.send_slot_keeps_status) return nullptr;
  if (qp.send_slots.empty()) qp.send_slots.resize(qp.send_ring_slots());
  return &qp.send_slots[slot];
}

void Nic::TakeSlotCredit(Qp& qp, SendWqe& w) {
  if (!qp.send_slots.empty()) w.has_rd_credit = std::exchange(qp.send_slots[w.slot].rd_credit, false);
}

void Nic::NoteSlotStatus(Qp& qp, uint32_t slot, WcStatus status) {
  if (status == WcStatus::kSuccess && qp.send_slots.empty()) return;
  if (SendSlot* s = SlotToWrite(qp, slot)) s->status = status;
}

void Nic::FailWqe(Qp& qp, size_t index, WcStatus status, const std::string& cause) {
  // R7: the failing WR completes with its own status (even unsignaled), then the flush.
  qp.sq[index].done = true;
  qp.sq[index].status = status;
  EnterSendError(qp, cause);
}

void Nic::EnterSendError(Qp& qp, const std::string& cause) {
  if (!IsReliable(qp.type) && profile().behaviour.send_errors_to_sqe) {
    EnterSqe(qp, cause);  // R8 (IBTA C10-38)
  } else {
    EnterError(qp, cause);
  }
}

void Nic::FailLocally(Qp& qp, WcStatus status, const std::string& cause) {
  qp.completer_due = true;  // rxe_req.c req_error: rxe_run_task(&qp->comp.task)
  // rxe_req.c marks the WQE wqe_state_error and stops; rxe_comp.c get_wqe completes it only
  // at the head of the queue, after the earlier WQEs' ACKs (their data has landed).
  const size_t index = qp.sq_next;
  if (qp.sq[index].ghost) {
    // A stale WQE run again after ERR -> RTS (Behaviour::requester_walks_one_wqe_in_error):
    // rxe_req.c err: marks it and sets req.state ERROR; the completer's head is another WQE,
    // so nothing completes and the QP stays in RTS with its requester stopped.
    qp.sq[index].done = true;
    qp.sq[index].status = status;  // written into its slot (send_slot_keeps_status)
    ++qp.sq_next;
    DrainSq(qp);
    qp.requester_dead = true;
    return;
  }
  // Ghosts lie before rxe's consumer index (DrainSq): the completer's head is the first WQE
  // that is not one, so only those hold the failure back (differential seed 368346329046
  // sequence 991: a BIND_MW that fails behind unanswered ghost SENDs completes MW_BIND_ERR
  // at once on rxe, and the QP goes to ERR).
  bool earlier = false;
  for (size_t i = 0; i < index && !earlier; ++i) earlier = !qp.sq[i].done && !qp.sq[i].ghost;
  if (!earlier || !profile().behaviour.local_error_completes_in_order) {
    FailWqe(qp, index, status, cause);
    return;
  }
  SendWqe& w = qp.sq[index];
  w.done = w.failed_locally = true;
  qp.requester_revived = false;
  w.status = status;
}

void Nic::OnRnrNak(Qp& qp, size_t index, uint32_t psn, uint8_t timer) {
  // R18: rnr_retry 7 retries forever; otherwise each RNR NAK uses one retry.
  if (qp.attr.rnr_retry != 7) {
    if (qp.rnr_left <= 0) {
      StopAtNak(qp, index, psn);  // the NAKed packet ends the message
      FailWqe(qp, index, WcStatus::kRnrRetryExcErr, "RNR retry exceeded");
      return;
    }
    --qp.rnr_left;
  }
  // IBTA: no transport timeout while waiting out the RNR timer; rxe leaves it running
  // (Behaviour::retry_timer_runs_during_rnr: OnTimeout counts retry_cnt down meanwhile).
  if (!profile().behaviour.retry_timer_runs_during_rnr) {
    StopTimer(qp);
  }
  // The retry starts from the NAKed WQE when the RNR timer expires; meanwhile rxe goes on
  // sending the WQEs it has not sent yet (Behaviour::rnr_wait_sends_new_wqes).
  if (profile().behaviour.rnr_wait_sends_new_wqes) {
    qp.rnr_index = index;
  } else {
    qp.sq_next = index;
  }
  qp.rnr_wait = true;
  // rxe_comp.c rnrnak_jiffies: usecs_to_jiffies (rounded up), at least 1.
  rnr_waits_.Push(KernelTimerAt(RnrDelayNs(timer), /*round_up=*/true), qps_[qp.handle]);
}

void Nic::RunRnrWait(std::weak_ptr<Qp>& weak) {
  auto q = weak.lock();
  if (q && q->rnr_timer_in_err) {
    // Qp::retry_after_err: rnr_nak_timer sets req.need_retry in ERR or after it; the requester
    // it schedules retries at once where the QP has left ERR.
    q->rnr_timer_in_err = false;
    q->retry_after_err = true;
    if (q->state == QpState::kRts || q->state == QpState::kSqd) RunRequester(*q);
    if (q->state == QpState::kErr) RequesterRunsInError(*q);
    return;
  }
  if (!q || !q->rnr_wait) return;
  q->rnr_wait = false;
  if (StallRetry(*q)) return;
  const size_t from = profile().behaviour.rnr_wait_sends_new_wqes ? q->rnr_index : q->sq_next;
  if (UnsendInSqd(*q, from)) return;
  if (from < q->sq_next) q->sq_next = from;
  ClearStuck(*q);  // req_retry: req.wqe_index = the consumer index
  RewindPsn(*q, from);
  RunRequester(*q);
}

size_t Nic::NakBehindHead(const Qp& qp, const Packet& pkt, size_t sent) const {
  // Behaviour::nak_behind_head_hits_head: rxe_comp.c check_psn compares a response with the
  // head WQE's last PSN, then with comp.psn: one before the head's first PSN (comp.psn
  // behind it after ERR -> RTS) goes to check_ack with the head (a READ/atomic head only at
  // comp.psn). Seed 301565882534 sequence 1353: a READ at PSN 1 after ERR -> RTS drew a
  // sequence NAK at PSN 0 and ended RETRY_EXC_ERR at once (retry_cnt 0).
  if (!profile().behaviour.nak_behind_head_hits_head) return sent;
  for (size_t i = 0; i < sent; ++i) {
    const SendWqe& w = qp.sq[i];
    if (w.done || !w.sent || w.ghost) continue;  // ghosts lie before the consumer index
    if (PsnDiff(pkt.psn, w.psn) >= 0 || PsnDiff(pkt.psn, qp.comp_psn) < 0) return sent;
    if (!IsSendOrWrite(w.wr.opcode) && pkt.psn != qp.comp_psn) return sent;
    return i;
  }
  return sent;
}

void Nic::AdvanceCompPsn(Qp& qp, uint32_t psn) {
  if (PsnDiff(psn, qp.comp_psn) > 0) qp.comp_psn = psn;
}

uint32_t Nic::RetryPsn(const Qp& qp, size_t index) const {
  // rxe's comp.psn: past the packets of this message already acknowledged
  // (Behaviour::partial_ack_resets_retries_only keeps the latest such ACK).
  const SendWqe& w = qp.sq[index];
  const uint32_t psn = w.serial == qp.partial_ack_serial ? PsnAdd(qp.partial_ack_psn, 1) : w.psn;
  // Behaviour::retry_rewinds_sq_psn: req_retry's req.psn = comp.psn up to the message's last
  // packet: behind the WQE when WQEs that took PSNs before it were never answered
  // (RebasePsns), or inside it where a NAK PSN sequence error acknowledged its first packets
  // (rxe_comp.c check_ack; probe rnr-sqd-early: SQD before the first RNR retry drains at
  // sq_psn 2).
  if (profile().behaviour.retry_rewinds_sq_psn && PsnDiff(qp.comp_psn, LastPsn(w)) <= 0) {
    return qp.comp_psn;
  }
  return psn;
}

void Nic::RebasePsns(Qp& qp, size_t index, uint32_t psn) {
  // rxe_req.c update_wqe_psn: a resent WQE's first packet takes req.psn as its first_psn.
  bool first = true;
  for (size_t i = index; i < qp.sq.size(); ++i) {
    SendWqe& w = qp.sq[i];
    if (!w.sent || w.done) continue;
    // req_retry: the first SEND/WRITE retried from behind its first PSN loses its data
    // (SendWqe::emptied_by_retry; seed 20261220 sequence 1292: a WRITE through a window
    // without REMOTE_WRITE completes, its RETH length 0).
    if (first && IsSendOrWrite(w.wr.opcode) && PsnDiff(psn, w.psn) < 0) {
      w.emptied_by_retry = true;
      w.npkts = 1;
      BusyRequesterFor(qp, (psn - w.psn) & 0xffffff);
    }
    first = false;
    w.psn = psn;
    psn = PsnAdd(psn, w.npkts);
  }
}

void Nic::BusyRequesterFor(Qp& qp, uint32_t skipped_packets) {
  // NicTiming::retry_skip_ps_per_packet: retry_first_write_send steps through the skipped
  // packets one by one (2^24 - 2 when comp.psn is 2 behind: 0.85-0.95 s in tools/rxe-vm,
  // seed 332030260451 sequence 1301), inside the completer's tasklet: the requester waits
  // for it, so does a flush (EnterError), and, with retry_skip_stalls_host, the program.
  const NicTiming& t = profile().timing.nic;
  if (t.retry_skip_ps_per_packet == 0 || skipped_packets == 0) return;
  const uint64_t until =
      world_->events().Now() + uint64_t{skipped_packets} * t.retry_skip_ps_per_packet / 1000;
  if (until <= qp.requester_busy_until_ns) return;
  qp.requester_busy_until_ns = until;
  skip_loops_.Push(until, qp.weak_from_this());
  const uint64_t wakes = until + t.retry_skip_host_wakes_late_ns;
  if (t.retry_skip_stalls_host) {
    world_->StallHost(wakes);
  } else if (t.retry_skip_host_joins_at > 0) {
    world_->StallHostAtWake(wakes, t.retry_skip_host_joins_at);
  }
}

bool Nic::RerunsFromStaleSlot(const SendWqe& w) const {
  return profile().behaviour.retry_reruns_local_ops && IsLocalOp(w.wr.opcode) && w.done &&
         !w.ghost && !w.failed_locally && w.status == WcStatus::kSuccess;
}

bool Nic::RerunWaitsForAnswer(Qp& qp) {
  // rxe_net.c rxe_loopback hands a packet to rxe_rcv at once, and the answer comes back the
  // same way: the requester a timer runs takes its next WQE only after the answer to the
  // message it just sent has been handled (a post does so already: Doorbell). Only where
  // it matters: the next WQE is a local operation it will run again (DrainSq).
  if (in_post_ || qp.sq_next == 0 || qp.sq_next >= qp.sq.size() ||
      !RerunsFromStaleSlot(qp.sq[qp.sq_next])) {
    return false;
  }
  // The message before it answered already (a requester kicked by the last of the answer).
  if (qp.sq[qp.sq_next - 1].done) return false;
  if (world_->in_flight() == 0) return false;  // nothing on its way: no answer to wait for
  // No answer (a peer that drops it): the requester goes on as rxe's would, a moment later.
  answer_waits_.Push(world_->events().Now() + kPostRunNs, qp.weak_from_this());
  return true;
}

bool Nic::WaitsForSkipLoop(Qp& qp) {
  if (qp.requester_busy_until_ns <= world_->events().Now()) return false;
  qp.kick_after_skip_loop = true;
  return true;
}

void Nic::EndSkipLoop(std::weak_ptr<Qp>& weak) {
  auto q = weak.lock();
  // Gone, a later loop, or a QP reset meanwhile (requester_busy_until_ns 0): not this loop.
  if (!q || q->requester_busy_until_ns != world_->events().Now()) return;
  Qp& qp = *q;
  if (std::exchange(qp.flush_after_skip_loop, false) && qp.flush_pending) {
    // EnterError during the loop: its flush now; a QP moved on from ERR meanwhile has none.
    if (qp.state == QpState::kErr) {
      FlushOnError(qp);
    } else {
      qp.flush_pending = qp.flush_begun = false;
    }
  }
  const bool kick = std::exchange(qp.kick_after_skip_loop, false);
  // The loop ran inside req_retry: the requester goes on from it at once, to req_next_wqe.
  // SQD came meanwhile (req.state DRAIN): the WQEs req_retry set back to posted stay so and
  // the SQ is drained (SQ_DRAINED), as after any retry in SQD (UnsendInSqd; seed
  // 42446856514 sequence 1093: the program joined the loop's CPU after SQD, and the retried
  // SEND waited unsent for the epilogue's ERR, which flushed it).
  if (qp.state == QpState::kSqd && UnsendInSqd(qp, qp.first_undone())) return;
  if (kick) Kick(qp);
}

void Nic::RewindPsn(Qp& qp, size_t index) {
  // Behaviour::retry_rewinds_sq_psn: rxe_req.c req_retry sets req.psn = comp.psn; the
  // requester moves it on again as it resends (ReqTransmit).
  if (!profile().behaviour.retry_rewinds_sq_psn || index >= qp.sq.size()) return;
  if (!qp.sq[index].sent || qp.sq[index].done) return;
  qp.next_psn = RetryPsn(qp, index);
  // A later retry resends an emptied WQE whole (req_retry: dma.resid = dma.length), and the
  // WQEs behind it take their PSNs after it again.
  bool refill = false;
  for (size_t i = index; i < qp.sq.size(); ++i) {
    SendWqe& w = qp.sq[i];
    if (!w.emptied_by_retry) continue;
    w.emptied_by_retry = false;
    w.npkts = PacketCount(w.length, PathMtuBytes(qp));
    refill = true;
  }
  // comp.psn behind the retried WQE: the PSNs of WQEs that failed unanswered and left with
  // ERR -> RTS lie between; the resent WQEs take PSNs from comp.psn on (seed 20261220
  // sequence 1292: a WRITE after an RNR_RETRY_EXC_ERR SEND is resent at that SEND's PSN).
  if (refill || PsnDiff(qp.next_psn, qp.sq[index].psn) < 0) RebasePsns(qp, index, qp.next_psn);
}

bool Nic::UnsendInSqd(Qp& qp, size_t index) {
  // Behaviour::sqd_retry_unsends: rxe_req.c req_retry puts the WQEs from the retried one
  // back to wqe_state_posted and req.psn back to comp.psn; in DRAIN the requester then finds
  // nothing started (req_next_wqe) and the SQ is drained (SQ_DRAINED). The completer counts
  // no retry of a posted WQE, so they wait for SQD -> RTS and the next doorbell.
  if (qp.state != QpState::kSqd || !profile().behaviour.sqd_retry_unsends) return false;
  ClearStuck(qp);  // req_retry: req.wqe_index = the consumer index
  // req_retry also sets a WQE the requester failed (wqe_state_error) back to posted.
  for (size_t i = index; i < qp.sq.size(); ++i) {
    SendWqe& w = qp.sq[i];
    if (!w.failed_locally) continue;
    w.failed_locally = false;
    w.done = false;
    w.status = WcStatus::kSuccess;
  }
  qp.requester_revived = false;
  size_t end = std::min(qp.sq.size(), std::max(qp.sq_next, index) + 1);
  // req_retry's loop goes on to the first WQE still posted, skipping done ones: a WQE the
  // requester sent before a later run stopped short of it (a bind run again by a retry and
  // failing, row 98) goes back to posted too (seed 20261225 sequence 7: a FETCH_ADD behind
  // such a bind kept the SQ from draining).
  for (size_t i = end; i < qp.sq.size(); ++i) {
    if (!qp.sq[i].sent && !qp.sq[i].done) break;
    end = i + 1;
  }
  bool rewound = false;
  for (size_t i = index; i < end; ++i) {
    SendWqe& w = qp.sq[i];
    if (w.done || !w.sent) continue;
    if (!rewound) {
      qp.next_psn = RetryPsn(qp, i);  // req.psn = comp.psn
      // The first WQE retried, its first packets acknowledged (comp.psn inside it): it goes
      // on from there after SQD -> RTS (seed 20261245 sequence 13319: a 3-packet WRITE_WITH_IMM
      // RNR-NAKed at its last packet, resent as that packet, not as a new message at PSN 2).
      w.resumes_mid_message = IsSendOrWrite(w.wr.opcode) && PsnDiff(qp.next_psn, w.psn) > 0 &&
                              PsnDiff(qp.next_psn, LastPsn(w)) <= 0;
    }
    rewound = true;
    w.sent = false;
  }
  qp.sq_next = std::min(qp.sq_next, index);
  qp.rnr_wait = false;
  StopTimer(qp);
  CheckDrained(qp);
  return true;
}

bool Nic::Outstanding(const Qp& qp) const {
  // rxe's req.psn > comp.psn: taken by the requester, or sent and gone back to by a retry.
  for (size_t i = 0; i < qp.sq.size(); ++i) {
    const SendWqe& w = qp.sq[i];
    if (!w.done && (i < qp.sq_next || w.sent)) return true;
  }
  return false;
}

void Nic::RetryStalledInSqd(Qp& qp) {
  // rxe_qp_drain sets req.state DRAIN over ERROR: the requester runs the req_retry it held
  // back, which sets every WQE from the head back to wqe_state_posted, the errored one too.
  // With no retry held back yet, the requester is running again: a timeout's retry in SQD
  // does the same (UnsendInSqd; seed 20261216 sequence 1763).
  if (!profile().behaviour.sqd_retry_unsends) return;
  if (!qp.retry_stalled) {
    qp.requester_revived = RequesterStopped(qp);
    return;
  }
  qp.retry_stalled = false;
  // req_retry: req.wqe_index = the consumer index, so the ghosts before it go (DropGhosts),
  // and a retry from behind the first WQE's PSN (ghosts went out unanswered) steps through
  // the skipped packets first (BusyRequesterFor): the drain ends with that loop
  // (EndSkipLoop), as rxe's requester reaches req_next_wqe only after req_retry.
  const size_t index = DropGhosts(qp, qp.first_undone());
  if (qp.requester_busy_until_ns > world_->events().Now()) {
    RewindPsn(qp, index);  // req.psn = comp.psn before the loop: ibv_query_qp's sq_psn
    return;
  }
  UnsendInSqd(qp, index);
}

bool Nic::RequesterStopped(const Qp& qp) const {
  if (!profile().behaviour.local_error_stops_retries || qp.requester_revived) return false;
  for (const SendWqe& w : qp.sq) {
    if (w.failed_locally) return true;
  }
  return false;
}

size_t Nic::DropGhosts(Qp& qp, size_t index) {
  QueuesNote note(*this, qp);
  // rxe_req.c req_retry: req.wqe_index = the consumer index, req.psn = comp.psn. The ghosts
  // lie before the consumer index: the retry never sends them again, and the WQEs it resends
  // take their PSNs from comp.psn on (update_wqe_psn), the first ghost's PSN when ghosts
  // went out unanswered. Every ghost goes, also where the response that asked for the retry
  // matched one (row 145: a NAK PSN sequence error at a ghost's PSN is checked against the
  // WQE at the consumer index, and the retry resends from there).
  bool rebase = false;
  uint32_t psn = 0;
  size_t dropped = 0;
  while (!qp.sq.empty() && qp.sq.front().ghost) {
    const SendWqe& g = qp.sq.front();
    if (g.sent && !g.done && !rebase) {
      rebase = true;
      psn = g.psn;
    }
    GhostLeaves(qp, qp.sq.front());
    qp.sq.pop_front();
    --qp.ghosts;
    ++dropped;
    if (qp.sq_next > 0) --qp.sq_next;
    if (qp.rnr_index > 0) --qp.rnr_index;
  }
  index = index > dropped ? index - dropped : 0;
  if (rebase && profile().behaviour.retry_rewinds_sq_psn) RebasePsns(qp, index, psn);
  return index;
}

void Nic::GoBackTo(Qp& qp, size_t index) {
  // rxe_req.c: a requester in QP_STATE_ERROR runs no req_retry and sends nothing; need_retry
  // stays set, and the completer exits at once while it is (StallRetry).
  if (StallRetry(qp)) return;
  ClearStuck(qp);  // req_retry: req.wqe_index = the consumer index
  // Behaviour::rnr_wait_sends_new_wqes: rxe_req.c runs req_retry only when need_retry &&
  // !wait_for_rnr_timer. A retry a sequence NAK or a timeout asks for while the RNR timer
  // runs waits for it (RunRnrWait): req.psn and the requester stay where they are, and
  // ibv_query_qp's sq_psn with them (seed 20261221 sequence 624: sq_psn 2, not 0).
  if (qp.rnr_wait && profile().behaviour.rnr_wait_sends_new_wqes) {
    qp.rnr_index = std::min(qp.rnr_index, index);
    return;
  }
  index = DropGhosts(qp, index);
  if (UnsendInSqd(qp, index)) return;
  if (index < qp.sq_next) qp.sq_next = index;
  RewindPsn(qp, index);
  Kick(qp);
}

}  // namespace qptwin::model::engine
