#include "model/profile.h"

#include <algorithm>

namespace qptwin::model {
namespace {

// Linux Soft-RoCE: drivers/infiniband/sw/rxe/rxe_param.h (rxe_device_param, rxe_port_param).
Profile MakeRxe() {
  Profile p;
  p.name = "rxe";
  p.description = "Linux Soft-RoCE (rxe): RoCE v2, RC/UC/UD, no SQE, active MTU 1024";
  DeviceAttr& d = p.device;
  d.max_mr_size = ~0ull;      // RXE_MAX_MR_SIZE
  d.vendor_id = 0;            // RXE_VENDOR_ID
  d.vendor_part_id = 0;
  d.max_qp = 0x10000;         // RXE_MAX_QP
  d.max_qp_wr = 0x4000;       // RXE_MAX_QP_WR
  d.max_sge = 32;             // RXE_MAX_SGE
  d.max_sge_rd = 32;
  d.max_cq = 16384;           // RXE_MAX_CQ
  d.max_cqe = (1 << 15) - 1;  // (1 << RXE_MAX_LOG_CQE) - 1
  d.max_mr = 256 * 1024;      // RXE_MAX_MR
  d.max_pd = 0x7ffc;          // RXE_MAX_PD
  d.max_ah = 100;             // RXE_MAX_AH
  d.max_qp_rd_atom = 128;     // RXE_MAX_QP_RD_ATOM
  d.max_qp_init_rd_atom = 128;
  d.max_srq = 960;            // RXE_MAX_SRQ
  d.max_srq_wr = 0x4000;
  d.max_srq_sge = 27;         // RXE_MAX_SRQ_SGE
  d.max_inline_data = 400;    // RXE_MAX_INLINE_DATA
  d.max_pkeys = 64;           // RXE_MAX_PKEYS
  d.atomic_cap = AtomicCap::kHca;
  d.phys_port_cnt = 1;        // RXE_NUM_PORT
  PortAttr& port = p.port;
  port.state = PortState::kActive;
  port.max_mtu = Mtu::k4096;  // RXE_PORT_INFO_MTU_CAP
  port.active_mtu = Mtu::k1024;  // eth_mtu_int_to_enum(1500)
  port.gid_tbl_len = 1024;    // RXE_PORT_GID_TBL_LEN
  port.max_msg_sz = 0x800000;  // RXE_PORT_MAX_MSG_SZ
  port.pkey_tbl_len = 64;     // RXE_PORT_PKEY_TBL_LEN
  port.lid = 0;               // RoCE: no LIDs
  port.active_width = 1;      // IB_WIDTH_1X
  port.active_speed = 1;
  port.link_layer = LinkLayer::kEthernet;
  p.quirks = Quirks{};
  p.quirks.post_send_below_rts_queues = true;  // providers/rxe: ring written before the doorbell
  p.quirks.opcode_checked_by_requester = true;  // providers/rxe: no opcode/type check at post
  p.quirks.last_wqe_reached_event = false;     // kernel 6.1 rxe_qp_error: no event
  // Soft-RoCE is a software device: per-message CPU work dominates. Timing is NOT claimed
  // for rxe (it depends on the host CPU); these values keep scenarios' times readable.
  p.timing.link = LinkTiming{WireFormat::kRoceV2, 10, 500, 0, 0};
  p.timing.nic.tx_latency_ns = 2000;  // rxe_requester + rxe_xmit_packet on a CPU
  p.timing.nic.ack_ns = 500;          // rxe_responder -> send_ack
  p.timing.nic.serial_processing = true;
  // Control verbs are system calls into the rxe driver (ib_uverbs): estimates of the order
  // measured for software verbs (a few us per command, pinning pages for reg_mr).
  p.timing.control = ControlTiming{5'000, 10'000, 3'000, 5'000, 5'000, 250};
  return p;
}

// IBTA behaviour on an InfiniBand port: SQE for UC/UD send errors, XRC (IBTA 9.8),
// COMM_EST, a 100 Gb/s link.
Profile MakeIbta() {
  Profile p = MakeRxe();
  p.name = "ibta";
  p.description = "IBTA reference behaviour: InfiniBand link, SQE for UC/UD send errors";
  p.device.vendor_id = 0x1234;
  p.device.max_inline_data = 256;
  p.port.active_mtu = Mtu::k4096;
  p.port.link_layer = LinkLayer::kInfiniBand;
  p.port.lid = 1;  // the device index is added per device
  p.port.gid_tbl_len = 16;
  p.quirks.supports_xrc = true;  // IBTA 9.8: XRC_SEND/XRC_RECV, XRC SRQs and domains
  p.quirks.reject_extended_mask = false;
  p.quirks.send_errors_to_sqe = true;
  p.quirks.comm_est_event = true;
  p.quirks.sqd_event_needs_notify = true;
  p.quirks.rxe_queue_sizes = false;
  p.quirks.fence_waits_for_all = false;
  p.quirks.cq_overrun_is_sticky = true;
  p.quirks.qp_error_events = true;
  p.quirks.send_wc_with_imm = false;
  p.quirks.recv_in_err_flushed_at_once = true;
  p.quirks.post_send_below_rts_queues = false;
  p.quirks.last_wqe_reached_event = true;
  p.quirks.opcode_checked_by_requester = false;
  // An EDR-like 4x link (100 Gb/s of data after 64b/66b), timing illustrative only.
  p.timing = Timing{};
  p.timing.link = LinkTiming{WireFormat::kInfiniBand, 100, 300, 0, 0};
  p.timing.nic.tx_latency_ns = 300;
  p.timing.nic.ack_ns = 100;
  p.timing.nic.serial_processing = false;
  return p;
}

const std::vector<Profile>& AllProfiles() {
  static const std::vector<Profile> kProfiles = {MakeRxe(), MakeIbta(), MakeCx6Profile(),
                                                 MakeCx6DcProfile()};
  return kProfiles;
}

}  // namespace

const Profile* FindProfile(const std::string& name) {
  for (const Profile& p : AllProfiles()) {
    if (EqualsIgnoreCase(p.name, name)) return &p;
  }
  return nullptr;
}

std::vector<std::string> KnownProfileNames() {
  std::vector<std::string> out;
  for (const Profile& p : AllProfiles()) out.push_back(p.name);
  return out;
}


uint32_t QueueSlots(const Quirks& q, uint32_t requested) {
  if (!q.rxe_queue_sizes) return requested;
  uint64_t slots = 1;
  while (slots < uint64_t{requested} + 1) slots <<= 1;
  return static_cast<uint32_t>(slots - 1);
}

QpCap GrantedCaps(const Quirks& q, const QpCap& requested) {
  QpCap c = requested;
  c.max_send_wr = QueueSlots(q, c.max_send_wr);
  c.max_recv_wr = QueueSlots(q, c.max_recv_wr);
  if (q.rxe_queue_sizes) {
    constexpr uint32_t kSgeBytes = 16;  // sizeof(struct ib_sge)
    uint32_t wqe = std::max(c.max_send_sge * kSgeBytes, c.max_inline_data);
    c.max_send_sge = wqe / kSgeBytes;
    c.max_inline_data = wqe;
  }
  return c;
}


}  // namespace qptwin::model
