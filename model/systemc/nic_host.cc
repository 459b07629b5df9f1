// The host interface of the SystemC NIC: MMIO (commands and doorbells), the DMA helper
// every block uses, and the CQE writer.
#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

#include "model/systemc/nic.h"

namespace qptwin::sc {

using sc_core::sc_time;
using sc_core::SC_ZERO_TIME;

Nic::Nic(sc_core::sc_module_name name, const NicConfig& config)
    : sc_module(name),
      mmio("mmio"),
      dma("dma"),
      net_out("net_out"),
      net_in("net_in"),
      config_(config),
      qps_(kMaxQps),
      doorbells_("doorbells"),
      sq_bells_(kMaxQps),
      tx_requests_("tx_requests", &tx_event_),
      tx_responses_("tx_responses", &tx_event_),
      requests_("requests"),
      responses_("responses"),
      cqes_("cqes"),
      d_(DelaysOf(config.timing)) {
  mmio.register_b_transport(this, &Nic::MmioTransport);
  net_in.bind(static_cast<NetIf&>(*this));
  // A quantum of 1 us: the requester runs ahead at most that far (tlm_quantumkeeper).
  if (tlm_utils::tlm_quantumkeeper::get_global_quantum() == SC_ZERO_TIME) {
    tlm_utils::tlm_quantumkeeper::set_global_quantum(sc_time(1, sc_core::SC_US));
  }
  qk_.reset();
  SC_HAS_PROCESS(Nic);
  SC_METHOD(HostInterface);
  SC_THREAD(Requester);
  SC_METHOD(PortTx);
  SC_THREAD(Responder);
  SC_THREAD(Completer);
  SC_THREAD(CqeWriter);
}

Nic::Delays Nic::DelaysOf(const model::Timing& t) {
  Delays d;
  d.doorbell = Ns(t.nic.doorbell_ns);
  d.pcie_read = Ns(t.nic.pcie_read_ns);
  d.wqe_bytes = BytesAt(t.nic.pcie_gbps, kWqeBytes);
  d.wqe_fetch = d.pcie_read + d.wqe_bytes;
  d.tx_latency = Ns(t.nic.tx_latency_ns);
  d.tx_pkt = Ns(t.nic.tx_pkt_ns);
  d.rx_latency = Ns(t.nic.rx_latency_ns);
  d.ack = Ns(t.nic.ack_ns);
  d.cqe = Ns(t.nic.cqe_ns);
  d.propagation = Ns(t.link.propagation_ns);
  return d;
}

sc_time Nic::ReadBytes(uint32_t len) {
  if (len != read_memo_len_) {
    read_memo_ = BytesAt(config_.timing.nic.pcie_gbps, len);
    read_memo_len_ = len;
  }
  return read_memo_;
}

void Nic::Trace(sc_core::sc_trace_file* tf, const std::vector<uint32_t>& qpns) {
  const std::string n = name();
  trace_link_ = true;
  sc_core::sc_trace(tf, link_busy_, n + ".link_busy");
  sc_core::sc_trace(tf, tx_occupancy_, n + ".tx_queue");
  for (uint32_t q : qpns) {
    const std::string p = n + ".qp" + std::to_string(q);
    sc_core::sc_trace(tf, qps_[q].traced_state, p + ".state");
    sc_core::sc_trace(tf, qps_[q].sq_occupancy, p + ".sq_occupancy");
    sc_core::sc_trace(tf, qps_[q].rq_occupancy, p + ".rq_occupancy");
  }
}

void Nic::MmioTransport(tlm::tlm_generic_payload& gp, sc_time& delay) {
  const uint64_t a = gp.get_address();
  const uint32_t len = gp.get_data_length();
  uint8_t* data = gp.get_data_ptr();
  gp.set_response_status(tlm::TLM_OK_RESPONSE);
  if ((len != 4 && len != 8) || a + len > kBarBytes || a % len) {
    gp.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
    return;
  }
  uint64_t v = 0;
  if (gp.is_write()) std::memcpy(&v, data, len);  // little-endian host (layout.h 1)
  if (a >= kRegDoorbell) {
    if (!gp.is_write()) {
      gp.set_response_status(tlm::TLM_COMMAND_ERROR_RESPONSE);
      return;
    }
    const uint32_t qpn = static_cast<uint32_t>((a - kRegDoorbell) / 8);
    const bool rq = (a - kRegDoorbell) % 8 == 4;
    // A posted write: the host goes on; the NIC sees it doorbell_ns later.
    const sc_time ready = sc_core::sc_time_stamp() + delay + d_.doorbell;
    if (rq) {
      doorbells_.Put({qpn, rq, static_cast<uint32_t>(v), ready});
    } else if (qpn < kMaxQps && qps_[qpn].exists) {
      sq_bells_[qpn].items.push_back({static_cast<uint32_t>(v), ready});
      Schedule(qps_[qpn], delay + d_.doorbell);
    }
    return;
  }
  if (a == kRegCmdOp && gp.is_write()) {
    cmd_status_ = Execute(static_cast<CmdOp>(v), delay);
  } else if (a == kRegCmdStatus && gp.is_read()) {
    v = cmd_status_;
  } else if (a >= kRegCmdArg0 && a < kRegCmdArg0 + 8 * kCmdArgs && len == 8) {
    uint64_t& arg = cmd_args_[(a - kRegCmdArg0) / 8];
    if (gp.is_write()) arg = v; else v = arg;
  } else {
    gp.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
    return;
  }
  if (gp.is_read()) std::memcpy(data, &v, len);
}

uint32_t Nic::Execute(CmdOp op, sc_time& delay) {
  const model::ControlTiming& ct = config_.timing.control;
  const uint64_t* a = cmd_args_;
  switch (op) {
    case CmdOp::kNop: return 0;
    case CmdOp::kCreateCq: {
      if (a[0] >= kMaxCqs || cqs_[a[0]].exists || a[2] == 0) return EINVAL;
      cqs_[a[0]] = Cq{true, Ring{a[1], static_cast<uint32_t>(a[2])}, 0};
      delay += Ns(ct.create_cq_ns);
      return 0;
    }
    case CmdOp::kCreateQp: {
      const uint32_t scq = static_cast<uint32_t>(a[6]), rcq = static_cast<uint32_t>(a[6] >> 32);
      const QpType type = static_cast<QpType>(a[1]);
      if (a[0] >= kMaxQps || qps_[a[0]].exists || a[3] == 0 || a[5] == 0 || scq >= kMaxCqs ||
          rcq >= kMaxCqs || !cqs_[scq].exists || !cqs_[rcq].exists ||
          (type != QpType::kRc && type != QpType::kUc && type != QpType::kUd)) {
        return EINVAL;
      }
      QpContext& qp = qps_[a[0]];
      qp = QpContext{};
      sq_bells_[a[0]] = SqBells{};
      qp.exists = true;
      qp.qpn = static_cast<uint32_t>(a[0]);
      qp.type = type;
      qp.sq = Ring{a[2], static_cast<uint32_t>(a[3])};
      qp.rq = Ring{a[4], static_cast<uint32_t>(a[5])};
      qp.send_cqn = scq;
      qp.recv_cqn = rcq;
      qp.pd = static_cast<uint32_t>(a[7]);
      delay += Ns(ct.create_qp_ns);
      return 0;
    }
    case CmdOp::kModifyQp: {
      if (a[0] >= kMaxQps || !qps_[a[0]].exists) return EINVAL;
      QpContext& qp = qps_[a[0]];
      ModifyArgs m;
      m.mask = static_cast<AttrMask>(a[1]);
      m.state = static_cast<QpState>(a[2]);
      m.dest_port = static_cast<uint32_t>(a[3]);
      m.dest_qpn = static_cast<uint32_t>(a[4]);
      m.sq_psn = static_cast<uint32_t>(a[5]);
      m.rq_psn = static_cast<uint32_t>(a[5] >> 32);
      m.access = static_cast<AccessFlags>(a[6]);
      m.qkey = static_cast<uint32_t>(a[7]);
      if (m.state > QpState::kErr) return EINVAL;
      const int rc = ApplyModify(qp, m);
      if (rc) return rc;
      delay += Ns(ct.modify_qp_ns);
      // ERR flushes (IBTA 10.3.1 / rxe_qp_error); RTS starts WQEs posted before it.
      if (qp.state == QpState::kErr || qp.state == QpState::kRts) Schedule(qp);
      return 0;
    }
    case CmdOp::kRegMr: {
      const int rc = keys_.Register(static_cast<uint32_t>(a[0]),
                                    Region{static_cast<uint32_t>(a[1]), a[2], a[3],
                                           static_cast<AccessFlags>(a[4])});
      if (rc == 0) delay += Ns(ct.reg_mr_ns + ct.reg_mr_page_ns * ((a[3] + 4095) / 4096));
      return rc;
    }
    case CmdOp::kDeregMr: return keys_.Deregister(static_cast<uint32_t>(a[0]));
    case CmdOp::kDestroyQp: {
      if (a[0] >= kMaxQps || !qps_[a[0]].exists) return EINVAL;
      qps_[a[0]] = QpContext{};
      sq_bells_[a[0]] = SqBells{};
      delay += Ns(ct.destroy_qp_ns);
      return 0;
    }
  }
  return EINVAL;
}

// An SC_METHOD: RQ doorbells in the order written, each acting doorbell_ns after its write
// (the responder sees a receive WQE exactly from then on).
void Nic::HostInterface() {
  Doorbell db;
  while (doorbells_.TryGet(&db)) {
    if (db.qpn >= kMaxQps || !qps_[db.qpn].exists) continue;
    QpContext& qp = qps_[db.qpn];
    qp.rq_occupancy += static_cast<int>(db.value - qp.rq_pi);
    qp.rq_pi = db.value;
    if (qp.state == QpState::kErr) Schedule(qp);
  }
  next_trigger(doorbells_.ready_event());
}

void Nic::Schedule(QpContext& qp, sc_time delay) {
  if (qp.scheduled) return;
  qp.scheduled = true;
  work_.push_back(qp.qpn);
  work_event_.notify(delay);  // an earlier pending notification stays (IEEE 1666 5.10.8)
}

void Nic::TakeSqBell(QpContext& qp) {
  SqBells& b = sq_bells_[qp.qpn];
  const SqBell bell = b.front();
  b.pop();
  b.acts = bell.ready;
  qp.sq_occupancy += static_cast<int>(bell.value - qp.sq_pi);
  qp.sq_pi = bell.value;
}

bool Nic::Dma(tlm::tlm_generic_payload& gp, tlm::tlm_command cmd, uint64_t addr, uint8_t* data,
              uint32_t len, sc_time cost, sc_time* local) {
  gp.set_command(cmd);
  gp.set_address(addr);
  gp.set_data_ptr(data);
  gp.set_data_length(len);
  gp.set_streaming_width(len);
  gp.set_byte_enable_ptr(nullptr);
  gp.set_dmi_allowed(false);
  gp.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
  sc_time delay = *local + cost;
  dma->b_transport(gp, delay);
  *local = delay;
  return gp.is_response_ok();
}

bool Nic::DmaNow(tlm::tlm_generic_payload& gp, tlm::tlm_command cmd, uint64_t addr,
                 uint8_t* data, uint32_t len, sc_time cost) {
  sc_time local = SC_ZERO_TIME;
  const bool ok = Dma(gp, cmd, addr, data, len, cost, &local);
  if (local != SC_ZERO_TIME) wait(local);
  return ok;
}

void Nic::WriteCqe(uint32_t cqn, const Cqe& cqe, sc_time done) {
  const sc_time at = std::max(done, sc_core::sc_time_stamp());
  cqes_.Put(CqeJob{cqn, cqe, at + d_.cqe});
}

// Issues each CQE's write at its time (never annotated ahead: a host polling its CQ never
// sees a CQE early), in order; the owner bit by the CQ's producer index.
void Nic::CqeWriter() {
  for (;;) {
    CqeJob job;
    while (!cqes_.TryGet(&job)) wait(cqes_.ready_event());
    Cq& cq = cqs_[job.cqn];
    if (!cq.exists) continue;
    const uint32_t slot = cq.pi++;
    job.cqe.owner = OwnerOf(slot, cq.ring.entries);
    uint8_t buf[kCqeBytes];
    EncodeCqe(job.cqe, buf);
    if (!DmaNow(cqe_gp_, tlm::TLM_WRITE_COMMAND, cq.ring.SlotAddr(slot, kCqeBytes), buf, kCqeBytes,
                SC_ZERO_TIME)) {
      ++cqe_write_errors_;
    }
  }
}

void Nic::Transmit(NetPacket np) {
  ++tx_occupancy_;
  (engine::IsRequest(np.pkt->kind) ? tx_requests_ : tx_responses_).Put(std::move(np));
}

}  // namespace qptwin::sc
