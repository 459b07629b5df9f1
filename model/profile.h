// Device profiles: capabilities, quirks and timing of a modelled NIC, as data.
//
// Contract:
//  1. A profile is plain data; the engine reads it and never branches on the profile name.
//  2. FindProfile() returns nullptr for an unknown name.
//  3. Timing: a message of n payload bytes is cut into ceil(n / path_mtu) packets (at least
//     one); each costs (payload + header_bytes) * 8 / link_gbps ns on the wire, plus
//     wire_latency_ns of propagation. The requester spends processing_ns before a message
//     leaves, the responder ack_processing_ns before its ACK/NAK/response leaves; with
//     serial_processing these costs queue on the device's one engine. Each port sends one
//     packet at a time (messages queue behind each other on the link).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "spec/backend.h"
#include "spec/vocabulary.h"

namespace qptwin::model {

struct Quirks {
  bool supports_uc = true;
  bool supports_ud = true;
  bool supports_xrc = false;          // rxe: EOPNOTSUPP (rxe_qp_chk_init)
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
};

struct Timing {
  double link_gbps = 10;           // line rate
  uint32_t header_bytes = 78;      // per packet: preamble/IFG 20, Eth 18, IPv4 20, UDP 8, BTH 12
  uint64_t wire_latency_ns = 500;  // propagation, one way
  uint64_t processing_ns = 2000;   // per message at the requester, before it leaves
  uint64_t ack_processing_ns = 500;  // at the responder, before its response leaves
  // A software device (rxe) handles one message at a time on its CPU; a hardware pipeline
  // overlaps the processing of consecutive messages.
  bool serial_processing = true;
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

// Ns on the wire for one packet with `payload` bytes.
uint64_t PacketWireNs(const Timing& t, uint32_t payload);
// Packets of a message of `len` bytes with path MTU `mtu_bytes` (at least 1).
uint32_t PacketCount(uint64_t len, uint32_t mtu_bytes);

}  // namespace qptwin::model
