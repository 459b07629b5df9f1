// The NIC's objects as plain data: PD, AH, SRQ, completion channel, QP and its WQEs.
// Behaviour lives in Nic (nic.h); these structs only hold state.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <vector>

#include "model/engine/cq.h"
#include "model/engine/memory.h"
#include "model/engine/queue_memory.h"
#include "model/engine/recv_queue.h"
#include "model/engine/ring.h"
#include "spec/backend.h"

namespace qptwin::model::engine {

struct Pd {
  uint32_t ctx = 0;
  int users = 0;  // QPs, SRQs, AHs (MRs are counted in the MrTable)
};

struct Ah {
  uint32_t ctx = 0;
  uint32_t pd = 0;
  AhAttr attr;
  int dst_nic = -1;  // -1: the address reaches no device
};

struct Channel {
  uint32_t ctx = 0;
  std::deque<uint32_t> events;  // CQ handles, oldest first
  int users = 0;
};

struct Xrcd {  // an XRC domain
  uint32_t ctx = 0;
  int users = 0;  // XRC SRQs and XRC_RECV QPs
};

struct Srq {
  uint32_t handle = 0;
  uint32_t ctx = 0;
  uint32_t pd = 0;
  uint32_t max_wr = 0;
  uint32_t max_sge = 0;
  uint32_t limit = 0;  // srq_limit armed by ModifySrq (0: none); nic_srq_cq.cc
  RecvQueue rq;
  int users = 0;
  // XRC SRQs: the number senders name (XRCETH), the domain, and the CQ of its receives.
  SrqType type = SrqType::kBasic;
  uint32_t srqn = 0;
  uint32_t xrcd = 0;
  std::shared_ptr<Cq> cq;
};

// A WQE's scatter/gather list: a single SGE (the common case) inside the WQE, longer lists
// in one heap block (issue 15: no allocation per WR for one SGE).
class SgeList {
 public:
  SgeList() = default;
  SgeList(const SgeList& o) { Assign(o.begin(), o.size()); }
  SgeList(SgeList&& o) noexcept : one_(o.one_), more_(std::move(o.more_)), n_(o.n_) { o.n_ = 0; }
  SgeList& operator=(const SgeList& o) {
    if (this != &o) Assign(o.begin(), o.size());
    return *this;
  }
  SgeList& operator=(SgeList&& o) noexcept {
    one_ = o.one_;
    more_ = std::move(o.more_);
    n_ = o.n_;
    o.n_ = 0;
    return *this;
  }
  SgeList& operator=(const std::vector<Sge>& v) {
    Assign(v.data(), v.size());
    return *this;
  }
  void Set(const Sge* first, size_t n) { Assign(first, n); }
  const Sge* begin() const { return n_ > 1 ? more_.get() : &one_; }
  const Sge* end() const { return begin() + n_; }
  size_t size() const { return n_; }
  bool empty() const { return n_ == 0; }
  const Sge& operator[](size_t i) const { return begin()[i]; }
  operator SgeSpan() const { return SgeSpan(begin(), n_); }  // NOLINT: implicit

 private:
  void Assign(const Sge* first, size_t n) {
    if (n > 1) {
      more_.reset(new Sge[n]);
      for (size_t i = 0; i < n; ++i) more_[i] = first[i];
    } else {
      more_.reset();
      if (n == 1) one_ = *first;
    }
    n_ = static_cast<uint32_t>(n);
  }

  Sge one_;
  std::unique_ptr<Sge[]> more_;
  uint32_t n_ = 0;
};

// The fields of a SendWr (spec/backend.h) a WQE keeps, with the SGEs in an SgeList. A field
// added to SendWr that the engine reads must be added here and in operator=.
struct WqeWr {
  uint64_t wr_id = 0;
  uint64_t remote_addr = 0;
  uint64_t compare_add = 0;
  uint64_t swap = 0;
  SgeList sg_list;
  WrOpcode opcode = WrOpcode::kSend;
  SendFlags send_flags = 0;
  uint32_t imm_data = 0;
  uint32_t rkey = 0;
  AhHandle ah;
  uint32_t remote_qpn = 0;
  uint32_t remote_qkey = 0;
  uint32_t remote_srqn = 0;
  // BIND_MW: the window (by the program's rkey for it at the post, window.h contract 4)
  // and what it is bound to; `rkey` is the new rkey.
  uint32_t mw_rkey = 0;
  MwBindInfo bind_info;

  WqeWr& operator=(const SendWr& wr) {
    wr_id = wr.wr_id;
    remote_addr = wr.remote_addr;
    compare_add = wr.compare_add;
    swap = wr.swap;
    sg_list = wr.sg_list;
    opcode = wr.opcode;
    send_flags = wr.send_flags;
    imm_data = wr.imm_data;
    rkey = wr.rkey;
    ah = wr.ah;
    remote_qpn = wr.remote_qpn;
    remote_qkey = wr.remote_qkey;
    remote_srqn = wr.remote_srqn;
    mw_rkey = 0;  // set by the post (nic_post.cc)
    bind_info = wr.bind_info;
    return *this;
  }
};

struct SendWqe {
  uint64_t serial = 0;  // unique within the QP; timers and callbacks name WQEs by it
  WqeWr wr;
  // Inline data, copied at the post: `length` bytes when is_inline.
  std::unique_ptr<uint8_t[]> inline_data;
  // UD: the address handle as it was at the post (a device that copies the AV into the WQE;
  // Behaviour::ud_ah_resolved_at_send looks the AH up when sending instead).
  std::optional<Ah> ah_at_post;
  uint64_t length = 0;
  uint64_t ready_ns = 0;  // the NIC has the WQE (doorbell + WQE fetch, timing.h)
  uint32_t psn = 0;
  uint32_t npkts = 1;
  WcStatus status = WcStatus::kSuccess;  // the outcome once `done`
  bool is_inline = false;
  bool signaled = false;
  bool sent = false;  // transmitted at least once (psn/npkts assigned)
  // A READ/atomic that has taken one of max_rd_atomic credits (rxe: wqe->has_rd_atomic); a
  // retry does not take another. Nic::ReturnRdCredit gives it back when the WQE leaves.
  bool has_rd_credit = false;
  bool done = false;  // finished; `status` holds the outcome
  // Failed a local check while earlier WQEs were outstanding: completes, and moves the QP to
  // ERR, when it reaches the head (Behaviour::local_error_completes_in_order).
  bool failed_locally = false;
  // READ data or an atomic result is in host memory then, when the bus took extra time to
  // write it (host_bus.h contract 3); 0: at once.
  uint64_t data_written_ns = 0;
  // The NIC's fetch of this WQE from the send queue's buffer failed (send_wqe_image.h):
  // the requester completes it with LOC_QP_OP_ERR.
  bool fetch_failed = false;
  // The provider's CPU write of its image failed (host_bus.h contract 7): its slot holds
  // no image of it. The provider's knowledge (it sends no BlueFlame copy then); the NIC
  // tells by the image's post index (send_wqe_image.h contract 4) and finds it malformed.
  bool image_lost = false;
  // Resent by a retry from a comp.psn behind its first PSN (Nic::RebasePsns): rxe_req.c
  // retry_first_write_send skips (comp.psn - first_psn) & 0xffffff packets' worth of its data,
  // all of it, so it goes again as one packet with no payload (RETH length 0).
  bool emptied_by_retry = false;
  // Put back to not started by a retry in SQD (Nic::UnsendInSqd) after its first packets were
  // acknowledged: rxe_req.c req_retry's retry_first_write_send stepped the requester's opcode
  // and data past them, so after SQD -> RTS the message goes on from comp.psn (its PSNs kept:
  // the responder waits in the middle of it), not as a new message from there.
  bool resumes_mid_message = false;
  // A stale copy the requester runs again after ERR -> RTS (Behaviour::
  // requester_walks_one_wqe_in_error): it is sent but never completes (no CQE), and it does
  // not count against max_send_wr.
  bool ghost = false;
  // Behind the requester for good (Nic::OverwriteStaleSlots): its ring slot lies between the
  // consumer and the requester's index, so it is never sent, and while it is the head the
  // completer drops every response and has nothing to retry.
  bool stuck = false;
  // The NIC has fetched it (doorbell_port.h contract 1); until then it has the provider's
  // fields only.
  bool fetched = false;
  // Its send ring slot (Qp::sq_posts at the post, modulo Qp::send_ring_slots()): where its
  // image lies in Qp::sq_buf. Whether the device wrote a success status into it (a local
  // operation run, a UD send faked): Behaviour::send_slot_keeps_status.
  uint32_t slot = 0;
  uint32_t post_index = 0;  // Qp::sq_posts at its post (send_wqe_image.h contract 4)
  // Made by the NIC from its ring slot at a program's own driver's ring (doorbell_port.h
  // contract 6): the provider never saw it, so all it is comes from the image.
  bool from_ring = false;
  bool wrote_success = false;
  bool slot_noted = false;  // its status went into the slot (Nic::SlotStatusAtRetire)
  // Completed by a response to a later WQE (rxe_comp.c check_psn: COMPST_COMP_WQE), not by
  // its own acknowledgement (complete_ack): a credit it holds is not given back.
  bool implied_ack = false;
};

// What rxe leaves in a send ring slot that the post does not overwrite (providers/rxe
// init_send_wqe): the status the device last wrote (Behaviour::send_slot_keeps_status), and
// wqe->has_rd_atomic, set while the WQE there holds a READ/atomic credit and cleared only when
// rxe_comp.c complete_ack gives the credit back. A WQE posted into a slot whose credit was never
// given back holds it already: it takes none (check_init_depth) and gives one back when it is
// acknowledged, a SEND or WRITE too.
struct SendSlot {
  WcStatus status = WcStatus::kSuccess;
  bool rd_credit = false;
};

// Owned by shared_ptr (Nic::qps_); the engine's sources hold weak references (weak_from_this).
struct Qp : std::enable_shared_from_this<Qp> {
  uint32_t handle = 0;
  uint32_t ctx = 0;
  uint32_t qpn = 0;
  QpType type = QpType::kRc;
  QpInitAttr init;
  QpCap cap;
  QpState state = QpState::kReset;
  QpAttr attr;  // the attributes set so far (qp_state mirrors `state`)
  std::shared_ptr<Cq> send_cq;  // null for XRC_RECV
  std::shared_ptr<Cq> recv_cq;  // null for XRC_SEND and XRC_RECV
  std::shared_ptr<Srq> srq;
  uint32_t xrcd = 0;            // XRC_RECV: its domain
  std::vector<StateChange> history;
  // What ibv_query_qp reports under Behaviour::query_qp_stored_view (rxe_qp_to_attr).
  bool path_mtu_set = false;
  bool av_set = false, alt_av_set = false;
  QpState cur_state_given = QpState::kReset;

  // Send queue: [0, sq_next) started, [sq_next, end) waiting. Popped in order when done.
  Ring<SendWqe> sq;  // ring.h: no allocation per WQE once it has grown
  // The send queue's ring in host memory (send_wqe_image.h contract 3): send_ring_slots()
  // slots of sq_stride bytes; a WQE's image lives in slot SendWqe::slot from its post until
  // it retires. Storage for the first sq_slots_held slots, grown as posts reach them.
  std::unique_ptr<uint8_t[]> sq_buf;
  QueueBlock sq_block;  // or the whole ring at a bus address (queue_memory.h contract 2)
  size_t sq_stride = 0;
  size_t sq_slots_held = 0;
  size_t sq_next = 0;
  // Behaviour::requester_walks_one_wqe_in_error: in ERR, the flushed WQEs the requester has
  // not taken yet (copies, oldest first); ghosts in `sq` once the QP leaves ERR; a requester
  // a ghost failed (rxe: req.state ERROR while the QP is in RTS) takes one WQE per post.
  Ring<SendWqe> unwalked;
  size_t ghosts = 0;  // ghost WQEs in `sq`
  // A fatal NAK of a message's first packets, answered inside the post, stopped the
  // requester before the message's last packet: rxe's req.wqe_index is still on that WQE
  // (rxe_req.c update_state moves it on at the END packet only), so the requester's walks
  // in ERR take its slot first (Nic::StopAtNak sets it, Nic::FlushOnError takes it).
  bool req_index_on_failed = false;
  // A NAK of a READ answered inside the post moved the QP to ERR: rxe's requester walks two
  // slots in ERR then, not one (Nic::StopAtNak sets it, Nic::FlushOnError takes it).
  bool read_nak_in_post = false;
  // Some WQE in `sq` may be SendWqe::stuck (set by Nic::OverwriteStaleSlots, cleared by
  // Nic::ClearStuck): Nic::HeadStuck looks only then.
  bool may_have_stuck = false;
  // The WQEs the program posted and that have not retired (what max_send_wr bounds).
  size_t posted_wqes() const { return sq.size() - ghosts; }
  uint32_t traced_sq = 0, traced_rq = 0;  // the counts a tracer saw last (trace_port.h)
  // rxe's send ring (rxe_queue.c rxe_queue_init): the granted max_send_wr + 1 slots, rounded
  // up to a power of two; its producer, consumer and req.wqe_index count modulo this.
  size_t send_ring_slots() const {  // the least power of two above max_send_wr (no loop)
    return cap.max_send_wr == 0 ? 1 : size_t{2} << (31 - __builtin_clz(cap.max_send_wr));
  }
  // The WRs ever posted to the send ring (rxe's producer index, never reset: rxe_queue_reset
  // clears the slots, not the indices), and, under Behaviour::send_slot_keeps_status, what
  // the device last left in each slot (empty: nothing yet).
  uint64_t sq_posts = 0;
  std::vector<SendSlot> send_slots;
  // The first WQE not finished (rxe's consumer index once the ghosts are gone).
  size_t first_undone() const {
    size_t i = 0;
    while (i < sq.size() && sq[i].done) ++i;
    return i;
  }
  bool requester_dead = false;
  uint64_t next_serial = 1;
  RecvQueue rq;

  // Requester / completer.
  int dst_nic = -1;
  uint32_t next_psn = 0;
  int retry_left = 0;
  int rnr_left = 0;
  // A retry is under way that a sequence NAK or a timeout started, not yet answered by
  // progress (Behaviour::psn_nak_uses_retry; rxe_comp.c comp.started_retry).
  bool started_retry = false;
  // Behaviour::local_error_stops_retries: a retry is due while a WR that failed locally waits
  // behind the WR to retry; nothing is resent or handled any more until the QP leaves RTS
  // (rxe: req.need_retry set, the requester in QP_STATE_ERROR).
  bool retry_stalled = false;
  // Behaviour::sqd_retry_unsends: RTS -> SQD set the requester that had stopped at a local
  // error running again (rxe_qp_drain: req.state DRAIN over QP_STATE_ERROR), so a later
  // timeout's retry is not stalled; the WR that failed waits at the head as before.
  bool requester_revived = false;
  // Behaviour::requester_walks_one_wqe_in_error: the QP went to ERR while a message waited out
  // its RNR timer. The timer still fires (rxe_req.c rnr_nak_timer sets req.need_retry); the
  // first requester run after it and after ERR -> RTS runs req_retry: from the consumer index (no
  // ghost goes out) at req.psn = comp.psn, the NAKed message's PSN (seed 20261214 sequence
  // 1712). RESET clears it.
  bool retry_after_err = false;
  uint32_t retry_after_err_psn = 0;
  bool rnr_timer_in_err = false;  // that RNR timer has not fired yet
  // Behaviour::fence_counts_sent_rd_atomic: a retry went back to a fenced WR and stopped there
  // (rxe: req_retry has set the WQEs back to wqe_state_posted, so an SQD drain counts them as
  // not started although their READ/atomic credits are still held).
  bool retry_parked_at_fence = false;
  // rxe's req.wait_fence: the requester stopped at a fence (rxe_wqe_is_fenced: a LOCAL_INV
  // behind unfinished WQEs, a FENCE-flagged WR behind a READ/atomic credit); only the
  // completer's next retirement clears it (rxe_comp.c do_complete, which then runs the
  // requester). A WR posted in SQD never reaches the check (req_next_wqe in DRAIN).
  bool wait_fence = false;
  // Behaviour::partial_ack_resets_retries_only: the highest PSN an ACK inside the head WQE
  // (serial) acknowledged (rxe_comp.c comp.psn: only a newer one reaches reset_retry_counters).
  uint64_t partial_ack_serial = 0;
  uint32_t partial_ack_psn = 0;
  // rxe_comp.c comp.psn: the PSN after the last packet a response answered (set with
  // sq_psn; moved on by each response the completer takes and by a later sequence NAK's
  // PSN). A retry starts there (req_retry: req.psn = comp.psn), behind the retried WQE's own
  // PSN when WQEs that were never answered took PSNs and left (failed, then ERR -> RTS).
  uint32_t comp_psn = 0;
  // The max_rd_atomic credits not taken (rxe: req.rd_atomic). A READ/atomic takes one when
  // it first starts (SendWqe::has_rd_credit; a retry takes none) and Nic::ReturnRdCredit
  // gives it back when the WQE leaves: always, or with Behaviour::failed_rd_atomic_keeps_credit
  // only after a successful response (rxe_comp.c complete_ack). A modify that sets
  // max_rd_atomic sets it: to the new value less the credits held, or (keeps_credit: rxe_qp.c
  // atomic_set) to the new value whatever is in flight, whose credits then come back on top.
  int rd_atomic_avail = 0;
  // Behaviour::dup_read_needs_its_resource: the READ/atomic resources the responder holds
  // (rxe_resp.c resp.resources, max_dest_rd_atomic slots taken in turn).
  struct RdAtomicRes {
    bool used = false;  // rxe: type != 0
    bool read = false;
    uint32_t first_psn = 0, last_psn = 0, rkey = 0;
    uint64_t va = 0, length = 0;
    uint64_t orig = 0;  // an atomic's original value (rxe: res->atomic.orig_val)
  };
  std::vector<RdAtomicRes> rd_res;
  size_t rd_res_head = 0;
  // UC responder: the last packet of a message was dropped after its earlier ones were
  // executed (Behaviour::write_imm_receive_at_last_packet), so it is still "inside" that
  // message: rxe_resp.c check_op_seq drops every message that starts with a FIRST or ONLY.
  bool uc_mid_message = false;
  // RC/UC responder: the packets of a WRITE_WITH_IMM before its last were executed and the
  // last one waits at write_imm_wait_psn (== epsn until anything else executes). Only then
  // is a message with epsn inside it that WRITE resumed (rxe_resp.c check_op_seq: a
  // WRITE_LAST after WRITE_FIRST/MIDDLE); after anything else it is an invalid request.
  bool write_imm_waiting = false;
  uint32_t write_imm_wait_psn = 0;
  // RC responder: a PSN sequence NAK was sent for a gap and no packet at epsn has come since:
  // later packets past epsn are dropped without another NAK (rxe_resp.c check_psn,
  // resp.sent_psn_nak; cleared by a packet at epsn and by RESET).
  bool sent_psn_nak = false;
  bool rnr_wait = false;
  size_t rnr_index = 0;  // the RNR-NAKed WQE the retry starts from (rnr_wait_sends_new_wqes)
  bool kick_pending = false;
  // NicTiming::retry_skip_ps_per_packet: the requester is busy stepping through a retry's
  // skipped packets until then (Nic::RebasePsns); it sends nothing before (the completer
  // still handles responses and timers: a simplification, rxe's completer tasklet is the
  // one looping).
  uint64_t requester_busy_until_ns = 0;
  bool flush_after_skip_loop = false;  // EnterError during that loop: the flush waits for it
  bool kick_after_skip_loop = false;   // the requester was wanted during it: runs at its end
  bool timer_armed = false;
  uint64_t timer_deadline = 0;  // the transport timer fires then (when armed)
  uint64_t timer_event_at = 0;  // the pending timer event (0: none)
  // Behaviour::retrans_timer_runs_out: the timer expired while the QP was in ERR or RESET,
  // where the completer exits at once (rxe's comp.timeout, left set): the completer's next
  // run in RTS/SQD without a response counts it as a timeout.
  bool stale_timeout = false;
  // A local operation scheduled the completer (rxe_do_local_ops): it runs when the
  // requester's run ends, and takes a stale_timeout then.
  bool completer_due = false;
  // When the last byte of the latest reliable request left the port: the transport timer
  // counts from then at the earliest (the responder cannot ACK a message still on the wire;
  // rxe's responder ACKs every RXE_MAX_PKT_PER_ACK packets, which re-arms the timer).
  uint64_t last_gone_ns = 0;
  bool sq_draining = false;

  // Responder.
  uint32_t epsn = 0;
  // The PSN after the last SEND/WRITE/atomic packet executed (rxe's resp.ack_psn; READs do
  // not move it, nor does RESET): Behaviour::duplicate_ack_psn_is_last_executed.
  uint32_t ack_psn = 0;
  bool comm_est_raised = false;
  // No modify to RTR since it was created or last moved to RESET, INIT or ERR
  // (Behaviour::responder_ready_only_from_rtr: rxe's resp.state is not QP_STATE_READY).
  bool responder_not_ready = true;
  // In ERR, queues not flushed yet: a response to a QP of the same device goes first
  // (Behaviour::loopback_response_before_responder_flush; Nic::Receive flushes).
  bool flush_pending = false;
  // Nic::BeginFlush ran for the pending flush: the failed WQE's CQE is written (a flush
  // held to the end of a tick's timers, Nic::DeferFlushToTickEnd).
  bool flush_begun = false;
  // The completer runs before the responder's receive flush (Nic::FlushesRqFirst): the WQE a
  // timed-out head had fenced ran first and scheduled it (Nic::RunFencedInvalidate); armed
  // (that WQE failed), it runs at once, ahead of a tick's other timers too.
  bool completer_scheduled_first = false;
  bool completer_armed = false;
  bool last_wqe_raised = false;
  Ring<std::pair<uint32_t, uint64_t>> atomic_replay;  // psn -> original value
  // XRC_RECV: the XRC SRQ named by the request being handled (set by RespCheckXrcSrq).
  std::shared_ptr<Srq> xrc_srq;
};

}  // namespace qptwin::model::engine
