// The requester of the SystemC NIC: takes doorbelled WQEs from host memory, reads their
// payload, builds the packet and hands it to the port; and flushes the queues of a QP in ERR.
// It runs ahead of SystemC time in a tlm_quantumkeeper: each packet carries the absolute
// time it is ready (net.h contract 1), so running ahead changes no timing. Blocking for
// work, it keeps its own time (requester_resume_) instead of waiting it out: one activation
// per doorbell of an idle QP.
#include <memory>

#include "model/systemc/nic.h"
#include "model/wire.h"

namespace qptwin::sc {

using engine::Packet;
using sc_core::sc_time;

void Nic::Requester() {
  for (;;) {
    requester_resume_ = qk_.get_current_time();
    QpContext& qp = qps_[sq_work_.read()];
    // Busy until requester_resume_: the offset from the new now (the quantum keeper's time
    // is relative to sc_time_stamp()).
    qk_.reset();
    if (requester_resume_ > sc_core::sc_time_stamp()) {
      qk_.set(requester_resume_ - sc_core::sc_time_stamp());
    }
    while (qp.exists) {
      if (qp.state == QpState::kErr) {
        Flush(qp);
        break;
      }
      // Only RTS (and SQD's drain, not modelled) sends; WQEs posted earlier wait for RTS.
      if (qp.state != QpState::kRts || qp.sq_ci == qp.sq_pi) break;
      SendOne(qp);
      if (qk_.need_sync()) qk_.sync();
    }
    qp.scheduled = false;
  }
}

bool Nic::SendOne(QpContext& qp) {
  const model::NicTiming& nt = config_.timing.nic;
  sc_time local = qk_.get_local_time();
  uint8_t raw[kWqeBytes];
  const bool fetched = Dma(requester_gp_, tlm::TLM_READ_COMMAND, qp.sq.SlotAddr(qp.sq_ci, kWqeBytes), raw,
                           kWqeBytes, Ns(nt.pcie_read_ns) + BytesAt(nt.pcie_gbps, kWqeBytes),
                           &local);
  qk_.set(local);
  ++qp.sq_ci;
  Wqe w = fetched ? DecodeWqe(raw) : Wqe{};
  if (!fetched || !OpcodeAllowed(qp.type, w.opcode)) {
    CompleteLocal(qp, w, WcStatus::kLocQpOpErr, true);
    ToError(qp);
    return false;
  }
  const bool read = w.opcode == WrOpcode::kRdmaRead;
  std::shared_ptr<Packet> pkt = NewPacket();
  if (w.length > 0) {
    // A READ's local buffer needs LOCAL_WRITE; a gather needs only a valid key of the PD.
    if (!keys_.Check(w.lkey, qp.pd, w.addr, w.length, read ? access::kLocalWrite : 0) ||
        (qp.type == QpType::kUd && w.length > config_.mtu)) {
      CompleteLocal(qp, w, qp.type == QpType::kUd && w.length > config_.mtu
                               ? WcStatus::kLocLenErr : WcStatus::kLocProtErr, true);
      ToError(qp);
      return false;
    }
    if (!read) {
      pkt->data.resize(w.length);  // NewPacket's data is empty, its capacity kept
      const bool ok = Dma(requester_gp_, tlm::TLM_READ_COMMAND, w.addr, pkt->data.data(), w.length,
                          Ns(nt.pcie_read_ns) + BytesAt(nt.pcie_gbps, w.length), &local);
      qk_.set(local);
      if (!ok) {
        CompleteLocal(qp, w, WcStatus::kLocProtErr, true);
        ToError(qp);
        return false;
      }
    }
  }
  Packet& p = *pkt;
  p.kind = KindOf(w.opcode);
  p.transport = qp.type;
  p.src_nic = static_cast<int>(config_.port_id);
  p.dst_nic = static_cast<int>(qp.type == QpType::kUd ? w.ud_port : qp.dest_port);
  p.src_qpn = qp.qpn;
  p.dst_qpn = qp.type == QpType::kUd ? w.ud_qpn : qp.dest_qpn;
  p.qkey = w.ud_qkey;
  p.psn = qp.sq_psn;
  p.npkts = model::PacketCount(w.length, config_.mtu);
  p.op = w.opcode;
  p.solicited = w.flags & send_flag::kSolicited;
  p.has_imm = w.opcode == WrOpcode::kSendWithImm || w.opcode == WrOpcode::kRdmaWriteWithImm;
  p.imm = w.imm;
  p.remote_addr = w.remote_addr;
  p.rkey = w.rkey;
  p.length = w.length;
  qp.sq_psn = engine::PsnAdd(qp.sq_psn, p.npkts);
  qk_.inc(Ns(nt.tx_latency_ns + nt.tx_pkt_ns * p.npkts));
  if (qp.type == QpType::kRc) {
    qp.outstanding.push_back(Pending{w.wr_id, w.opcode, (w.flags & send_flag::kSignaled) != 0,
                                     w.length, w.addr, engine::PsnAdd(p.psn, p.npkts - 1)});
  }
  Transmit(NetPacket{pkt, qk_.get_current_time(), sc_core::SC_ZERO_TIME});
  // UC and UD complete once sent (IBTA 9.8.3 / 9.8.4: no acknowledgement).
  if (qp.type != QpType::kRc) CompleteLocal(qp, w, WcStatus::kSuccess, false);
  return true;
}

// A send WQE's completion from the requester: errors always (IBTA 10.7.3.1), success only
// when signaled.
// Packets no hop holds any more are reused (the hot path allocates nothing per message).
std::shared_ptr<Packet> Nic::NewPacket() {
  for (size_t tries = 0; tries < packet_pool_.size(); ++tries) {
    std::shared_ptr<Packet>& p = packet_pool_[pool_cursor_];
    pool_cursor_ = (pool_cursor_ + 1) % packet_pool_.size();
    if (p.use_count() == 1) {
      std::vector<uint8_t> data = std::move(p->data);
      *p = Packet{};
      data.clear();
      p->data = std::move(data);
      return p;
    }
  }
  auto p = std::make_shared<Packet>();
  if (packet_pool_.size() < kPacketPool) packet_pool_.push_back(p);
  return p;
}

void Nic::CompleteLocal(QpContext& qp, const Wqe& w, WcStatus s, bool always) {
  --qp.sq_occupancy;
  if (!always && !(w.flags & send_flag::kSignaled)) return;
  qk_.sync();
  Cqe c;
  c.wr_id = w.wr_id;
  c.status = s;
  c.opcode = SendWcOpcode(w.opcode);
  c.byte_len = w.length;
  c.qpn = qp.qpn;
  WriteCqe(qp.send_cqn, c);
}

void Nic::ToError(QpContext& qp) {
  SetState(qp, QpState::kErr);
  Schedule(qp);
}

// IBTA 10.3.1 / rxe_qp_error: in ERR every outstanding and posted WQE of both queues
// completes with kWrFlushErr, in order; WQEs posted meanwhile are flushed too.
void Nic::Flush(QpContext& qp) {
  qk_.sync();
  const model::NicTiming& nt = config_.timing.nic;
  const sc_time fetch = Ns(nt.pcie_read_ns) + BytesAt(nt.pcie_gbps, kWqeBytes);
  while (qp.exists && qp.state == QpState::kErr &&
         (!qp.outstanding.empty() || qp.sq_ci != qp.sq_pi || qp.rq_ci != qp.rq_pi)) {
    Cqe c;
    c.status = WcStatus::kWrFlushErr;
    c.qpn = qp.qpn;
    uint32_t cqn = qp.send_cqn;
    if (!qp.outstanding.empty()) {
      c.wr_id = qp.outstanding.front().wr_id;
      c.opcode = SendWcOpcode(qp.outstanding.front().opcode);
      qp.outstanding.pop_front();
      --qp.sq_occupancy;
    } else {
      const bool sq = qp.sq_ci != qp.sq_pi;
      const Ring& ring = sq ? qp.sq : qp.rq;
      uint32_t& ci = sq ? qp.sq_ci : qp.rq_ci;
      uint8_t raw[kWqeBytes];
      const bool ok = DmaNow(requester_gp_, tlm::TLM_READ_COMMAND, ring.SlotAddr(ci, kWqeBytes), raw,
                             kWqeBytes, fetch);
      ++ci;
      const Wqe w = ok ? DecodeWqe(raw) : Wqe{};
      c.wr_id = w.wr_id;
      c.opcode = sq ? SendWcOpcode(w.opcode) : WcOpcode::kRecv;
      if (sq) {
        --qp.sq_occupancy;
      } else {
        --qp.rq_occupancy;
        cqn = qp.recv_cqn;
      }
    }
    WriteCqe(cqn, c);
  }
}

}  // namespace qptwin::sc
