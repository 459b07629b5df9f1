// The port, the responder and the completer of the SystemC NIC.
#include <algorithm>
#include <memory>
#include <utility>

#include "model/systemc/nic.h"
#include "model/wire.h"

namespace qptwin::sc {

using engine::NakCode;
using engine::Packet;
using engine::PacketKind;
using sc_core::sc_time;
using sc_core::sc_time_stamp;

namespace {

model::WireOp WireOpOf(PacketKind k) {
  switch (k) {
    case PacketKind::kSend: return model::WireOp::kSend;
    case PacketKind::kWrite: return model::WireOp::kWrite;
    case PacketKind::kReadReq: return model::WireOp::kReadReq;
    case PacketKind::kAtomic: return model::WireOp::kAtomic;
    case PacketKind::kReadResp: return model::WireOp::kReadResp;
    case PacketKind::kAtomicResp: return model::WireOp::kAtomicResp;
    default: return model::WireOp::kAck;
  }
}

// A write's data pointer: IEEE 1666-2011 14.13 (data pointer attribute): "the target
// shall not modify the contents of the data array" of a write command.
uint8_t* WriteData(const std::vector<uint8_t>& v) { return const_cast<uint8_t*>(v.data()); }
uint8_t* WriteData(const engine::Payload& v) { return const_cast<uint8_t*>(v.data()); }

}  // namespace

// An SC_METHOD: one message at a time on the cable, each for its wire bytes (wire.h) at the
// link rate; responses first when both queues have a due packet.
void Nic::PortTx() {
  const model::LinkTiming& link = config_.timing.link;
  const sc_time now = sc_time_stamp();
  NetPacket np;
  while (tx_responses_.TryGetBefore(&np, now) || tx_requests_.TryGetBefore(&np, now)) {
    --tx_occupancy_;
    const Packet& p = *np.pkt;
    WireMemo& m = wire_memo_[static_cast<size_t>(p.kind)];
    if (m.bytes != p.data.size() || m.imm != p.has_imm || p.transport == QpType::kUd) {
      m = WireMemo{p.data.size(), p.has_imm,
                   Ps(model::WireOf(link, WireOpOf(p.kind), p.data.size(), config_.mtu, p.has_imm,
                                    p.transport == QpType::kUd).wire_ps)};
      if (p.transport == QpType::kUd) m.bytes = ~size_t{0};  // UD's DETH: not memoized
    }
    np.wire = m.wire;
    link_free_ = std::max(link_free_, now) + np.wire;
    np.ready = link_free_ + d_.propagation;
    ++packets_sent_;
    net_out->Deliver(np);
  }
  tx_responses_.ArmHead();  // either queue's next head (one shared event: the earlier wins)
  tx_requests_.ArmHead();
  const bool busy = link_free_ > now;
  if (trace_link_) link_busy_.write(busy);
  if (trace_link_ && busy) {
    next_trigger(link_free_ - now, tx_event_);
  } else {
    next_trigger(tx_event_);
  }
}

void Nic::Deliver(const NetPacket& in) {
  NetPacket np = in;
  np.ready += d_.rx_latency;
  (engine::IsRequest(np.pkt->kind) ? requests_ : responses_).Put(std::move(np));
}

// Runs ahead of SystemC time by up to the global quantum (as the requester does): a request
// delivered early (net.h: it carries the time its last byte is in) is taken before it is
// due; a clean WRITE executes at its own time by annotation, anything else (receive WQEs,
// READs, errors) waits until it is due.
void Nic::Responder() {
  for (;;) {
    NetPacket np;
    while (!requests_.TryGetBefore(
        &np, sc_time_stamp() + tlm_utils::tlm_quantumkeeper::get_global_quantum())) {
      requests_.ArmHead();
      wait(requests_.ready_event());
    }
    const Packet& p = *np.pkt;
    if (p.dst_qpn >= kMaxQps) continue;
    QpContext& qp = qps_[p.dst_qpn];
    if (np.ready > sc_time_stamp()) {
      if (RespondAhead(qp, np)) continue;
      wait(np.ready - sc_time_stamp());
    }
    // rxe_recv.c check_type_state: a packet for another transport or a QP that does not
    // receive (before RTR, or in ERR) is dropped.
    if (!qp.exists || qp.type != p.transport ||
        (qp.state != QpState::kRtr && qp.state != QpState::kRts)) {
      continue;
    }
    Respond(qp, p);
  }
}

void Nic::Respond(QpContext& qp, const Packet& p) {
  const bool rc = qp.type == QpType::kRc;
  if (qp.type == QpType::kUd && p.qkey != qp.qkey) return;  // IBTA C10-15: drop
  if (qp.type != QpType::kUd && p.psn != qp.rq_psn) {
    // No loss in this model: only a wrong peer setup gets here (IBTA 9.7.5.1.1: NAK).
    if (rc && engine::PsnDiff(p.psn, qp.rq_psn) > 0) {
      Reply(qp, p, PacketKind::kNak, NakCode::kPsnSeqErr, {}, sc_time_stamp());
    }
    return;
  }
  NakCode nak = CheckRemote(qp, keys_, p);
  Cqe cqe;
  bool consumed = false;
  std::vector<uint8_t> out;
  if (nak == NakCode::kNone && p.kind == PacketKind::kWrite && !p.data.empty()) {
    if (!DmaNow(responder_gp_, tlm::TLM_WRITE_COMMAND, p.remote_addr, WriteData(p.data),
                static_cast<uint32_t>(p.data.size()), sc_core::SC_ZERO_TIME)) {
      nak = NakCode::kRemoteOp;
    }
  }
  if (nak == NakCode::kNone && p.kind == PacketKind::kReadReq && p.length > 0) {
    out.resize(p.length);
    if (!DmaNow(responder_gp_, tlm::TLM_READ_COMMAND, p.remote_addr, out.data(), p.length,
                d_.pcie_read + ReadBytes(p.length))) {
      nak = NakCode::kRemoteOp;
    }
  }
  if (nak == NakCode::kNone && (p.kind == PacketKind::kSend || p.has_imm)) {
    std::vector<uint8_t> bytes;
    if (qp.type == QpType::kUd) bytes = engine::NetworkHeader(p, p.sgid);
    if (p.kind == PacketKind::kSend) bytes.insert(bytes.end(), p.data.begin(), p.data.end());
    nak = Receive(qp, bytes, &cqe);
    consumed = nak != NakCode::kRnr;
    cqe.byte_len = static_cast<uint32_t>(p.kind == PacketKind::kSend ? bytes.size() : p.data.size());
    cqe.opcode = p.kind == PacketKind::kSend ? WcOpcode::kRecv : WcOpcode::kRecvRdmaWithImm;
    cqe.src_qp = p.src_qpn;
    if (p.has_imm) {
      cqe.imm = p.imm;
      cqe.wc_flags |= wc_flag::kWithImm;
    }
  }
  if (nak == NakCode::kRnr) {
    // IBTA 9.7.5.2.8: no receive WQE -> RNR NAK (RC); UC and UD drop the message.
    if (rc) Reply(qp, p, PacketKind::kNak, nak, {}, sc_time_stamp());
    return;
  }
  if (nak != NakCode::kNone && !rc) {
    // UC/UD: no NAK; a consumed receive completes with its error (rxe: class D errors).
    if (consumed) WriteCqe(qp.recv_cqn, cqe);
    return;
  }
  if (nak == NakCode::kNone) qp.rq_psn = engine::PsnAdd(qp.rq_psn, p.npkts);
  if (rc) {
    const PacketKind kind = nak != NakCode::kNone ? PacketKind::kNak
                            : p.kind == PacketKind::kReadReq ? PacketKind::kReadResp
                                                             : PacketKind::kAck;
    Reply(qp, p, kind, nak, std::move(out), sc_time_stamp());
  }
  if (consumed) WriteCqe(qp.recv_cqn, cqe);
  // rxe_resp.c do_class_ac_error: a class A/C error (access, invalid request, remote
  // operation) moves the responder's QP to ERR too.
  if (nak != NakCode::kNone) ToError(qp);
}

bool Nic::RespondAhead(QpContext& qp, const NetPacket& np) {
  const Packet& p = *np.pkt;
  if (!qp.exists || qp.type != p.transport || qp.type == QpType::kUd ||
      (qp.state != QpState::kRtr && qp.state != QpState::kRts) ||
      p.kind != PacketKind::kWrite || p.has_imm || p.psn != qp.rq_psn ||
      CheckRemote(qp, keys_, p) != NakCode::kNone) {
    return false;
  }
  const bool rc = qp.type == QpType::kRc;
  sc_time local = np.ready - sc_time_stamp();
  if (!p.data.empty() &&
      !Dma(responder_gp_, tlm::TLM_WRITE_COMMAND, p.remote_addr, WriteData(p.data),
           static_cast<uint32_t>(p.data.size()), sc_core::SC_ZERO_TIME, &local)) {
    // The exact path's remote operation error, at its time (Respond).
    wait(local);
    if (rc) {
      Reply(qp, p, PacketKind::kNak, NakCode::kRemoteOp, {}, sc_time_stamp());
      ToError(qp);
    }
    return true;
  }
  qp.rq_psn = engine::PsnAdd(qp.rq_psn, p.npkts);
  if (rc) Reply(qp, p, PacketKind::kAck, NakCode::kNone, {}, sc_time_stamp() + local);
  return true;
}

NakCode Nic::Receive(QpContext& qp, const std::vector<uint8_t>& bytes, Cqe* cqe) {
  if (qp.rq_ci == qp.rq_pi) return NakCode::kRnr;
  uint8_t raw[kWqeBytes];
  const bool fetched = DmaNow(responder_gp_, tlm::TLM_READ_COMMAND, qp.rq.SlotAddr(qp.rq_ci, kWqeBytes), raw,
                              kWqeBytes, d_.wqe_fetch);
  ++qp.rq_ci;
  --qp.rq_occupancy;
  const Wqe w = fetched ? DecodeWqe(raw) : Wqe{};
  cqe->wr_id = w.wr_id;
  cqe->qpn = qp.qpn;
  if (!fetched) {
    cqe->status = WcStatus::kLocQpOpErr;
    return NakCode::kRemoteOp;
  }
  if (bytes.size() > w.length) {
    cqe->status = WcStatus::kLocLenErr;  // rxe: RESPST_ERR_LENGTH, NAK invalid request
    return NakCode::kInvalidRequest;
  }
  if (!bytes.empty()) {
    if (!keys_.Check(w.lkey, qp.pd, w.addr, bytes.size(), access::kLocalWrite) ||
        !DmaNow(responder_gp_, tlm::TLM_WRITE_COMMAND, w.addr, WriteData(bytes),
                static_cast<uint32_t>(bytes.size()), sc_core::SC_ZERO_TIME)) {
      cqe->status = WcStatus::kLocProtErr;
      return NakCode::kRemoteOp;
    }
  }
  cqe->status = WcStatus::kSuccess;
  return NakCode::kNone;
}

void Nic::Reply(const QpContext& qp, const Packet& req, PacketKind kind, NakCode nak,
                std::vector<uint8_t> data, sc_time at) {
  std::shared_ptr<Packet> pkt = NewPacket();
  Packet& r = *pkt;
  r.kind = kind;
  r.transport = qp.type;
  r.src_nic = static_cast<int>(config_.port_id);
  r.dst_nic = req.src_nic;
  r.src_qpn = qp.qpn;
  r.dst_qpn = req.src_qpn;
  r.nak = nak;
  // An ACK names the request's last PSN, a NAK the PSN expected (IBTA 9.7.5.1.1).
  r.psn = nak != NakCode::kNone ? qp.rq_psn : engine::PsnAdd(req.psn, req.npkts - 1);
  if (kind == PacketKind::kReadResp) r.psn = req.psn;
  r.npkts = kind == PacketKind::kReadResp ? req.npkts : 1;
  r.data.assign(data.data(), data.data() + data.size());
  // ack_ns after the request is processed (timing.h contract 2).
  Transmit(NetPacket{std::move(pkt), at + d_.ack, sc_core::SC_ZERO_TIME});
}

// Runs ahead as the responder does: an ACK completes at its own time by annotation (its
// CQEs are written cqe_ns after it, by the CQE writer at their time); NAKs and READ
// responses wait until they are due.
void Nic::Completer() {
  for (;;) {
    NetPacket np;
    while (!responses_.TryGetBefore(
        &np, sc_time_stamp() + tlm_utils::tlm_quantumkeeper::get_global_quantum())) {
      responses_.ArmHead();
      wait(responses_.ready_event());
    }
    const Packet& p = *np.pkt;
    if (np.ready > sc_time_stamp() && p.kind != PacketKind::kAck) {
      wait(np.ready - sc_time_stamp());
    }
    if (p.dst_qpn >= kMaxQps) continue;
    QpContext& qp = qps_[p.dst_qpn];
    // ERR: the requester flushes what is outstanding; late responses are dropped.
    if (!qp.exists || qp.type != QpType::kRc || qp.state == QpState::kErr ||
        qp.state == QpState::kReset) {
      continue;
    }
    // The responses acknowledge in order: every send/write up to the PSN (IBTA 9.7.5.1.2).
    const uint32_t last = p.kind == PacketKind::kNak ? engine::PsnAdd(p.psn, 0xffffff)
                          : engine::PsnAdd(p.psn, p.npkts - 1);
    while (!qp.outstanding.empty() && qp.outstanding.front().opcode != WrOpcode::kRdmaRead &&
           engine::PsnDiff(qp.outstanding.front().last_psn, last) <= 0) {
      const Pending done = qp.outstanding.front();
      qp.outstanding.pop_front();
      --qp.sq_occupancy;
      if (!done.signaled) continue;
      Cqe c;
      c.wr_id = done.wr_id;
      c.opcode = SendWcOpcode(done.opcode);
      c.byte_len = done.length;
      c.qpn = qp.qpn;
      WriteCqe(qp.send_cqn, c, np.ready);
    }
    if (p.kind == PacketKind::kAck || qp.outstanding.empty()) continue;
    const Pending done = qp.outstanding.front();
    qp.outstanding.pop_front();
    --qp.sq_occupancy;
    Cqe c;
    c.wr_id = done.wr_id;
    c.opcode = SendWcOpcode(done.opcode);
    c.byte_len = done.length;
    c.qpn = qp.qpn;
    c.status = StatusOfNak(p.nak);
    if (p.kind == PacketKind::kReadResp && !p.data.empty()) {
      if (!DmaNow(completer_gp_, tlm::TLM_WRITE_COMMAND, done.local_addr, WriteData(p.data),
                  static_cast<uint32_t>(p.data.size()), sc_core::SC_ZERO_TIME)) {
        c.status = WcStatus::kLocProtErr;
      }
    }
    // An error completes always (IBTA 10.7.3.1) and moves the QP to ERR, which flushes.
    if (c.status != WcStatus::kSuccess || done.signaled) WriteCqe(qp.send_cqn, c);
    if (c.status != WcStatus::kSuccess) ToError(qp);
  }
}

}  // namespace qptwin::sc
