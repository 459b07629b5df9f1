#include "spec/device_description.h"

#include <algorithm>
#include <cerrno>

#include "spec/vocabulary.h"

namespace qptwin {
namespace {

BehaviourSetting Flag(std::string_view name, bool Behaviour::*f) { return {name, f, nullptr}; }

const std::vector<BehaviourSetting> kSettings = {
    BehaviourSetting{"over_limit_errno", nullptr, &Behaviour::over_limit_errno},
    BehaviourSetting{"rereg_mr_errno", nullptr, &Behaviour::rereg_mr_errno},
    BehaviourSetting{"dereg_mr_bound_mw_errno", nullptr, &Behaviour::dereg_mr_bound_mw_errno},
    Flag("supports_uc", &Behaviour::supports_uc),
    Flag("supports_ud", &Behaviour::supports_ud),
    Flag("supports_xrc", &Behaviour::supports_xrc),
    Flag("reject_extended_mask", &Behaviour::reject_extended_mask),
    Flag("send_errors_to_sqe", &Behaviour::send_errors_to_sqe),
    Flag("comm_est_event", &Behaviour::comm_est_event),
    Flag("sqd_event_needs_notify", &Behaviour::sqd_event_needs_notify),
    Flag("fence_waits_for_all", &Behaviour::fence_waits_for_all),
    Flag("queues_rounded_up", &Behaviour::queues_rounded_up),
    Flag("cq_overrun_is_sticky", &Behaviour::cq_overrun_is_sticky),
    Flag("send_cq_overrun_keeps_qp", &Behaviour::send_cq_overrun_keeps_qp),
    Flag("qp_error_events", &Behaviour::qp_error_events),
    Flag("send_wc_with_imm", &Behaviour::send_wc_with_imm),
    Flag("atomic_wc_byte_len_is_sge_length", &Behaviour::atomic_wc_byte_len_is_sge_length),
    Flag("recv_in_err_waits", &Behaviour::recv_in_err_waits),
    Flag("post_send_below_rts_queues", &Behaviour::post_send_below_rts_queues),
    Flag("last_wqe_reached_event", &Behaviour::last_wqe_reached_event),
    Flag("opcode_checked_by_requester", &Behaviour::opcode_checked_by_requester),
    Flag("recv_wc_grh_always", &Behaviour::recv_wc_grh_always),
    Flag("connected_recv_src_qp_zero", &Behaviour::connected_recv_src_qp_zero),
    Flag("query_qp_stored_view", &Behaviour::query_qp_stored_view),
    Flag("local_error_completes_in_order", &Behaviour::local_error_completes_in_order),
    Flag("unresolved_lkey_is_qp_op_err", &Behaviour::unresolved_lkey_is_qp_op_err),
    Flag("recv_error_is_malformed_wqe", &Behaviour::recv_error_is_malformed_wqe),
    Flag("rc_flushes_rq_first", &Behaviour::rc_flushes_rq_first),
    Flag("rts_waits_for_doorbell", &Behaviour::rts_waits_for_doorbell),
    Flag("lax_attr_checks", &Behaviour::lax_attr_checks),
    Flag("rd_atomic_rounded_up", &Behaviour::rd_atomic_rounded_up),
    Flag("post_send_runs_to_completion", &Behaviour::post_send_runs_to_completion),
    Flag("retry_timer_runs_during_rnr", &Behaviour::retry_timer_runs_during_rnr),
    Flag("psn_nak_uses_retry", &Behaviour::psn_nak_uses_retry),
    Flag("rnr_wait_sends_new_wqes", &Behaviour::rnr_wait_sends_new_wqes),
    Flag("sqd_retry_unsends", &Behaviour::sqd_retry_unsends),
    Flag("rnr_nak_then_seq_nak", &Behaviour::rnr_nak_then_seq_nak),
    Flag("one_psn_nak_per_gap", &Behaviour::one_psn_nak_per_gap),
    Flag("nak_behind_head_hits_head", &Behaviour::nak_behind_head_hits_head),
    Flag("write_imm_receive_at_last_packet", &Behaviour::write_imm_receive_at_last_packet),
    Flag("duplicate_ack_psn_is_last_executed",
         &Behaviour::duplicate_ack_psn_is_last_executed),
    Flag("ud_ah_resolved_at_send", &Behaviour::ud_ah_resolved_at_send),
    Flag("fence_counts_sent_rd_atomic", &Behaviour::fence_counts_sent_rd_atomic),
    Flag("failed_rd_atomic_keeps_credit", &Behaviour::failed_rd_atomic_keeps_credit),
    Flag("local_error_stops_retries", &Behaviour::local_error_stops_retries),
    Flag("partial_ack_resets_retries_only", &Behaviour::partial_ack_resets_retries_only),
    Flag("dup_read_needs_its_resource", &Behaviour::dup_read_needs_its_resource),
    Flag("mw_range_checked_against_mr", &Behaviour::mw_range_checked_against_mr),
    Flag("recv_inv_flag_as_ip_csum_ok", &Behaviour::recv_inv_flag_as_ip_csum_ok),
    Flag("recv_full_checked_first", &Behaviour::recv_full_checked_first),
    Flag("responder_ready_only_from_rtr", &Behaviour::responder_ready_only_from_rtr),
    Flag("loopback_send_completes_after_receive",
         &Behaviour::loopback_send_completes_after_receive),
    Flag("loopback_response_before_responder_flush",
         &Behaviour::loopback_response_before_responder_flush),
    Flag("loopback_read_nak_flushes_responder_first",
         &Behaviour::loopback_read_nak_flushes_responder_first),
    Flag("retried_request_nak_flushes_sq_first",
         &Behaviour::retried_request_nak_flushes_sq_first),
    Flag("tick_timers_complete_before_flushes",
         &Behaviour::tick_timers_complete_before_flushes),
    Flag("post_runs_requester", &Behaviour::post_runs_requester),
    Flag("post_answers_each_message", &Behaviour::post_answers_each_message),
    Flag("requester_walks_one_wqe_in_error", &Behaviour::requester_walks_one_wqe_in_error),
    Flag("send_slot_keeps_status", &Behaviour::send_slot_keeps_status),
    Flag("read_response_waits_for_comp_psn", &Behaviour::read_response_waits_for_comp_psn),
    Flag("solicited_arm_ignores_errors", &Behaviour::solicited_arm_ignores_errors),
    Flag("failed_invalidate_keeps_psn", &Behaviour::failed_invalidate_keeps_psn),
    Flag("retrans_timer_runs_out", &Behaviour::retrans_timer_runs_out),
    Flag("local_inv_waits_for_all", &Behaviour::local_inv_waits_for_all),
    Flag("retry_reruns_local_ops", &Behaviour::retry_reruns_local_ops),
    Flag("retry_cnt_7_is_infinite", &Behaviour::retry_cnt_7_is_infinite),
    Flag("retry_rewinds_sq_psn", &Behaviour::retry_rewinds_sq_psn),
    Flag("invalidate_free_type2_window_faults",
         &Behaviour::invalidate_free_type2_window_faults),
    Flag("destroy_qp_waits_for_bound_type2_window",
         &Behaviour::destroy_qp_waits_for_bound_type2_window),
};
// Every field has its row: a field added to Behaviour changes its size (ints first, then the
// flags, padded to the int alignment), and the table's count must match.
constexpr size_t kFlags = 66;
constexpr size_t kNumbers = 3;
constexpr size_t Padded(size_t n) { return (n + alignof(int) - 1) / alignof(int) * alignof(int); }
static_assert(sizeof(Behaviour) == Padded(kNumbers * sizeof(int) + kFlags * sizeof(bool)),
              "every Behaviour field needs its row in kSettings");

// ---- IBTA: the specification's behaviour on an InfiniBand port (illustrative caps) ------------
DeviceDescription Ibta() {
  DeviceDescription d;
  d.name = "ibta";
  d.summary = "IBTA reference behaviour: InfiniBand link, SQE for UC/UD send errors, XRC";
  DeviceAttr& a = d.device;
  a.max_mr_size = ~0ull;
  a.vendor_id = 0x1234;  // any non-zero id (pyverbs and perftest look at it)
  a.max_qp = 0x10000;
  a.max_qp_wr = 0x4000;
  a.max_sge = 32;
  a.max_sge_rd = 32;
  a.max_cq = 16384;
  a.max_cqe = (1 << 15) - 1;
  a.max_mr = 256 * 1024;
  a.max_mw = 256 * 1024;
  a.max_pd = 0x7ffc;
  a.max_ah = 100;
  a.max_qp_rd_atom = 128;
  a.max_qp_init_rd_atom = 128;
  a.max_srq = 960;
  a.max_srq_wr = 0x4000;
  a.max_srq_sge = 27;
  a.max_inline_data = 256;
  a.max_pkeys = 64;
  a.atomic_cap = AtomicCap::kHca;
  a.phys_port_cnt = 1;
  PortAttr& p = d.port;
  p.state = PortState::kActive;
  p.max_mtu = Mtu::k4096;
  p.active_mtu = Mtu::k4096;
  p.gid_tbl_len = 16;
  p.max_msg_sz = 0x800000;
  p.pkey_tbl_len = 64;
  p.lid = 1;  // the device index is added per device
  p.active_width = 1;
  p.active_speed = 1;
  p.link_layer = LinkLayer::kInfiniBand;
  return d;
}

// ---- Linux Soft-RoCE on Debian 12 (kernel 6.1, rdma-core 44) ------------------------------
// Caps: drivers/infiniband/sw/rxe/rxe_param.h (rxe_device_param, rxe_port_param).
// Behaviour: each deviation names where rxe does it; docs/differences.md has the measured runs.
DeviceDescription Rxe() {
  DeviceDescription d = Ibta();
  d.name = "rxe";
  d.summary = "Linux Soft-RoCE (rxe, kernel 6.1, rdma-core 44): RoCE v2, RC/UC/UD, no SQE";
  // Kernel 6.1's rxe_param.h as ibv_query_device reports it (measured in tools/rxe-vm by
  // conformance QueriedCapsAreTheDescriptions: kernel 6.1.0-57, rdma-core 44).
  DeviceAttr& a = d.device;
  a.vendor_id = 0xffffff;    // RXE_VENDOR_ID
  a.max_qp = 1048560;        // RXE_MAX_QP: DEFAULT_MAX_VALUE - RXE_MIN_QP_INDEX
  a.max_qp_wr = 1 << 20;     // RXE_MAX_QP_WR = DEFAULT_MAX_VALUE
  a.max_cq = 1 << 20;        // RXE_MAX_CQ
  a.max_mr = 524287;         // RXE_MAX_MR: RXE_MAX_MR_INDEX - RXE_MIN_MR_INDEX
  a.max_pd = 1 << 20;        // RXE_MAX_PD
  a.max_ah = 32767;          // RXE_MAX_AH: RXE_MAX_AH_INDEX - RXE_MIN_AH_INDEX (measured)
  // The rest of ibv_device_attr as ibv_devinfo -v reports it on kernel 6.1 (measured).
  a.page_size_cap = 0xfffff000;        // RXE_PAGE_SIZE_CAP
  a.device_cap_flags = 0x01223c76;     // rxe_param.h RXE_DEVICE_CAP_FLAGS (MEM_WINDOW, ...)
  a.max_res_rd_atom = 258048;          // RXE_MAX_RES_RD_ATOM
  a.max_mw = 524287;                   // RXE_MAX_MW
  a.max_mcast_grp = 8192;              // RXE_MAX_MCAST_GRP
  a.max_mcast_qp_attach = 56;          // RXE_MAX_MCAST_QP_ATTACH
  a.max_total_mcast_qp_attach = 458752;  // RXE_MAX_TOT_MCAST_QP_ATTACH
  a.local_ca_ack_delay = 15;           // RXE_LOCAL_CA_ACK_DELAY
  a.max_srq = 917503;        // RXE_MAX_SRQ: RXE_MAX_SRQ_INDEX - RXE_MIN_SRQ_INDEX
  a.max_srq_wr = 1 << 20;    // RXE_MAX_SRQ_WR
  a.max_inline_data = 512;   // the largest max_inline_data ibv_create_qp accepts (probed)
  PortAttr& p = d.port;
  p.pkey_tbl_len = 1;         // RXE_PORT_PKEY_TBL_LEN
  p.active_mtu = Mtu::k1024;  // eth_mtu_int_to_enum(1500)
  p.gid_tbl_len = 1024;       // RXE_PORT_GID_TBL_LEN
  p.lid = 0;                  // RoCE: no LIDs
  p.port_cap_flags = 0x00010000;  // RXE_PORT_PORT_CAP_FLAGS: IBV_PORT_CM_SUP (measured)
  p.max_vl_num = 1;               // RXE_PORT_MAX_VL_NUM
  p.phys_state = 5;               // LINK_UP (measured)
  p.link_layer = LinkLayer::kEthernet;
  d.deviations = {
      {"over_limit_errno", EINVAL,
       "rxe_pool.c __rxe_add_to_pool (6.1): num_elem > max_elem -> -EINVAL (PD, CQ, SRQ, QP, AH)"},
      {"rereg_mr_errno", EOPNOTSUPP,
       "kernel 6.1 rxe has no rereg_user_mr: ibv_rereg_mr returns IBV_REREG_MR_ERR_CMD with "
       "errno EOPNOTSUPP for CHANGE_ACCESS, CHANGE_PD, CHANGE_TRANSLATION and flags 0 "
       "(measured in tools/rxe-vm; a bad flag or a translation without address: EINVAL)"},
      {"supports_xrc", 0,
       "rxe_qp.c rxe_qp_chk_init: no XRC QP types; providers/rxe has no open_xrcd op"},
      {"reject_extended_mask", 1,
       "rxe_verbs.c rxe_modify_qp: mask & ~IB_QP_ATTR_STANDARD_BITS -> -EOPNOTSUPP"},
      {"send_errors_to_sqe", 0,
       "rxe_comp.c: every error completion calls rxe_qp_error (ERR); rxe never enters SQE"},
      {"comm_est_event", 0, "rxe_resp.c raises no IB_EVENT_COMM_EST"},
      {"sqd_event_needs_notify", 0,
       "rxe_req.c req_next_wqe: SQ_DRAINED whatever en_sqd_async_notify says"},
      {"queues_rounded_up", 1,
       "rxe_queue.c rxe_queue_init: roundup_pow_of_two(n + 1) - 1 slots; rxe_qp.c "
       "rxe_qp_init_req: max_inline_data = max_send_sge * sizeof(struct ib_sge)"},
      {"cq_overrun_is_sticky", 0,
       "rxe_cq.c rxe_cq_post: a full CQ refuses the CQE (IB_EVENT_CQ_ERR) and stays usable"},
      {"send_cq_overrun_keeps_qp", 1,
       "rxe_comp.c do_complete: rxe_cq_post(qp->scq, ...) unchecked (its -EBUSY raises "
       "IB_EVENT_CQ_ERR only); rxe_resp.c do_complete -> RESPST_ERR_CQ_OVERFLOW -> rxe_qp_error "
       "(measured: differential sequence 1342, 7 READs into a 3-entry CQ, the QP stays RTS)"},
      {"qp_error_events", 0, "rxe_qp.c rxe_qp_error raises no affiliated event"},
      {"send_wc_with_imm", 1,
       "rxe_comp.c make_send_cqe: *_WITH_IMM requester CQEs carry IB_WC_WITH_IMM"},
      {"atomic_wc_byte_len_is_sge_length", 1,
       "rxe_comp.c make_send_cqe: wc->byte_len = wqe->dma.length, the WR's SGE total (measured: "
       "a CMP_SWP with a 100-byte SGE completes with byte_len 100, differential seed "
       "748177376976 sequences 25 and 478)"},
      {"recv_in_err_waits", 1,
       "providers/rxe rxe_post_recv has no doorbell: the kernel flushes the receive when "
       "rxe_qp_error runs the responder (the next modify to ERR); rxe_recv.c check_type_state "
       "drops a request to a QP whose resp.state is not READY before the responder (measured: "
       "device_behaviour_test, examples/fidelity/18)"},
      {"post_send_below_rts_queues", 1,
       "providers/rxe rxe_post_send writes the ring before post_send_db fails below RTS "
       "(measured: EINVAL, bad_wr NULL, the WR runs later)"},
      {"last_wqe_reached_event", 0,
       "kernel 6.1 rxe_qp_error raises no IB_EVENT_QP_LAST_WQE_REACHED (measured; later "
       "kernels add it)"},
      {"opcode_checked_by_requester", 1,
       "providers/rxe validate_send_wr does not check the opcode against the QP type; rxe_req.c "
       "next_opcode fails it with IB_WC_LOC_QP_OP_ERR"},
      {"recv_wc_grh_always", 1,
       "rxe_resp.c do_complete: a user CQ's receive CQE gets wc_flags = IB_WC_GRH first "
       "(measured: examples/01..21 on rxe)"},
      {"connected_recv_src_qp_zero", 1,
       "rxe_resp.c do_complete: src_qp only if pkt->mask & RXE_DETH_MASK (measured: RC/UC 0)"},
      {"query_qp_stored_view", 1,
       "rxe_qp.c rxe_qp_to_attr (*attr = qp->attr; cur_qp_state only set by IB_QP_CUR_STATE), "
       "rxe_av.c rxe_av_to_attr (IB_AH_GRH, GRH fields, port_num), rxe_qp_init_misc "
       "(attr.path_mtu = 1); en_sqd_async_notify reads 0 (measured: examples/01, 10 query "
       "lines on rxe)"},
      {"local_error_completes_in_order", 1,
       "rxe_req.c rxe_requester err: marks the WQE wqe_state_error and stops; rxe_comp.c "
       "get_wqe completes it (COMPST_ERROR) only at the queue head (measured: "
       "examples/fidelity/01)"},
      {"unresolved_lkey_is_qp_op_err", 1,
       "rxe_req.c rxe_requester: finish_packet's copy_data fails -EINVAL (lookup_mr) -> "
       "IB_WC_LOC_QP_OP_ERR, -EFAULT (mr_check_range) -> IB_WC_LOC_PROT_ERR (measured: "
       "examples/fidelity/02)"},
      {"recv_error_is_malformed_wqe", 1,
       "rxe_resp.c send_data_in: any copy_data failure is RESPST_ERR_MALFORMED_WQE -> "
       "do_class_d1e_error: IB_WC_LOC_QP_OP_ERR, NAK remote operational error, rxe_qp_error "
       "(UD too; measured: examples/fidelity/03, 04); execute() sets resp.psn per packet, so "
       "the packets before the failing one count (measured: differential seed 20261203 "
       "sequence 1095, a 3-packet UC SEND into 2,048 bytes leaves rq_psn 2)"},
      {"rc_flushes_rq_first", 1,
       "rxe_qp.c rxe_qp_error: schedules the responder task (RQ flush), then for RC schedules "
       "the completer (SQ flush) after it, for UC/UD runs it at once (measured: "
       "examples/fidelity/05)"},
      {"rts_waits_for_doorbell", 1,
       "rxe_qp.c rxe_qp_from_attr: IB_QPS_RTS sets req.state = QP_STATE_READY without "
       "running the requester task; the next post_send's doorbell starts the queued WRs, "
       "and providers/rxe rxe_post_send rings it after its loop even when a WR was refused; "
       "in ERR that doorbell's requester takes the WQE at req.wqe_index (measured: "
       "examples/fidelity/08 and 33; differential sequence 838)"},
      {"lax_attr_checks", 1,
       "rxe_qp.c rxe_qp_chk_attr checks port, AV, path_mtu, timeout and max_rd_atomic only "
       "(measured: examples/fidelity/11: pkey_index 5, max_dest_rd_atomic 200, "
       "min_rnr_timer 40, retry_cnt 9, rnr_retry 9 accepted)"},
      {"rd_atomic_rounded_up", 1,
       "rxe_qp.c rxe_qp_from_attr: qp->attr.max_rd_atomic / max_dest_rd_atomic = "
       "roundup_pow_of_two(n), an u8 (measured: max_dest_rd_atomic 200 queried as 0)"},
      {"post_send_runs_to_completion", 1,
       "rxe_verbs.c rxe_post_send: a user QP runs rxe_run_task(&qp->req.task, 0) in the "
       "caller; rxe_net.c rxe_loopback -> rxe_rcv -> rxe_resp_queue_pkt / rxe_comp_queue_pkt "
       "run the responder and completer inline (rxe_task.c rxe_do_task); only timers "
       "(jiffies) come later (measured: examples/fidelity/14)"},
      {"retry_timer_runs_during_rnr", 1,
       "rxe_comp.c COMPST_RNR_RETRY arms rnr_nak_timer and leaves retrans_timer pending "
       "(rxe_req.c update_state arms it only when not pending); its expiry runs "
       "COMPST_ERROR_RETRY: retry_cnt-- or IB_WC_RETRY_EXC_ERR (measured: "
       "examples/fidelity/15)"},
      {"psn_nak_uses_retry", 1,
       "rxe_comp.c check_ack: AETH_NAK_PSN_SEQ_ERROR -> COMPST_ERROR_RETRY, which skips when "
       "comp.started_retry && !timeout_retry, else retry_cnt-- (started_retry = 1) or "
       "IB_WC_RETRY_EXC_ERR; reset_retry_counters clears it (measured: examples/fidelity/18, "
       "retry_cnt 0: a SEND into an RNR loop and a second WR end with RETRY_EXC_ERR); "
       "check_psn sends a response past a pending READ/atomic there too (measured: "
       "differential seed 20261210 sequence 234: a READ answered by nothing, the RNR NAK of "
       "a WRITE_IMM behind it, retry_cnt 0: RETRY_EXC_ERR at once); rxe_qp_reset and "
       "rxe_qp_from_attr leave comp.started_retry (measured: differential seed 20261227 "
       "sequence 1184: after a RETRY_EXC_ERR, RESET and RTS with retry_cnt 0, a 2-packet SEND "
       "into an RNR loop stays in it)"},
      {"rnr_wait_sends_new_wqes", 1,
       "rxe_req.c rxe_requester: req_retry runs only when need_retry && !wait_for_rnr_timer, "
       "req_next_wqe still hands out the next unsent WQE (measured: examples/fidelity/18, "
       "sq_psn 2 right after a second post during a 491 ms RNR wait)"},
      {"sqd_retry_unsends", 1,
       "rxe_req.c rxe_requester: req_retry (need_retry) runs before the DRAIN check and sets "
       "the WQEs back to wqe_state_posted, req.psn = comp.psn; in QP_STATE_DRAIN req_next_wqe "
       "then sees wqe_index == consumer and a posted WQE: DRAINED, IB_EVENT_SQ_DRAINED "
       "(measured: examples/fidelity/19)"},
      {"rnr_nak_then_seq_nak", 1,
       "rxe_resp.c check_psn per packet: the first packet's RNR NAK leaves resp.psn, the "
       "second is out of sequence -> RESPST_ERR_PSN_OUT_OF_SEQ (sent_psn_nak once, cleared "
       "when the expected PSN comes again); measured: a 2-packet SEND into an empty SRQ with "
       "retry_cnt 1 is RNR-retried on (the sequence NAKs push the retransmit timer)"},
      {"one_psn_nak_per_gap", 1,
       "rxe_resp.c check_psn: past resp.psn a packet is NAKed only while resp.sent_psn_nak "
       "is clear, which sets it; a packet at resp.psn (and rxe_qp_reset) clears it (measured: "
       "probe rnr-count, 8 sequence NAKs for 8 retry rounds of 15 packets each)"},
      {"nak_behind_head_hits_head", 1,
       "rxe_comp.c check_psn: a response before the head WQE's last PSN and not before "
       "comp.psn goes to check_ack with the head WQE (for a READ/atomic only at comp.psn) "
       "(measured: seed 301565882534 sequence 1353, 3 of 3: after ERR -> RTS a READ at PSN 1 "
       "drew a sequence NAK at PSN 0, comp.psn, and ended RETRY_EXC_ERR at once, retry_cnt 0)"},
      {"write_imm_receive_at_last_packet", 1,
       "rxe_opcode.c: only RDMA_WRITE_LAST/ONLY_WITH_IMMEDIATE carry RXE_RWR_MASK; rxe_resp.c "
       "rxe_responder runs check_resource (RNR) before check_rkey, per packet (measured: "
       "examples/fidelity/16)"},
      {"duplicate_ack_psn_is_last_executed", 1,
       "rxe_resp.c duplicate_request: send_ack(qp, AETH_ACK_UNLIMITED, resp.ack_psn - 1); "
       "execute() sets ack_psn = resp.psn after a SEND/WRITE/atomic packet, read_reply does "
       "not, rxe_qp_reset leaves it; rxe_comp.c check_psn drops an ACK older than the WQE "
       "(measured: differential seed 748177376976 sequence 168, a SEND resent from PSN 0 "
       "after a RESET to a peer whose last request was a READ ends RETRY_EXC_ERR)"},
      {"ud_ah_resolved_at_send", 1,
       "providers/rxe init_send_wqe copies only ah_num; rxe_av.c rxe_get_av looks it up in "
       "the AH pool when rxe_req.c sends (NULL -> 'Failed no address vector', "
       "IB_WC_LOC_QP_OP_ERR) (measured: differential seed 748177376976 sequence 1035, a UD "
       "SEND queued in RESET whose AH was destroyed before RTS)"},
      {"failed_rd_atomic_keeps_credit", 1,
       "rxe_req.c check_init_depth decrements req.rd_atomic once per WQE (has_rd_atomic); only "
       "rxe_comp.c complete_ack, on a successful response, increments it; rxe_qp.c sets it to "
       "max_rd_atomic only under IB_QP_MAX_QP_RD_ATOMIC (rxe_qp_reset leaves it) (measured: "
       "differential seed 20261227 sequence 1603: a FETCH_ADD that ended RETRY_EXC_ERR, then "
       "ERR -> RTS with cur_state RTS and max_rd_atomic 1: the next FETCH_ADD is never sent and "
       "is flushed at ERR)"},
      {"fence_counts_sent_rd_atomic", 1,
       "rxe_req.c rxe_wqe_is_fenced (6.1): IB_SEND_FENCE waits while atomic_read(&rd_atomic) != "
       "attr.max_rd_atomic; check_init_depth takes a credit once (wqe->has_rd_atomic), only "
       "rxe_comp.c complete_ack gives it back, and req_retry keeps it, so a retry reaching a "
       "fenced WQE sets wait_fence with nothing in flight (measured: differential seed "
       "748177376976 sequences 400, 1399, 1473, 1945, 853)"},
      {"local_error_stops_retries", 1,
       "rxe_req.c rxe_requester err: sets req.state = QP_STATE_ERROR; rxe_comp.c "
       "COMPST_ERROR_RETRY then sets req.need_retry, which the requester in QP_STATE_ERROR never "
       "clears (no req_retry), and rxe_completer exits at once while it is set; the "
       "COMPST_EXIT re-arm needs req.state == QP_STATE_READY (measured: differential seed "
       "748177376976 sequence 1461); rxe_qp.c rxe_qp_drain sets req.state = QP_STATE_DRAIN "
       "over QP_STATE_ERROR, so the requester runs req_retry, which puts the errored WQE back to "
       "wqe_state_posted too, and req_next_wqe reports SQ_DRAINED (measured: differential seeds "
       "20261209 sequence 40 and 20261212 sequence 1304: SQ_DRAINED and sq_psn 0 after RTS -> "
       "SQD with a SEND in an RNR loop and a WR failed locally behind it)"},
      {"partial_ack_resets_retries_only", 1,
       "rxe_comp.c check_ack: an ACK reaching COMPST_CHECK_ACK runs reset_retry_counters; the "
       "COMPST_EXIT mod_timer needs req.psn > comp.psn, which the loopback's inline ACK of the "
       "resent packet has already caught up with (measured: differential seed 748177376976 "
       "sequences 224, 665: a 2- and a 3-packet WRITE_WITH_IMM without a receive, retry_cnt 0, "
       "end with RETRY_EXC_ERR)"},
      {"dup_read_needs_its_resource", 1,
       "rxe_resp.c duplicate_request: a duplicate READ replays only from find_resource's "
       "entry (resp.resources, max_dest_rd_atomic of them, rxe_prepare_res round robin for "
       "READs and atomics) with the same rkey and a sub-range; otherwise RESPST_CLEANUP "
       "(Class D, dropped); measured: a READ at PSN 0 after a FETCH_ADD at PSN 0 and a "
       "reconnect ends with RETRY_EXC_ERR (differential seed 748177376976 sequence 231)"},
      {"responder_ready_only_from_rtr", 1,
       "rxe_qp.c rxe_qp_from_attr: a modify to RTS sets only req.state and comp.state to "
       "QP_STATE_READY, to RTR resp.state (INIT and RESET reset all three); rxe_qp_error left "
       "resp.state QP_STATE_ERROR, and rxe_recv.c check_type_state drops a request unless "
       "resp.state is READY (measured: differential seed 20261203 sequence 143: after "
       "RETRY_EXC_ERR and ERR -> RTS with cur_state RTS, a FETCH_ADD to the QP without "
       "REMOTE_ATOMIC ends with RETRY_EXC_ERR, not REM_INV_REQ_ERR; seed 20261206 sequence "
       "664: a UD QP moved RESET -> RTS with cur_state RTS takes no message)"},
      {"loopback_send_completes_after_receive", 1,
       "rxe_net.c rxe_xmit_packet: a packet with RXE_LOOPBACK_MASK goes through rxe_loopback "
       "-> rxe_rcv -> rxe_resp_queue_pkt, which runs the responder inline (rxe_run_task) "
       "before the UC/UD WQE is marked done and the completer scheduled (measured: "
       "differential seed 20261203 sequences 154, 1065: with a one-entry CQ shared by both "
       "ends the receive CQE is the one kept)"},
      {"tick_timers_complete_before_flushes", 1,
       "kernel/time/timer.c: the timer softirq runs every expired timer of the tick; rxe_comp.c "
       "retransmit_timer only sets comp.timeout and schedules the completer tasklet; each "
       "completer that ends a WR RETRY_EXC_ERR calls rxe_qp_error, whose flush tasklets are "
       "scheduled behind the completers already queued (measured: probe "
       "timer-tick-flush-order, 3 of 3; differential seed 20261244 sequence 11265; row 133)"},
      {"loopback_read_nak_flushes_responder_first", 1,
       "rxe_resp.c rxe_resp_queue_pkt schedules the responder for an RDMA READ request "
       "(must_sched), so its NAK's loopback runs the requester's completer from the tasklet; "
       "the order measured in tools/rxe-vm (differential seed 20261244 sequence 1612, 3 of 3 "
       "rxe runs; probes a1, a2, a5 with 2 or 10 READs, 2 runs each, against a4 with WRITEs): "
       "the READ's REM_INV_REQ_ERR, the responder's receive flush, then the READs behind it "
       "(row 132); the requester's own receives are flushed before the responder's (campaign "
       "20261259 sequence 15300, 3 of 3; probes rn-a, rn-b, 3 of 3 each)"},
      {"retried_request_nak_flushes_sq_first", 1,
       "an RNR loop's retry (rxe_comp.c rnr_nak_timer schedules the requester) resends a SEND "
       "to a QP of another device whose receive is too small; on its REM_OP_ERR the "
       "requester's send queue is flushed before its receive queue, as for a loopback NAK to "
       "a retry, while a NAK to a request a post sent keeps rxe_qp_error's order, receives "
       "first; in tools/rxe-vm both devices are contexts of the one rxe0, so the NAK takes "
       "rxe_loopback there too (measured: differential seed 308692050115 sequence 395, 3 of 3 "
       "rxe runs; probes retry-nak-other-device 2 of 2 against post-nak-other-device 2 of "
       "2; docs/differences.md row 150)"},
      {"loopback_response_before_responder_flush", 1,
       "rxe_resp.c: the responder sends its NAK (send_ack -> rxe_xmit_packet -> rxe_loopback "
       "-> rxe_rcv) and the requester's completer runs inline: its CQE, then rxe_qp_error "
       "schedules that QP's flush tasklets, which run at the completer's spin_unlock_bh; "
       "only then does the responder reach RESPST_ERROR and rxe_qp_error of its own QP "
       "(measured: differential seed 20261204 sequences 475, 1415: with a CQ shared by both "
       "QPs that overruns, the requester's flushed receives are the CQEs kept)"},
      {"failed_invalidate_keeps_psn", 1,
       "rxe_resp.c execute: invalidate_rkey fails -> RESPST_ERR_INVALIDATE_RKEY before "
       "qp->resp.psn = psn + 1 (measured: differential seed 20261207 sequence 1361: rq_psn 0 "
       "after a one-packet SEND_WITH_INV of a type 1 window's rkey)"},
      {"retry_rewinds_sq_psn", 1,
       "rxe_req.c req_retry: qp->req.psn = qp->comp.psn, and rxe_qp.c rxe_qp_to_attr reports "
       "req.psn as sq_psn (measured: differential seed 20261209 sequence 1119 with a query "
       "after every command: a SEND timed out, its retry ran a bind again, which failed and "
       "stopped the requester before the FETCH_ADD behind it: sq_psn 1, not 2). comp.psn "
       "can lie behind the retried WQE (a WQE failed unanswered, then ERR -> RTS): the "
       "resent WQEs take PSNs from there, and retry_first_write_send skips (comp.psn - "
       "first_psn) & 0xffffff packets of the first one, all its data: it goes as one empty "
       "packet (measured: differential seed 20261220 sequence 1292, a WRITE through a "
       "window without REMOTE_WRITE completes; RetryFromBehindTheFirstPsnResendsTheWrite"
       "WithoutItsData)"},
      {"invalidate_free_type2_window_faults", 1,
       "rxe_mw.c rxe_check_invalidate_mw refuses only an INVALID or type 1 window, so a FREE "
       "type 2 one reaches rxe_do_invalidate_mw, whose rxe_put(mw->qp) puts a NULL QP "
       "(measured: differential seed 20261230 sequence 2135, a SEND_WITH_INV of a window "
       "whose bind had failed, panics the guest 7 s after boot, every time; "
       "tests/differential/found/20261230-2135-rxe-panic.qps)"},
      {"destroy_qp_waits_for_bound_type2_window", 1,
       "rxe_mw.c rxe_do_bind_mw takes a reference on the QP for a type 2 window (rxe_get(qp)), "
       "dropped only by its invalidation or dealloc; rxe_destroy_qp -> rxe_cleanup -> "
       "rxe_pool.c __rxe_cleanup erases the QP's index first (its packets are dropped), then "
       "waits for the last reference with wait_for_completion_timeout(50 s), warns and "
       "frees it (measured: differential seed 20261244 sequence 14140, 3 of 3 rxe runs and "
       "probes: the peer of an RNR loop ends RETRY_EXC_ERR inside the destroy even with "
       "timeout 20; row 131)"},
      {"retry_cnt_7_is_infinite", 1,
       "rxe_comp.c COMPST_ERROR_RETRY: `if (qp->comp.retry_cnt != 7) qp->comp.retry_cnt--;` "
       "(the same as for rnr_retry)"},
      {"retry_reruns_local_ops", 1,
       "rxe_req.c req_retry sets req.wqe_index back to the consumer index and skips the "
       "wqe_state_done WQEs only in its own loop; rxe_requester takes the next WQE from "
       "req_next_wqe whatever its state and runs rxe_do_local_ops again, and rxe_mw.c "
       "rxe_bind_mw refuses a window whose rkey is no longer the WQE's mw_rkey (measured in "
       "tools/rxe-vm, 2 of 2 runs: a 3-packet SEND in an RNR loop, a type 2 bind posted behind "
       "it: once a receive is posted the SEND never completes; differential seed 20261213 "
       "sequence 298). rxe_net.c rxe_loopback answers inside the send: when the answer to the "
       "message the retry resent retires it and the bind behind it first (BIND_MW SUCCESS), "
       "the requester runs the bind again from its consumed slot, fails without a CQE and "
       "stops, the QP still in RTS (measured, 3 of 3: a 1-packet SEND; differential seed "
       "20261240 sequence 1449)"},
      {"local_inv_waits_for_all", 1,
       "rxe_req.c rxe_wqe_is_fenced: a LOCAL_INV is fenced while req.wqe_index is not the "
       "send queue's consumer index (\"Local invalidate fence (LIF) see IBA 10.6.5.1 ... Make "
       "mandatory for the rxe driver\") (measured in tools/rxe-vm, 2 of 2 runs: a SEND or "
       "CMP_SWP to a silent peer, retry_cnt 1, then a LOCAL_INV of a type 1 window, which "
       "fails: the first WR ends RETRY_EXC_ERR and the LOCAL_INV is flushed; differential seed "
       "20261212 sequence 651). rxe_comp.c do_complete then runs the fenced requester at once "
       "(req.wait_fence), before COMPST_ERROR's rxe_qp_error: the LOCAL_INV executes, the "
       "completer is scheduled ahead of the responder, and the send queue is flushed before "
       "the receive queue (measured, 3 of 3: a type 2 window so invalidated binds again; "
       "differential seed 20261249 sequence 604)"},
      {"retrans_timer_runs_out", 1,
       "rxe_req.c arms retrans_timer only when !timer_pending, rxe_comp.c COMPST_EXIT "
       "pushes it while PSNs are outstanding, and only rxe_qp.c rxe_qp_do_cleanup deletes it; "
       "retransmit_timer sets comp.timeout, which rxe_completer reads only outside ERR and "
       "RESET (measured in tools/rxe-vm, 3 of 3 runs: a SEND to a peer in ERR, the QP moved "
       "to ERR and 50 ms waited, then RESET -> RTS, a SEND to the silent peer (retry_cnt 0) "
       "and a type 1 bind behind it: the SEND completed RETRY_EXC_ERR before the next poll; "
       "without the first phase only after the timeout)"},
      {"solicited_arm_ignores_errors", 1,
       "rxe_cq.c rxe_cq_post fires a solicited-only arm when its `solicited` argument is "
       "set: rxe_comp.c do_complete passes 0 for every send CQE, rxe_resp.c do_complete the "
       "packet's SE bit or 1 without a packet (measured: differential seed 20261207 sequence "
       "1710: a READ flushed by a modify to ERR raised no event on a solicited-only arm)"},
      {"post_runs_requester", 1,
       "rxe_verbs.c rxe_post_send: for a user QP the requester runs in the system call "
       "(rxe_run_task(&qp->req.task, 0)), so rxe_req.c rxe_do_local_ops has bound the window "
       "or failed (MW_BIND_ERR, rxe_qp_error) when ibv_post_send returns (measured: "
       "differential seed 20261206 sequences 620, 872: a receive posted right after a failing "
       "bind waits in ERR for the next move to ERR instead of being flushed with the rest)"},
      {"post_answers_each_message", 1,
       "rxe_net.c: a request to a device of the same host is received in the sender's "
       "context: rxe_loopback calls rxe_rcv, and to another rxe device the NET_RX softirq "
       "runs at the transmit's local_bh_enable; rxe_resp_queue_pkt and rxe_comp_queue_pkt run "
       "the responder and completer inline (measured: differential seed 20261207 sequence "
       "1176: a BIND_MW posted behind an atomic that draws NAK invalid request is flushed, "
       "its MR stays deregistrable). rxe_resp_queue_pkt schedules the responder for a READ "
       "request, and the pending tasklet runs at the requester task's next spin_unlock_bh: "
       "answered before the next WQE as well (measured: 5 READs of one post whose responses "
       "fail locally: one sent, sq_psn + 1; AReadsResponseOnTheSameDeviceIsHandledBefore"
       "TheNextRead)"},
      {"requester_walks_one_wqe_in_error", 1,
       "rxe_req.c rxe_requester: in QP_STATE_ERROR each run marks the WQE at req.wqe_index "
       "(WR_FLUSH_ERR, err:) and returns -EAGAIN, so rxe_do_task stops after one; rxe_comp.c "
       "flushes every WQE up to the producer. rxe_qp.c sets req.state READY at RTS without "
       "resetting req.wqe_index (only RESET does), so after ERR -> RTS by IBV_QP_CUR_STATE the "
       "requester runs the ring's stale WQEs first (measured in tools/rxe-vm: 3 UD SENDs posted "
       "in ERR in one call were flushed, and after ERR -> RTS the next post delivered two of "
       "them again, without completions; differential seed 20261208 sequence 1767). "
       "req.need_retry survives ERR as well (rnr_nak_timer sets it there): the first run "
       "after ERR -> RTS is req_retry, from the consumer index at comp.psn (seed 20261214 "
       "sequence 1712). req.wqe_index counts modulo the ring's slots: a post in ERR that "
       "puts the producer a whole ring past it finds the ring empty, flushes nothing, and "
       "its WRs wait for the completer's next run: rxe_comp.c rxe_completer in ERR flushes every "
       "WQE up to the producer (rxe_drain_resp_pkts), and the transport timer running out "
       "runs it (a response to a QP in ERR is dropped first, rxe_recv.c check_type_state) (measured: 8 WRs, the second failing, then 11 in ERR, seed 20261220 sequence "
       "1092; 10 posted 80 us after a CMP_SWP's NAK are flushed when its timer runs out, seed "
       "20261232 sequence 16220). Stale WQEs keep their slots after ERR -> RTS: the requester "
       "walks slots up to the producer, so a post that goes round onto them is sent only "
       "where it wrote over them; the rest lie behind it, the completer's head never starts "
       "(get_wqe drops responses, COMPST_ERROR_RETRY retries nothing) and the QP hangs "
       "(measured: seed 20261232 sequence 12293, 15 SEND_IMMs, ERR -> RTS, 12 SENDs: 9 sent)"},
      {"send_slot_keeps_status", 1,
       "rxe writes wqe->status only on an error (rxe_req.c err paths, rxe_comp.c NAKs, "
       "RETRY_EXC_ERR, RNR_RETRY_EXC_ERR), on a flush (rxe_comp.c rxe_drain_resp_pkts: "
       "WR_FLUSH_ERR into every WQE it flushes), on a local operation run (rxe_do_local_ops: "
       "SUCCESS) and on a faked UD send (SUCCESS); providers/rxe init_send_wqe (ibv_post_send) "
       "does not clear it, and do_complete reports wqe->status, posting a CQE for any status "
       "but SUCCESS. RESET clears the ring (rxe_queue_reset memsets the slots). Measured in "
       "tools/rxe-vm, 2 of 2: an RC QP whose send timed out (RETRY_EXC_ERR in slot 0), then "
       "1 WRITE and 15 FETCH_ADDs posted in ERR (flushed), ERR -> RTS by IBV_QP_CUR_STATE: the "
       "next READ, SEND or WRITE lands in slot 1 and completes WR_FLUSH_ERR, even unsignaled, "
       "though it was executed (the peer's receive completes) and the QP stays in RTS; with "
       "14 FETCH_ADDs it lands in slot 0 and completes RETRY_EXC_ERR; with 13 or fewer in a "
       "slot never used, SUCCESS (differential seed 858754918255 sequence 859). The slot keeps "
       "wqe->has_rd_atomic as well (cleared only by complete_ack, which gives the credit back): "
       "the WR posted into the slot of a READ that failed holds its credit (probes slot-credit, "
       "slot-credit2: a READ there is sent with none left; a WRITE there gives it back)"},
      {"read_response_waits_for_comp_psn", 1,
       "rxe_comp.c check_psn: any packet (a response or a NAK) whose PSN is newer than comp.psn "
       "is COMPST_DONE for a READ/atomic WQE at the consumer index (check_ack for a SEND/WRITE). "
       "A ghost's ACK that arrives while the WQE at the consumer index has not started "
       "(get_wqe) moves nothing, and a ghost resets no retry counter. Measured in tools/rxe-vm, "
       "2 of 2 each (probes ghost-read-nak: the NAK of a READ past the region's end is dropped "
       "too, RETRY_EXC_ERR; ghost-retry-count) "
       "(probes ghost-read-*): two WRITEs posted in ERR in one call, ERR -> RTS by "
       "IBV_QP_CUR_STATE, a READ: the second WRITE goes out again at PSN 0, the READ at PSN 1 is "
       "answered and its response dropped; the transport timer resends it at PSN 0 until "
       "RETRY_EXC_ERR (sq_psn 1); a WRITE there completes, and so does a READ with no ghost"},
      {"dereg_mr_bound_mw_errno", EINVAL,
       "rxe_verbs.c rxe_dereg_mr: atomic_read(&mr->num_mw) > 0 -> -EINVAL (measured: "
       "memory_window_test DeallocOfABoundWindowClosesIt)"},
      {"mw_range_checked_against_mr", 1,
       "rxe_resp.c check_rkey: an MW rkey resolves to mw->mr and mr_check_range(mr, ...) "
       "checks the region's bounds only (measured: a WRITE past the window's end and one "
       "below its start succeed, past the region's end REM_ACCESS_ERR)"},
      {"recv_inv_flag_as_ip_csum_ok", 1,
       "rxe_resp.c do_complete writes IB_WC_WITH_INVALIDATE (1 << 2) into the user CQE and "
       "providers/rxe copies it as is: bit 2 is IBV_WC_IP_CSUM_OK (measured: a SEND_WITH_INV "
       "receive completes with GRH|IP_CSUM_OK, IBV_WC_WITH_INV unset)"},
      {"recv_full_checked_first", 1,
       "providers/rxe rxe_post_one_recv (QP and SRQ): queue_full() -> ENOMEM before "
       "num_sge > max_sge -> EINVAL (measured: a 3-SGE receive into a full 15-entry RQ, a "
       "2-SGE one into a full SRQ of max_sge 1: ENOMEM; differential seed 20261202, 3284)"},
  };
  return d;
}

// ---- ConnectX-6 Dx-like: what mlx5 reports (ibv_devinfo -v), IBTA behaviour --------------------
// The model makes no claim about mlx5 firmware quirks: no deviations are listed.
DeviceDescription Cx6() {
  DeviceDescription d;
  d.name = "cx6";
  d.summary = "ConnectX-6 Dx-like 100 GbE RoCE v2 NIC (mlx5 caps), IBTA behaviour";
  DeviceAttr& a = d.device;
  a.max_mr_size = ~0ull;
  a.vendor_id = 0x02c9;     // Mellanox
  a.vendor_part_id = 4125;  // ConnectX-6 Dx (0x101d)
  a.max_qp = 1 << 18;       // ibv_devinfo -v: max_qp 262144
  a.max_qp_wr = 1 << 15;    // 32768
  a.max_sge = 30;
  a.max_sge_rd = 30;
  a.max_cq = 1 << 24;
  a.max_cqe = (1 << 22) - 1;  // 4194303
  a.max_mr = 1 << 24;
  a.max_mw = 1 << 24;       // mlx5: max_mw 16777216
  a.max_pd = 1 << 24;
  a.max_ah = 0x7fffffff;
  a.max_qp_rd_atom = 16;
  a.max_qp_init_rd_atom = 16;
  a.max_srq = 1 << 23;
  a.max_srq_wr = (1 << 15) - 1;
  a.max_srq_sge = 31;
  a.max_inline_data = 220;  // estimate: perftest's default inline size on mlx5 RC
  a.max_pkeys = 128;
  a.atomic_cap = AtomicCap::kHca;
  a.phys_port_cnt = 1;
  PortAttr& p = d.port;
  p.state = PortState::kActive;
  p.max_mtu = Mtu::k4096;
  p.active_mtu = Mtu::k4096;  // netdev MTU 9000 (jumbo frames) -> IB MTU 4096
  p.gid_tbl_len = 256;
  p.max_msg_sz = 1u << 30;  // mlx5: 0x40000000
  p.pkey_tbl_len = 1;
  p.lid = 0;
  p.active_width = 2;   // 4X
  p.active_speed = 64;  // reported for 100 GbE (HDR lane rate 50G x2 in ethtool terms)
  p.link_layer = LinkLayer::kEthernet;
  return d;
}

const std::vector<DeviceDescription>& All() {
  static const std::vector<DeviceDescription> kAll = {Ibta(), Rxe(), Cx6()};
  return kAll;
}

}  // namespace

bool operator==(const Behaviour& a, const Behaviour& b) {
  for (const BehaviourSetting& s : kSettings) {
    if (s.Get(a) != s.Get(b)) return false;
  }
  return true;
}

const std::vector<BehaviourSetting>& BehaviourSettings() { return kSettings; }

const BehaviourSetting* FindBehaviourSetting(std::string_view name) {
  for (const BehaviourSetting& s : kSettings) {
    if (s.name == name) return &s;
  }
  return nullptr;
}

std::string DescribeDeviations(const Behaviour& b) {
  const Behaviour ibta;
  std::string out;
  for (const BehaviourSetting& s : kSettings) {
    if (s.Get(b) == s.Get(ibta)) continue;
    if (!out.empty()) out += ' ';
    out += std::string(s.name) + "=" + std::to_string(s.Get(b));
  }
  return out.empty() ? "ibta" : out;
}

std::string DescribeDifferences(const Behaviour& a, const Behaviour& b) {
  std::string out;
  for (const BehaviourSetting& s : kSettings) {
    if (s.Get(a) == s.Get(b)) continue;
    if (!out.empty()) out += "; ";
    out += std::string(s.name) + ": " + std::to_string(s.Get(a)) + " vs " + std::to_string(s.Get(b));
  }
  return out;
}

Behaviour DeviceDescription::behaviour() const {
  Behaviour b;
  for (const Deviation& d : deviations) {
    if (const BehaviourSetting* s = FindBehaviourSetting(d.setting)) s->Set(b, d.value);
  }
  return b;
}

const DeviceDescription* FindDeviceDescription(std::string_view name) {
  for (const DeviceDescription& d : All()) {
    if (EqualsIgnoreCase(d.name, std::string(name))) return &d;
  }
  return nullptr;
}

std::vector<std::string> KnownDeviceNames() {
  std::vector<std::string> out;
  for (const DeviceDescription& d : All()) out.push_back(d.name);
  return out;
}

uint32_t QueueSlots(const Behaviour& b, uint32_t requested) {
  if (!b.queues_rounded_up) return requested;
  uint64_t slots = 1;
  while (slots < uint64_t{requested} + 1) slots <<= 1;
  return static_cast<uint32_t>(slots - 1);
}

QpCap GrantedCaps(const Behaviour& b, const QpCap& requested) {
  QpCap c = requested;
  c.max_send_wr = QueueSlots(b, c.max_send_wr);
  c.max_recv_wr = QueueSlots(b, c.max_recv_wr);
  if (b.queues_rounded_up) {
    constexpr uint32_t kSgeBytes = 16;  // sizeof(struct ib_sge)
    uint32_t wqe = std::max(c.max_send_sge * kSgeBytes, c.max_inline_data);
    c.max_send_sge = wqe / kSgeBytes;
    c.max_inline_data = wqe;
  }
  return c;
}

}  // namespace qptwin
