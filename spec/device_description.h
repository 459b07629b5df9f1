// One description per device: what it reports (ibv_query_device / ibv_query_port) and how it
// behaves where devices differ. IBTA's behaviour is the default; a device is the list of its
// deviations, each with its source (a kernel or provider function, or a measured run).
//
// The model's profiles (model/profile.cc), the conformance suites' per-backend expectations
// (tests/backend_under_test.h), the reference model (spec/reference) and the check of a real
// device (tests/conformance/device_behaviour_test.cc) all read this file's descriptions.
//
// Contract:
//  1. Behaviour is plain data whose every default is IBTA's; BehaviourSettings() names each
//     field once (a static_assert keeps the table and the struct the same size).
//  2. A DeviceDescription's behaviour() is Behaviour{} with its deviations applied in order.
//     Every deviation names a setting and changes its IBTA value (device_description_test).
//  3. FindDeviceDescription() returns nullptr for an unknown name; names compare
//     case-insensitively. Descriptions are immutable and live for the whole program.
//  4. Adding a device difference: one field here (IBTA default + its name in the table), one
//     deviation in the device's list in device_description.cc, the code that acts on it, and a
//     conformance test that reads it.
#pragma once

#include <cerrno>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "spec/backend.h"

namespace qptwin {

// Behaviours in which devices are known to differ. Every default is the IBTA specification's.
struct Behaviour {
  // Creating a PD, CQ, SRQ, QP or AH beyond the device's DeviceAttr max_*. IBTA 11.2 calls it
  // "insufficient resources"; libibverbs providers over firmware say ENOMEM.
  int over_limit_errno = ENOMEM;
  // ibv_rereg_mr (IBTA 11.2.8.3, optional): 0 = re-registers; else the errno every valid
  // request gets (the region stays as it was).
  int rereg_mr_errno = 0;
  // ibv_dereg_mr of a region a memory window is bound to (IBTA 10.6.7.2.6 / 11.2.8.4: the
  // deregistration fails while windows are bound; the region stays).
  int dereg_mr_bound_mw_errno = EBUSY;
  bool supports_uc = true;   // IBTA 9.8.1: UC is optional for an HCA
  bool supports_ud = true;
  bool supports_xrc = true;  // IBTA 9.8 (XRC annex): XRCDs, XRC SRQs, XRC_SEND/XRC_RECV
  // ibv_modify_qp mask bits above IBV_QP_DEST_QPN (rate limit, ...) refused with EOPNOTSUPP.
  bool reject_extended_mask = false;
  bool send_errors_to_sqe = true;  // IBTA C10-38: UC/UD send errors -> SQE (RC -> ERR)
  bool comm_est_event = true;      // IBTA 11.6.3: COMM_EST when a packet arrives in RTR
  bool sqd_event_needs_notify = true;  // SQ_DRAINED only with en_sqd_async_notify
  // IBTA 10.8.3.3: a fenced WR waits for earlier READ/ATOMICs only (not for all earlier WRs).
  bool fence_waits_for_all = false;
  // Queues hold roundup_pow_of_two(n + 1) - 1 entries and max_inline_data = max_send_sge * 16
  // (one WQE buffer); IBTA: the device grants at least what was asked.
  bool queues_rounded_up = false;
  bool cq_overrun_is_sticky = true;  // IBTA 11.4.2.1: an overrun CQ stays in error
  // A successful send completion that does not fit its CQ is lost and the QP carries on (the
  // CQ error event is raised); a receive completion's overrun still moves the QP to ERR.
  // IBTA / R14: the QP goes to ERR either way.
  bool send_cq_overrun_keeps_qp = false;
  // IBTA 11.6.3: affiliated async errors (QP_FATAL on a CQ overrun, QP_ACCESS_ERR and
  // QP_REQ_ERR at a responder that NAKs).
  bool qp_error_events = true;
  // The requester's own CQE of SEND_WITH_IMM / RDMA_WRITE_WITH_IMM carries IBV_WC_WITH_IMM;
  // IBTA 11.4.2.1 defines WITH_IMM for receive completions only.
  bool send_wc_with_imm = false;
  // The requester CQE of an atomic (CMP_AND_SWP, FETCH_AND_ADD) has byte_len = the length of
  // the WR's SGEs, whatever it is; default: 8, the operand the atomic returns.
  bool atomic_wc_byte_len_is_sge_length = false;
  // A receive posted while the QP is in ERR waits for the next move to ERR to be flushed (a
  // request arriving in ERR is dropped before the responder); IBTA / R4: flushed at once.
  bool recv_in_err_waits = false;
  // A send posted below RTS returns EINVAL, yet the WRs are queued (bad_wr = the first WR not
  // queued) and run in RTS, are flushed by ERR or discarded by RESET. IBTA / R2: nothing queued.
  bool post_send_below_rts_queues = false;
  // IBTA 11.6.3 / R6: a QP with an SRQ raises LAST_WQE_REACHED when it enters ERR.
  bool last_wqe_reached_event = true;
  // An opcode the QP type lacks (READ/atomic on UC, WRITE/READ/atomic on UD) is accepted by
  // ibv_post_send and completes with IBV_WC_LOC_QP_OP_ERR (QP -> ERR); otherwise EINVAL at post.
  bool opcode_checked_by_requester = false;
  // A WR that fails a local check in the requester (lkey, bounds, opcode, length) completes
  // in order: the earlier WRs still complete (their data lands), then the failed one with its
  // status, then the flush. Default: the QP enters ERR at once and earlier unacknowledged WRs
  // are flushed (IBTA 10.8.3 requires the error CQE; it leaves the earlier WRs' outcome open).
  bool local_error_completes_in_order = false;
  // An SGE whose lkey does not resolve (no MR, another PD, missing access) completes with
  // IBV_WC_LOC_QP_OP_ERR; an SGE past the end of a valid MR with LOC_PROT_ERR. IBTA: both
  // are local protection errors (LOC_PROT_ERR).
  bool unresolved_lkey_is_qp_op_err = false;
  // A receive whose data cannot be placed (too small, bad lkey, outside the MR) completes
  // with IBV_WC_LOC_QP_OP_ERR and moves the receiving QP to ERR for every type (UD too);
  // an RC requester gets REM_OP_ERR. The data is placed packet by packet: the packets of the
  // message before the one that fails are executed (their data lands, rq_psn moves past
  // them) and the NAK names the failing packet. IBTA: LOC_LEN_ERR (RC requester
  // REM_INV_REQ_ERR) for a too small buffer, LOC_PROT_ERR (REM_OP_ERR) for a key, and a UD
  // QP carries on.
  bool recv_error_is_malformed_wqe = false;
  // An RC QP entering ERR flushes its receive queue before its send queue (after the CQE of
  // the error that moved it); UC and UD flush the send queue first, as IBTA's model does for
  // every type (IBTA leaves the order between the two queues open).
  bool rc_flushes_rq_first = false;
  // A move to RTS (from SQD, or from RTR with WRs a refused post queued) starts nothing: the
  // queued WRs wait for the next doorbell, which every ibv_post_send rings, also one whose
  // first WR is refused (ENOMEM, EINVAL). IBTA: they start in RTS.
  bool rts_waits_for_doorbell = false;
  // ibv_modify_qp takes pkey_index, max_dest_rd_atomic, min_rnr_timer, retry_cnt and
  // rnr_retry as given (no range check); IBTA: EINVAL outside the table / the field's bits.
  bool lax_attr_checks = false;
  // max_rd_atomic and max_dest_rd_atomic are kept as roundup_pow_of_two(n) in 8 bits (3 -> 4,
  // 200 -> 256 -> 0) and ibv_query_qp reports that; IBTA: the value given.
  bool rd_atomic_rounded_up = false;
  // ibv_post_send returns only after the requester has sent what it can and, over loopback,
  // the responder and the requester's completer have handled it (ACKs, NAKs, RNR NAKs, CQEs;
  // the timers run later). IBTA: the post queues the WRs, the device runs them afterwards.
  bool post_send_runs_to_completion = false;
  // An RNR NAK leaves the transport (retransmit) timer running: while the requester waits
  // out RNR timers, timeouts still count retry_cnt down and end the WR with RETRY_EXC_ERR
  // (also with rnr_retry 7). IBTA 9.7.5.2.8: the RNR wait is not a transport timeout.
  bool retry_timer_runs_during_rnr = false;
  // A NAK PSN sequence error, and a response past a READ/atomic that got none (an implied
  // NAK), count retry_cnt down as a transport timeout does (at 0 the WR ends with
  // RETRY_EXC_ERR), once per retry: while a retry that a NAK or a timeout started is under
  // way (until the next acknowledged progress) they start nothing. Only acknowledged
  // progress ends it: a retry under way when the QP went to ERR and RESET is still under way
  // in its next life, so a NAK starts nothing there until a response has made progress.
  // Default: each resends from its PSN without counting.
  bool psn_nak_uses_retry = false;
  // While the requester waits out an RNR NAK's timer it goes on sending the WQEs it has not
  // sent yet (they reach the responder out of sequence); the retry from the NAKed WQE starts
  // when the timer expires. IBTA 9.7.5.2.8: the requester waits, then resends from the NAKed
  // PSN; nothing is sent meanwhile.
  bool rnr_wait_sends_new_wqes = false;
  // A retry (RNR timer, transport timeout, sequence NAK) that comes while the QP is in SQD
  // resends nothing: the WQEs from the retried one on go back to not started (their PSNs
  // too), which drains the SQ (SQ_DRAINED), and they start after SQD -> RTS. IBTA 11.6.3:
  // the drain completes the messages in flight, retries included.
  bool sqd_retry_unsends = false;
  // A message of several packets whose first packet is RNR-NAKed also draws a NAK PSN
  // sequence error: its second packet arrives out of sequence (once per retry round; the
  // later ones are dropped). The default: the rest of the message is dropped silently.
  bool rnr_nak_then_seq_nak = false;
  // An RC responder sends one NAK PSN sequence error per gap: the packets past the expected
  // PSN that follow it are dropped silently until a packet at the expected PSN comes. IBTA
  // 9.7.5.1.1 (C9-88): each out-of-sequence request is NAKed (the default).
  bool one_psn_nak_per_gap = false;
  // A NAK whose PSN lies between comp.psn and the first PSN of the oldest unanswered WQE
  // (comp.psn behind it after ERR -> RTS, row 127) is that WQE's NAK: a sequence NAK starts
  // a retry of it or, retry_cnt spent, ends it with RETRY_EXC_ERR; an RNR NAK, its RNR
  // retry; a fatal NAK ends it. For a READ/atomic only a NAK at comp.psn counts. IBTA: a
  // NAK answers the request of its PSN; one that matches no outstanding request is dropped
  // (the default).
  bool nak_behind_head_hits_head = false;
  // A WRITE_WITH_IMM takes its receive at its last packet, checked there before the R_Key:
  // a one-packet one without a receive is RNR-NAKed (UC: dropped) even with a bad rkey; the
  // earlier packets of a longer one are executed (their data lands, rq_psn moves) and only the
  // last waits, so the retry resumes there. IBTA's model here: the message is taken whole,
  // R_Key first, then the receive.
  bool write_imm_receive_at_last_packet = false;
  // A duplicate SEND/WRITE (its PSN behind the expected one) is acknowledged with the PSN of
  // the last SEND/WRITE/atomic packet the responder executed, kept across RESET; a READ does
  // not move it. So after a READ, or a requester reset to an older PSN, the ACK can be older
  // than the WQE it answers: the requester ignores it and retries. IBTA 9.7.5.1.2 (C9-105):
  // the duplicate is acknowledged (its own PSN).
  bool duplicate_ack_psn_is_last_executed = false;
  // A UD WQE names its address handle, looked up when the requester sends it: an AH destroyed
  // after the post (while the WR waited, e.g. queued below RTS) fails the WR with
  // IBV_WC_LOC_QP_OP_ERR and the QP goes to ERR. Default: the AV is copied at the post (the
  // consumer must keep the AH while WRs use it; IBTA 11.2.2 leaves a violation undefined).
  bool ud_ah_resolved_at_send = false;
  // A fenced WR waits while any READ/atomic of the send queue that was sent has not completed,
  // also one behind it (or itself) that a retry went back past: a sent READ/atomic keeps its
  // max_rd_atomic credit until it completes. So a retry that reaches a fenced WR stalls: it is
  // not resent, nothing behind it is, no timer runs, and the QP waits until it is moved to
  // ERR. IBTA 10.8.3.3: the fence waits for the READ/atomics posted before it.
  bool fence_counts_sent_rd_atomic = false;
  // A READ/atomic gives its max_rd_atomic credit back only when it completes successfully:
  // one that took a credit and then failed (an error NAK, RETRY_EXC_ERR, a local error, a
  // flush, a RESET) keeps it for good, and only a modify that sets max_rd_atomic gives them
  // all back. So after ERR -> RTS (IBV_QP_CUR_STATE) or RESET -> RTS without max_rd_atomic,
  // a READ/atomic may wait for a credit that never comes. IBTA: a QP's READ/atomic
  // resources are its own again once it has left the error.
  bool failed_rd_atomic_keeps_credit = false;
  // Once the requester has failed a WR locally while earlier WRs wait for their responses
  // (local_error_completes_in_order), it sends nothing more, retries included: a transport
  // timeout with retry_cnt left, or the end of an RNR wait, starts a retry that never comes,
  // and the QP waits until it is moved to ERR (the failed WR is flushed too). With no retry
  // left the earlier WR fails (RETRY_EXC_ERR) and the failed one is flushed. A move to SQD
  // revives it: the retry it held back runs in SQD (with sqd_retry_unsends: every WR from the
  // head, the failed one too, goes back to not started, and the SQ drains). IBTA: the earlier
  // WRs are retried as usual.
  bool local_error_stops_retries = false;
  // An ACK of a packet inside the message at the head of the SQ (a duplicate answered while
  // the message is retried, e.g. the earlier packets of a WRITE_WITH_IMM waiting for a
  // receive) restores retry_cnt but does not push the transport timer on, so with retry_cnt 0
  // the first timeout ends the message with RETRY_EXC_ERR, RNR loop or not. Default: such an
  // ACK re-arms the timer (it shows the responder is alive).
  bool partial_ack_resets_retries_only = false;
  // A duplicate RDMA READ (its PSN below the expected one) is answered only if it lies inside a
  // READ the responder still holds among its max_dest_rd_atomic resources (READs and atomics
  // take them in turn), with the same R_Key and within that READ's range; otherwise it is
  // dropped silently (the requester times out); a replayed READ's range starts at the
  // duplicate's address from then on. A duplicate atomic is answered from the first resource
  // whose PSNs hold it, READ or atomic: its original value, which for a READ's resource is the
  // READ's remote address (rxe's union). Default: every duplicate READ is executed again
  // (IBTA 9.7.5.1.1), a duplicate atomic answered with its own saved result (C9-134).
  bool dup_read_needs_its_resource = false;
  // The responder answers only after a modify to RTR (and none to RESET, INIT or ERR since):
  // a QP moved to RTS with IBV_QP_CUR_STATE out of ERR, RESET or INIT (e.g. ERR -> RTS with
  // cur_state RTS) revives its requester only; requests reaching it are dropped, as in ERR.
  // IBTA: the QP in its new state responds.
  bool responder_ready_only_from_rtr = false;
  // A UC/UD message to a QP of the same device completes at the sender only after the
  // receiver has handled it (its receive CQE, if any, comes first; it matters where both
  // share a CQ that overruns). IBTA: a UC/UD send completes once it has left.
  bool loopback_send_completes_after_receive = false;
  // A responder that fails a request from a QP of the same device (NAK; or the ACK of a
  // SEND_WITH_INV whose rkey it cannot invalidate) flushes its own queues only after the
  // requester has handled that response, completions and flush included. IBTA: no order
  // between two QPs' completions.
  bool loopback_response_before_responder_flush = false;
  // With that: when the request was an RDMA READ (a responder that runs scheduled, not in
  // the requester's call), the requester completes the failed WR and flushes its receives,
  // then the responder flushes, then the requester flushes the WRs behind it.
  bool loopback_read_nak_flushes_responder_first = false;
  // An RC requester failed by an error NAK from a QP of another device, or by an RNR NAK
  // one past rnr_retry (RNR_RETRY_EXC_ERR) from any QP, to a request a timer's retry sent
  // (not a post), flushes its send queue before its receive queue, as it does for a
  // loopback NAK to a retry (see rc_flushes_rq_first). IBTA: no order between a QP's two
  // queues.
  bool retried_request_nak_flushes_sq_first = false;
  // Transport timers that expire in one tick of the host's clock all run their completer
  // (a RETRY_EXC_ERR's CQE) before any flush those completers start: a QP's flush waits
  // while another timer of the tick is due. IBTA: no order between two QPs' completions.
  bool tick_timers_complete_before_flushes = false;
  // ibv_post_send runs the requester before it returns: a BIND_MW or LOCAL_INV the requester
  // reaches fails (and moves the QP to ERR) before the next verb call. Default: the doorbell
  // wakes the send engine, which runs after the call (at the same simulated time).
  bool post_runs_requester = false;
  // With post_runs_requester: each message that run sends is received, answered and its
  // answer handled before the requester takes the next WQE, on another device of the host
  // too. A local operation behind a NAKed request is then flushed, never executed.
  // Default: the run sends what it may; answers come after the call returns.
  bool post_answers_each_message = false;
  // In ERR the requester takes one send WQE per run (each post, each move to ERR) while the
  // completer flushes them all: WQEs it never took stay in the ring ahead of it. A move out of
  // ERR other than to RESET (IBV_QP_CUR_STATE) lets it run them again: they go out without a
  // completion, and one that fails a local check stops the requester, which then takes one WQE
  // per post, flushing the first the program posted (and the QP) when it gets there.
  // The requester's place is an index into the send ring, modulo its slots: a post in ERR
  // whose WRs put the producer a whole ring past it flushes nothing until the completer's next
  // run in ERR (the next post's walk, the transport timer running out), which
  // flushes every queued WQE. Stale WQEs keep their slots after ERR -> RTS: a post that goes
  // round onto them is sent only where it wrote over them, and the WQEs behind the
  // requester are never sent (the QP hangs until ERR or RESET).
  // Default: leaving ERR starts from the program's next WR.
  bool requester_walks_one_wqe_in_error = false;
  // A send ring slot keeps the completion status the device last wrote into it: the device
  // writes one only for an error, a flush, a local operation run or a UD send it fakes, and
  // the post does not clear it. A WR posted into a slot whose last status was an error, and
  // then finished normally (its data landed), completes with that error (wr_id, status and
  // qp_num only; unsignaled too), and the QP stays where it is. RESET clears the slots;
  // after ERR -> RTS by IBV_QP_CUR_STATE they are as the flush left them. The slot keeps a
  // READ/atomic credit its WR never gave back, too: the WR posted there holds it (a READ is
  // sent without taking one) and gives it back when acknowledged.
  // Default: a completion reports the WR's own outcome.
  bool send_slot_keeps_status = false;
  // The requester's completer drops a READ/atomic response, or a NAK inside a READ/atomic,
  // newer than the PSN it expects next (comp.psn): comp.psn lags where a stale WQE sent again
  // after ERR -> RTS (a ghost; requester_walks_one_wqe_in_error) had its ACK dropped because
  // the WR behind it had not started, or after a WR that failed by its timer. The transport
  // timer then resends the READ from comp.psn, a PSN the responder answered otherwise. A
  // SEND/WRITE's ACK is taken. A ghost acknowledged on the way resets no retry counter.
  // Default: a response is matched with its WQE by PSN (IBTA 9.7.5.1; ERR -> RTS cannot happen).
  bool read_response_waits_for_comp_psn = false;
  // A solicited-only CQ arm fires only for a receive CQE of a message with the SE bit or a
  // receive completed without a message (flushed); never for a send-queue CQE, error or
  // flush. ibv_req_notify_cq(3), IBTA: also for a completion in error.
  bool solicited_arm_ignores_errors = false;
  // A SEND_WITH_INV whose rkey cannot be invalidated leaves the expected PSN at its last
  // packet (a query's rq_psn). Default: the message was executed, the PSN moves past it.
  bool failed_invalidate_keeps_psn = false;
  // The RC transport timer, once armed, is never stopped: it runs out at its deadline
  // whatever happened since (everything acknowledged, ERR, RESET), and a send while it is
  // pending does not re-arm it, so it may time out a later message early. Running out in ERR
  // or RESET it is remembered, and the completer's next run in RTS/SQD without a response
  // (a local operation, a WR failing locally, the drain of SQD) counts it as a timeout.
  // Default: the timer stops when nothing is outstanding and when the QP leaves RTS/SQD.
  bool retrans_timer_runs_out = false;
  // A LOCAL_INV starts only when every earlier WR of its send queue has completed, fenced or
  // not (IBTA 10.6.5.1's Local Invalidate Fence made mandatory), so a LOCAL_INV that fails
  // waits behind a WR that times out. When that WR fails, the LOCAL_INV runs before the QP
  // enters ERR, and the send queue is flushed first (rxe_comp.c do_complete: wait_fence).
  // Default: it runs in order like any other WR.
  bool local_inv_waits_for_all = false;
  // A retry that goes back past a BIND_MW or LOCAL_INV the requester has run runs it again:
  // the window's rkey has changed (a bind) or the key is invalid already (a LOCAL_INV), so it
  // fails now (MW_BIND_ERR, LOC_QP_OP_ERR) as a local error, which stops the requester
  // (local_error_stops_retries). Default: a local operation runs once.
  bool retry_reruns_local_ops = false;
  // retry_cnt 7 means retry forever, as rnr_retry 7 does. IBTA 9.7.6.1.3 / ibv_modify_qp(3):
  // 7 retries (only rnr_retry 7 is infinite).
  bool retry_cnt_7_is_infinite = false;
  // ibv_query_qp's sq_psn is the requester's next PSN, which a retry sets back to the first
  // unacknowledged PSN and each packet sent again moves on: a requester that stops partway
  // through the resend (a local error) reads the PSN it got to. The retry starts at the
  // PSN after the last one answered, behind the retried WQE when WQEs before it took PSNs
  // and failed unanswered; its first SEND/WRITE then goes again without its data. Default:
  // sq_psn is the next PSN a new message would take.
  bool retry_rewinds_sq_psn = false;
  // An invalidate (LOCAL_INV, or the responder's for a SEND_WITH_INV) with the rkey of a
  // type 2 window that is not bound (allocated and never bound, or invalidated already)
  // crashes the device's host: no answer at all. The model answers as for an invalid key
  // (LOC_QP_OP_ERR, REM_INV_REQ_ERR) and records the fault (Backend::DeviceFaults), so a
  // differential run does not send it to the device. IBTA o10-37.2.26: only a bound type 2
  // window can be invalidated; the invalidate fails.
  bool invalidate_free_type2_window_faults = false;
  // Destroying a QP that a bound type 2 window names (bound through it, neither invalidated
  // nor deallocated) returns 0 only after a long wait, the device running on meanwhile
  // with the QP already unreachable (the model: ControlTiming::destroy_qp_bound_mw_wait_ns,
  // 50 s on rxe). IBTA: destroying the QP invalidates its type 2 windows; nothing waits.
  bool destroy_qp_waits_for_bound_type2_window = false;

  // CQE and query fields (issue 11 part 1; measured in tools/rxe-vm, examples/*.qps):
  // A successful receive CQE has IBV_WC_GRH for every QP type. IBTA 11.4.2.1: GRH only when
  // the message carried one (UD on RoCE).
  bool recv_wc_grh_always = false;
  // src_qp of an RC/UC receive CQE is 0 (filled only from a UD packet's DETH). IBTA defines
  // it for datagrams; the default fills the remote QP's number for every type.
  bool connected_recv_src_qp_zero = false;
  // ibv_query_qp reports the attributes as stored: cur_qp_state as last given with
  // IBV_QP_CUR_STATE (RESET before), an AV with is_global=1 and only its GRH fields and
  // port_num (dlid, sl, src_path_bits, static_rate 0), path_mtu IBV_MTU_256 until one is
  // set, en_sqd_async_notify 0, and a UD QP's rq_psn as the last received PSN + 1. Default: the
  // current state, the AV as given, the port's active MTU.
  bool query_qp_stored_view = false;

  // Memory windows (measured on rxe 6.1, tests/conformance/memory_window_test.cc):
  // A remote access through a window's rkey is checked against the bounds of the region the
  // window is bound to, not of the window (bytes outside the window but inside the region
  // are reachable). IBTA 10.6.7.1 / C10-71: the access lies inside the window.
  bool mw_range_checked_against_mr = false;
  // The receive CQE of a SEND_WITH_INV carries IBV_WC_IP_CSUM_OK and no invalidated rkey:
  // the kernel's IB_WC_WITH_INVALIDATE (1 << 2) reaches the program unconverted, and bit 2
  // is libibverbs' IBV_WC_IP_CSUM_OK. IBTA 11.4.2.1: IBV_WC_WITH_INV and the rkey.
  bool recv_inv_flag_as_ip_csum_ok = false;
  // ibv_post_recv / ibv_post_srq_recv: a WR that finds the queue full is refused with ENOMEM
  // before its SGE count is looked at (EINVAL for too many). Default: the SGE count first
  // (IBTA leaves the order of the two checks open, R5).
  bool recv_full_checked_first = false;

  friend bool operator==(const Behaviour& a, const Behaviour& b);
  friend bool operator!=(const Behaviour& a, const Behaviour& b) { return !(a == b); }
};

// One field of Behaviour: a flag or a number (exactly one of the two pointers is set).
struct BehaviourSetting {
  std::string_view name;  // the field's name, as printed and parsed
  bool Behaviour::*flag = nullptr;
  int Behaviour::*number = nullptr;

  int Get(const Behaviour& b) const { return flag ? int{b.*flag} : b.*number; }
  void Set(Behaviour& b, int v) const {
    if (flag) {
      b.*flag = v != 0;
    } else {
      b.*number = v;
    }
  }
};
// Every Behaviour field, in declaration order (contract 1).
const std::vector<BehaviourSetting>& BehaviourSettings();
// The setting of that name, or nullptr.
const BehaviourSetting* FindBehaviourSetting(std::string_view name);
// "name=0 name=22 ..." for the fields that differ from IBTA's; "ibta" when none does.
std::string DescribeDeviations(const Behaviour& b);
// "name: a=1 b=0; ..." for the fields in which a and b differ; empty when equal.
std::string DescribeDifferences(const Behaviour& a, const Behaviour& b);

struct Deviation {
  std::string_view setting;  // a BehaviourSettings() name
  int value;                 // 0/1 for a flag
  std::string_view source;   // where the device does it: function, file, or measured run
};

struct DeviceDescription {
  std::string name;         // "ibta", "rxe", "cx6"
  std::string summary;      // one line
  DeviceAttr device;        // what ibv_query_device reports (name filled in per device)
  PortAttr port;            // what ibv_query_port reports for port 1
  std::vector<Deviation> deviations;

  Behaviour behaviour() const;  // contract 2
};

const DeviceDescription* FindDeviceDescription(std::string_view name);
std::vector<std::string> KnownDeviceNames();

// Entries a queue of `requested` entries really holds on a device with behaviour b.
uint32_t QueueSlots(const Behaviour& b, uint32_t requested);
// The QP caps such a device grants for `requested` (what ibv_create_qp writes back).
QpCap GrantedCaps(const Behaviour& b, const QpCap& requested);

}  // namespace qptwin
