// Device profiles: capabilities, quirks and timing of a modelled NIC, as data.
//
// Contract:
//  1. A profile is plain data; the engine reads it and never branches on the profile name.
//  2. FindProfile() returns nullptr for an unknown name; names compare case-insensitively.
//  3. Timing (timing.h) says what every step of a message costs; wire.h computes the
//     packets and their bytes on the wire. Every timing number carries its source in
//     profile.cc / profile_cx6.cc, or says that it is an estimate.
#pragma once

#include <cerrno>
#include <cstdint>
#include <string>
#include <vector>

#include "spec/backend.h"
#include "spec/vocabulary.h"
#include "model/timing.h"
#include "model/wire.h"

namespace qptwin::model {

struct Quirks {
  bool supports_uc = true;
  bool supports_ud = true;
  // XRC domains, XRC SRQs and XRC_SEND/XRC_RECV QPs (IBTA 9.8; ibta). rxe: EOPNOTSUPP
  // (rxe_qp_chk_init; libibverbs: no open_xrcd/get_srq_num ops).
  bool supports_xrc = false;
  bool reject_extended_mask = true;   // mask bits above DEST_QPN -> EOPNOTSUPP (rxe)
  bool send_errors_to_sqe = false;    // IBTA C10-38: UC/UD send errors -> SQE; rxe -> ERR
  bool comm_est_event = false;        // COMM_EST when a packet arrives in RTR
  bool sqd_event_needs_notify = false;  // IBTA: SQ_DRAINED only with en_sqd_async_notify
  // rxe_req.c req_next_wqe: a fenced WQE waits until every earlier WQE completed
  // (wqe_index == consumer_index); IBTA only asks it to wait for earlier READ/ATOMICs.
  bool fence_waits_for_all = true;
  // rxe_queue_init: queues hold roundup_pow_of_two(n + 1) - 1 entries (SQ, RQ, SRQ, CQ);
  // rxe_qp_init_req: max_inline_data = max_send_sge * 16 = max(both) (one WQE buffer).
  bool rxe_queue_sizes = true;
  // IBTA: a CQ overrun leaves the CQ in error; rxe_cq_post just refuses while it is full
  // (and raises IB_EVENT_CQ_ERR each time).
  bool cq_overrun_is_sticky = false;
  // IBTA 11.6.3: affiliated async errors (QP_FATAL on a CQ overrun, QP_ACCESS_ERR and
  // QP_REQ_ERR at a responder that NAKs). rxe_qp_error() raises none of them.
  bool qp_error_events = false;
  // rxe_comp.c make_send_cqe: the requester's own CQE of a SEND_WITH_IMM or
  // RDMA_WRITE_WITH_IMM carries IB_WC_WITH_IMM (imm_data 0). IBTA 11.4.2.1 defines
  // WITH_IMM for receive completions only.
  bool send_wc_with_imm = true;
  // rdma-core providers/rxe has no receive doorbell: a receive posted while the QP is in
  // ERR is only written to the queue; the kernel flushes it when the responder task runs
  // next (rxe_qp_error on a modify to ERR, or an arriving packet). IBTA/R4: flushed at once.
  bool recv_in_err_flushed_at_once = false;
  // The next two default to IBTA's behaviour (a hardware profile need not set them); rxe sets
  // them in profile.cc.
  // rdma-core providers/rxe rxe_post_send writes each valid WR into the mapped send ring,
  // then its doorbell (post_send_db) fails below RTS: EINVAL with bad_wr NULL, yet the WRs
  // stay queued and run once in RTS (or are flushed by ERR, discarded by RESET). The post
  // then reports EINVAL with bad_wr = the first WR not queued. IBTA/R2: nothing is queued.
  bool post_send_below_rts_queues = false;
  // IBTA 11.6.3 / rdma-facts R6: a QP with an SRQ raises LAST_WQE_REACHED when it enters
  // ERR. rxe on Linux 6.1 raises none (rxe_qp_error has no event; measured in the rxe VM,
  // hw/README.md); later kernels add it.
  bool last_wqe_reached_event = true;
  // rdma-core providers/rxe validate_send_wr does not check the opcode against the QP type:
  // a READ or atomic on UC, or a WRITE/READ/atomic on UD, is accepted by ibv_post_send and
  // completes with IBV_WC_LOC_QP_OP_ERR when the kernel requester reaches it (rxe_req.c
  // next_opcode), moving the QP to ERR. Otherwise (default) the post refuses it: EINVAL.
  bool opcode_checked_by_requester = false;
  // Creating a PD, CQ, SRQ, QP or AH beyond the device's DeviceAttr max_*: rxe (Linux 6.1
  // rxe_pool.c __rxe_add_to_pool: num_elem > max_elem -> -EINVAL) EINVAL; an MR beyond
  // max_mr is ENOMEM on every device (6.1 rxe_verbs.c rxe_reg_user_mr: rxe_alloc() NULL).
  // A device whose verbs run into firmware limits (mlx5: MLX5_CMD_STAT_LIM_ERR) says ENOMEM.
  int over_limit_errno = EINVAL;
};


struct Profile {
  std::string name;
  std::string description;
  DeviceAttr device;  // name is filled in per device
  PortAttr port;
  Quirks quirks;
  Timing timing;
};

const Profile* FindProfile(const std::string& name);
std::vector<std::string> KnownProfileNames();

// Entries a queue of `requested` entries really holds on this device.
uint32_t QueueSlots(const Quirks& q, uint32_t requested);
// The QP caps the device grants for `requested` (what ibv_create_qp writes back).
QpCap GrantedCaps(const Quirks& q, const QpCap& requested);

// The ConnectX-6-like profiles (profile_cx6.cc).
Profile MakeCx6Profile();    // "cx6-100g": two 100 GbE NICs back to back
Profile MakeCx6DcProfile();  // "cx6-dc": the same NICs three switch hops apart

}  // namespace qptwin::model
