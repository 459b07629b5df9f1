// The requester of the SystemC NIC: takes doorbelled WQEs from host memory, reads their
// payload, builds the packet and hands it to the port; and flushes the queues of a QP in ERR.
// Pipelined as a NIC's send path is (timing.h contracts 2-3): the next WQE's fetch is issued
// while the previous WQE's reads are in flight; the DMA read channel is busy for each read's
// bytes at pcie_gbps and the send engine tx_pkt_ns per packet. The process runs ahead of
// SystemC time (a tlm_quantumkeeper bounds how far): each DMA is issued at its own time by
// annotation and each packet carries the time it is ready (net.h contract 1).
#include <algorithm>
#include <memory>
#include <utility>

#include "model/systemc/nic.h"
#include "model/wire.h"

namespace qptwin::sc {

using engine::Packet;
using sc_core::sc_time;

// When the QP's next WQE may start: its next doorbell's time if it waits for one, else now.
sc_time Nic::WorkDue(uint32_t qpn) const {
  const QpContext& qp = qps_[qpn];
  const SqBells& b = sq_bells_[qpn];
  if (qp.exists && qp.state == QpState::kRts && qp.sq_ci == qp.sq_pi && !b.empty()) {
    return b.front().ready;
  }
  return sc_core::SC_ZERO_TIME;
}

// The listed QP that is due first (ties: the one listed first), moved to the list's head.
sc_time Nic::EarliestWork() {
  size_t best = work_head_;
  sc_time due = WorkDue(work_[best]);
  for (size_t i = work_head_ + 1; i < work_.size() && due != sc_core::SC_ZERO_TIME; ++i) {
    const sc_time d = WorkDue(work_[i]);
    if (d < due) due = d, best = i;
  }
  std::swap(work_[work_head_], work_[best]);
  return due;
}

void Nic::Requester() {
  for (;;) {
    while (work_head_ == work_.size()) wait(work_event_);
    EarliestWork();
    const uint32_t qpn = work_[work_head_];
    if (++work_head_ == work_.size()) work_.clear(), work_head_ = 0;
    QpContext& qp = qps_[qpn];
    qk_.reset();
    bool yielded = false;
    while (qp.exists) {
      if (qp.state == QpState::kErr) {
        Flush(qp);
        break;
      }
      // Only RTS (and SQD's drain, not modelled) sends; WQEs posted earlier wait for RTS.
      if (qp.state != QpState::kRts) break;
      if (qp.sq_ci == qp.sq_pi) {
        if (sq_bells_[qpn].empty()) break;
        // Another QP's work that is due before this doorbell acts goes first.
        if (work_head_ != work_.size() && EarliestWork() < sq_bells_[qpn].front().ready) {
          yielded = true;
          break;
        }
        TakeSqBell(qp);
        // A doorbell beyond the quantum (a host far ahead): wait until it acts.
        const sc_time acts = sq_bells_[qpn].acts;
        if (acts > sc_core::sc_time_stamp() + tlm_utils::tlm_quantumkeeper::get_global_quantum()) {
          qk_.sync();
          if (acts > sc_core::sc_time_stamp()) wait(acts - sc_core::sc_time_stamp());
        }
        continue;
      }
      SendOne(qp);
      const sc_time now = sc_core::sc_time_stamp();
      qk_.set(requester_time_ > now ? requester_time_ - now : sc_core::SC_ZERO_TIME);
      if (qk_.need_sync()) qk_.sync();
    }
    qp.scheduled = false;
    if (yielded) Schedule(qp);
    // Doorbells that come later than a flush (ERR) flush when they act.
    if (qp.exists && qp.state == QpState::kErr && !sq_bells_[qpn].empty()) {
      const sc_time now = sc_core::sc_time_stamp(), at = sq_bells_[qpn].front().ready;
      Schedule(qp, at > now ? at - now : sc_core::SC_ZERO_TIME);
    }
  }
}

bool Nic::SendOne(QpContext& qp) {
  const sc_time now = sc_core::sc_time_stamp();
  const sc_time issue = std::max(std::max(requester_time_, now), sq_bells_[qp.qpn].acts);
  sc_time local = issue - now;  // the WQE fetch starts at `issue`
  uint8_t raw[kWqeBytes];
  const bool fetched =
      Dma(requester_gp_, tlm::TLM_READ_COMMAND, qp.sq.SlotAddr(qp.sq_ci, kWqeBytes), raw, kWqeBytes,
          d_.wqe_fetch, &local);
  requester_time_ = issue + d_.wqe_bytes;
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
      // Issued when the WQE is in (`local` is its completion), after the WQE on the channel.
      pkt->data.ResizeForOverwrite(w.length);  // the DMA read fills it; capacity kept
      const sc_time bytes = ReadBytes(w.length);
      const bool ok = Dma(requester_gp_, tlm::TLM_READ_COMMAND, w.addr, pkt->data.data(),
                          w.length, d_.pcie_read + bytes, &local);
      requester_time_ += bytes;
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
  // tx_latency_ns after the data is in, the send engine starts the message, one after the
  // other (the SQ's order is the wire's); it is then busy tx_pkt_ns per packet (the packet
  // rate, timing.h contract 3, as model/engine's: not on a lone message's latency).
  const sc_time start = std::max(now + local + d_.tx_latency, engine_free_);
  engine_free_ = start + sc_time::from_value(d_.tx_pkt.value() * p.npkts);
  if (qp.type == QpType::kRc) {
    qp.outstanding.push_back(Pending{w.wr_id, w.opcode, (w.flags & send_flag::kSignaled) != 0,
                                     w.length, w.addr, engine::PsnAdd(p.psn, p.npkts - 1)});
  }
  Transmit(NetPacket{std::move(pkt), start, sc_core::SC_ZERO_TIME});
  // UC and UD complete once sent (IBTA 9.8.3 / 9.8.4: no acknowledgement).
  if (qp.type != QpType::kRc) CompleteLocal(qp, w, WcStatus::kSuccess, false, engine_free_);
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
      static const Packet kBlank{};
      *p = kBlank;  // every field reset; the payload's copy keeps its capacity (packet.h)
      return p;
    }
  }
  auto p = std::make_shared<Packet>();
  if (packet_pool_.size() < kPacketPool) packet_pool_.push_back(p);
  return p;
}

void Nic::CompleteLocal(QpContext& qp, const Wqe& w, WcStatus s, bool always, sc_time at) {
  --qp.sq_occupancy;
  if (!always && !(w.flags & send_flag::kSignaled)) return;
  Cqe c;
  c.wr_id = w.wr_id;
  c.status = s;
  c.opcode = SendWcOpcode(w.opcode);
  c.byte_len = w.length;
  c.qpn = qp.qpn;
  WriteCqe(qp.send_cqn, c, std::max(at, sc_core::sc_time_stamp()));
}

void Nic::ToError(QpContext& qp) {
  SetState(qp, QpState::kErr);
  Schedule(qp);
}

// IBTA 10.3.1 / rxe_qp_error: in ERR every outstanding and posted WQE of both queues
// completes with kWrFlushErr, in order; WQEs posted meanwhile are flushed too.
void Nic::Flush(QpContext& qp) {
  qk_.sync();
  if (requester_time_ > sc_core::sc_time_stamp()) wait(requester_time_ - sc_core::sc_time_stamp());
  const sc_time fetch = d_.wqe_fetch;
  for (;;) {
    // The SQ doorbells that have acted by now count (later ones flush when they act).
    while (qp.sq_ci == qp.sq_pi && !sq_bells_[qp.qpn].empty() &&
           sq_bells_[qp.qpn].front().ready <= sc_core::sc_time_stamp()) {
      TakeSqBell(qp);
    }
    if (!qp.exists || qp.state != QpState::kErr ||
        (qp.outstanding.empty() && qp.sq_ci == qp.sq_pi && qp.rq_ci == qp.rq_pi)) {
      break;
    }
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
