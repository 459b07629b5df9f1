// The responder: checks state, PSN and rights, executes SEND/WRITE/READ/ATOMIC against the
// MR table, consumes receive WQEs and answers with ACK/NAK/data (rxe_resp.c, as steps).
#include <algorithm>
#include <cstring>

#include "model/engine/nic.h"
#include "model/engine/world.h"

namespace qptwin::model::engine {
namespace {
// The bytes a receive can take: its SGEs' lengths.
uint64_t RecvCapacity(const RecvWr& r) {
  uint64_t n = 0;
  for (const Sge& s : r.sg_list) n += s.length;
  return n;
}

constexpr size_t kAtomicReplayDepth = 16;

}  // namespace


void Nic::TakeRdAtomicRes(Qp& qp, const Qp::RdAtomicRes& res) {
  // rxe_resp.c rxe_prepare_res: the slot at res_head, then res_head moves on.
  const size_t slots = qp.attr.max_dest_rd_atomic;
  if (slots == 0) return;
  if (qp.rd_res.size() != slots) qp.rd_res.assign(slots, Qp::RdAtomicRes{});
  qp.rd_res[qp.rd_res_head % slots] = res;
  qp.rd_res[qp.rd_res_head % slots].used = true;
  qp.rd_res_head = (qp.rd_res_head + 1) % slots;
}

Qp::RdAtomicRes* Nic::FindRdAtomicRes(Qp& qp, uint32_t psn) {
  // rxe_resp.c find_resource: the first slot in use whose PSNs hold `psn`.
  for (Qp::RdAtomicRes& r : qp.rd_res) {
    if (r.used && PsnDiff(psn, r.first_psn) >= 0 && PsnDiff(psn, r.last_psn) <= 0) return &r;
  }
  return nullptr;
}

void Nic::HandleRequest(Qp& qp, Packet& pkt) {
  request_contexts_ns_ = RequestContextsReady(qp, pkt);  // QPC, MPT, MTT (nic_cache.cc)
  request_delay_mark_ = bus_->delay_total();  // host_bus.h contract 3
  no_receive_in_ = nullptr;
  RespStep step = RespStep::kCheckState;
  qp.xrc_srq.reset();
  for (;;) {
    switch (step) {
      case RespStep::kCheckState: step = RespCheckState(qp, pkt); break;
      case RespStep::kCheckPsn: step = RespCheckPsn(qp, pkt); break;
      case RespStep::kCheckXrcSrq: step = RespCheckXrcSrq(qp, pkt); break;
      case RespStep::kCheckOp: step = RespCheckOp(qp, pkt); break;
      case RespStep::kExecute: step = RespExecute(qp, pkt); break;
      case RespStep::kDone: no_receive_in_ = nullptr; return;
    }
  }
}

Nic::RespStep Nic::RespCheckState(Qp& qp, const Packet& pkt) {
  // R10: requests are dropped while the QP is below RTR (and in ERR).
  if (qp.state == QpState::kReset || qp.state == QpState::kInit || qp.state == QpState::kErr) {
    return RespStep::kDone;
  }
  if (qp.type == QpType::kUd) {
    if (pkt.qkey != qp.attr.qkey) return RespStep::kDone;  // Q_Key violation: silent drop
  } else if (pkt.src_qpn != qp.attr.dest_qp_num) {
    return RespStep::kDone;  // not from the connected peer
  }
  if (qp.state == QpState::kRtr && profile().behaviour.comm_est_event && !qp.comm_est_raised) {
    qp.comm_est_raised = true;
    RaiseQpEvent(qp, EventType::kCommEst);
  }
  return RespStep::kCheckPsn;
}

Nic::RespStep Nic::RespCheckPsn(Qp& qp, const Packet& pkt) {
  if (qp.type == QpType::kUd) return RespStep::kCheckOp;
  if (qp.type == QpType::kUc) {
    // Inside a message whose last packet was dropped (uc_mid_message): rxe_resp.c
    // check_op_seq accepts only its MIDDLE/LAST packets; every new message (FIRST, ONLY) is
    // dropped (measured: differential sequence 1048).
    if (qp.uc_mid_message) return RespStep::kDone;
    // UC: a gap means the messages in between are lost; this one (every message starts a
    // packet sequence) is taken, and only its execution moves the expected PSN on (to its
    // own PSN + packets): one dropped for want of a receive leaves it where it was
    // (rxe_resp.c check_psn: resp.psn moves only in execute/do_complete; measured: a
    // query's rq_psn after dropped UC SENDs, differential seed 748177376976 sequence 223).
    return RespStep::kCheckOp;
  }
  const int32_t d = PsnDiff(pkt.psn, qp.epsn);
  // RC and XRC from here.
  if (d > 0) {  // a gap: NAK with the PSN we expect (IBTA 9.7.5.1.1)
    // Once per gap on rxe (Qp::sent_psn_nak): the next packets past epsn are dropped.
    if (qp.sent_psn_nak && profile().behaviour.one_psn_nak_per_gap) return RespStep::kDone;
    qp.sent_psn_nak = true;
    Packet nak;
    nak.kind = PacketKind::kNak;
    nak.nak = NakCode::kPsnSeqErr;
    nak.psn = qp.epsn;
    nak.drawn_by_psn = pkt.psn;
    SendResponse(qp, pkt, std::move(nak));
    return RespStep::kDone;
  }
  // A packet at epsn (the message holds it) ends the gap (rxe_resp.c check_psn).
  if (d <= 0 && PsnDiff(PsnAdd(pkt.psn, std::max<uint32_t>(pkt.npkts, 1) - 1), qp.epsn) >= 0) {
    qp.sent_psn_nak = false;
  }
  if (d == 0 && qp.write_imm_waiting && qp.write_imm_wait_psn == qp.epsn) {
    // Inside a WRITE_WITH_IMM whose last packet waits for a receive (ResumesWriteImm): rxe_resp.c
    // check_op_seq expects that message's MIDDLE/LAST at epsn; a new message there is an
    // invalid request (RESPST_ERR_MISSING_OPCODE_LAST_C): NAK, the QP to ERR (measured:
    // differential seed 20261221 sequence 1009).
    RespondError(qp, pkt, NakCode::kInvalidRequest, EventType::kQpReqErr);
    return RespStep::kDone;
  }
  if (d < 0 && ResumesWriteImm(qp, pkt)) {
    // The packets before epsn were executed, the last one waited for a receive
    // (Behaviour::write_imm_receive_at_last_packet): ACK the duplicates (rxe_resp.c
    // duplicate_request: prev_psn) and go on with the last packet.
    Packet ack;
    ack.kind = PacketKind::kAck;
    ack.psn = PsnAdd(qp.epsn, 0xffffff);
    SendResponse(qp, pkt, std::move(ack));
    return RespStep::kCheckXrcSrq;
  }
  const bool send_or_write = pkt.kind == PacketKind::kSend || pkt.kind == PacketKind::kWrite;
  if (d < 0 && send_or_write && PsnDiff(PsnAdd(pkt.psn, pkt.npkts - 1), qp.epsn) >= 0) {
    // epsn inside a message no packet of which was executed (its requester went back to an
    // older PSN, e.g. reset and reconnected): the packets before epsn are duplicates, ACKed
    // again (C9-105); the one at epsn is a MIDDLE or LAST with no message begun, an invalid
    // request (rxe_resp.c check_op_seq: RESPST_ERR_MISSING_OPCODE_FIRST, Class C): NAK
    // there, the QP to ERR (measured: differential seed 20261204 sequence 176).
    Packet ack;
    ack.kind = PacketKind::kAck;
    ack.psn = PsnAdd(profile().behaviour.duplicate_ack_psn_is_last_executed ? qp.ack_psn
                                                                            : qp.epsn,
                     0xffffff);
    SendResponse(qp, pkt, std::move(ack));
    Packet at_epsn = LastPacketOf(pkt);
    at_epsn.psn = qp.epsn;
    RespondError(qp, at_epsn, NakCode::kInvalidRequest, EventType::kQpReqErr);
    return RespStep::kDone;
  }
  if (d < 0) {  // a duplicate: answer again without executing twice
    if (pkt.kind == PacketKind::kReadReq) {
      if (!profile().behaviour.dup_read_needs_its_resource) {
        return RespStep::kCheckXrcSrq;  // reads are idempotent
      }
      // rxe_resp.c duplicate_request: find_resource's first entry holding the PSN answers,
      // if it is a READ of the same R_Key covering the range; else Class D: dropped.
      Qp::RdAtomicRes* r = FindRdAtomicRes(qp, pkt.psn);
      if (!r) return RespStep::kDone;
      const bool inside = r->read && pkt.rkey == r->rkey && pkt.remote_addr >= r->va &&
                          pkt.length <= r->length &&
                          pkt.remote_addr + pkt.length <= r->va + r->length;
      if (!inside) return RespStep::kDone;
      r->va = pkt.remote_addr;  // "Reset the resource, except length"
      return RespStep::kCheckXrcSrq;
    }
    if (pkt.kind == PacketKind::kAtomic && profile().behaviour.dup_read_needs_its_resource) {
      // rxe_resp.c duplicate_request -> atomic_reply with res->replay: the first resource
      // holding the PSN answers with res->atomic.orig_val, for a READ's the union's va_org;
      // nothing is executed and the PSNs stay. No resource: Class D, dropped.
      if (const Qp::RdAtomicRes* r = FindRdAtomicRes(qp, pkt.psn)) {
        Packet resp;
        resp.kind = PacketKind::kAtomicResp;
        resp.psn = pkt.psn;
        resp.atomic_orig = r->read ? r->va : r->orig;
        SendResponse(qp, pkt, std::move(resp));
      }
      return RespStep::kDone;
    }
    if (pkt.kind == PacketKind::kAtomic) {
      for (const auto& [psn, orig] : qp.atomic_replay) {
        if (psn == pkt.psn) {
          Packet r;
          r.kind = PacketKind::kAtomicResp;
          r.psn = pkt.psn;
          r.atomic_orig = orig;
          SendResponse(qp, pkt, std::move(r));
        }
      }
      return RespStep::kDone;
    }
    if (profile().behaviour.duplicate_ack_psn_is_last_executed) {
      // rxe_resp.c duplicate_request: send_ack(..., resp.ack_psn - 1), the last SEND/WRITE/
      // atomic packet executed, which may be older than this duplicate (after a READ, or a
      // requester reset to an older PSN); rxe_comp.c check_psn then ignores it.
      Packet ack;
      ack.kind = PacketKind::kAck;
      ack.psn = PsnAdd(qp.ack_psn, 0xffffff);
      SendResponse(qp, pkt, std::move(ack));
      return RespStep::kDone;
    }
    SendAck(qp, pkt);  // IBTA C9-105: acknowledge the duplicate
    return RespStep::kDone;
  }
  return RespStep::kCheckXrcSrq;
}

Nic::RespStep Nic::RespCheckXrcSrq(Qp& qp, const Packet& pkt) {
  if (qp.type != QpType::kXrcRecv) return RespStep::kCheckOp;
  // IBTA 9.8 (XRC): every request names an XRC SRQ in its XRCETH; the SRQ must exist and
  // belong to the XRC domain of the target QP, else the request is invalid: NAK Invalid
  // Request (the requester completes with REM_INV_REQ_ERR) and the target QP goes to ERR,
  // as for any invalid request (C9-ANAK, 9.7.5.2.4).
  for (const auto& [h, srq] : srqs_) {
    if (srq->type == SrqType::kXrc && srq->srqn == pkt.xrc_srqn && srq->xrcd == qp.xrcd) {
      qp.xrc_srq = srq;
      return RespStep::kCheckOp;
    }
  }
  RespondError(qp, pkt, NakCode::kInvalidRequest, EventType::kQpReqErr);
  return RespStep::kDone;
}

Srq* Nic::RecvSrq(const Qp& qp) const {
  return qp.type == QpType::kXrcRecv ? qp.xrc_srq.get() : qp.srq.get();
}

Cq& Nic::RecvCq(Qp& qp) { return qp.type == QpType::kXrcRecv ? *qp.xrc_srq->cq : *qp.recv_cq; }

uint32_t Nic::ResponderPd(const Qp& qp) const {
  // IBTA 9.8: for XRC the XRC SRQ's PD is the one access is checked against (receive
  // buffers and the R_Keys of RDMA/atomics); an SRQ's PD for its receive buffers.
  if (const Srq* srq = RecvSrq(qp)) return srq->pd;
  return qp.init.pd.id;
}

Nic::RespStep Nic::RespCheckOp(Qp& qp, const Packet& pkt) {
  AccessFlags need = 0;
  if (pkt.kind == PacketKind::kWrite) need = access::kRemoteWrite;
  if (pkt.kind == PacketKind::kReadReq) need = access::kRemoteRead;
  if (pkt.kind == PacketKind::kAtomic) need = access::kRemoteAtomic;
  // R16: an operation the QP's access flags do not allow is an invalid request.
  bool bad = (qp.attr.qp_access_flags & need) != need;
  if (pkt.kind == PacketKind::kAtomic && (pkt.remote_addr & 7)) bad = true;  // misaligned
  // A responder without READ/ATOMIC resources (max_dest_rd_atomic 0) cannot take one: NAK
  // Invalid Request (rxe_resp.c check_resource: RESPST_ERR_TOO_MANY_RDMA_ATM_REQ).
  const bool rd_or_atomic = pkt.kind == PacketKind::kReadReq || pkt.kind == PacketKind::kAtomic;
  if (rd_or_atomic && qp.attr.max_dest_rd_atomic == 0) bad = true;
  if (bad) {
    if (IsReliable(qp.type)) {
      RespondError(qp, pkt, NakCode::kInvalidRequest, EventType::kQpReqErr);
    }
    return RespStep::kDone;
  }
  return RespStep::kExecute;
}

Nic::RespStep Nic::RespExecute(Qp& qp, Packet& pkt) {
  const bool dup = IsReliable(qp.type) && PsnDiff(pkt.psn, qp.epsn) < 0;
  // R_Keys are checked against the QP's PD (rxe_resp.c check_rkey), for XRC against the
  // XRC SRQ's (IBTA 9.8: an XRC target QP has no PD of its own).
  const uint32_t pd = qp.type == QpType::kXrcRecv ? ResponderPd(qp) : qp.init.pd.id;
  switch (pkt.kind) {
    case PacketKind::kSend:
      ReceiveSendLike(qp, pkt);
      return RespStep::kDone;
    case PacketKind::kWrite: {
      const bool per_packet = pkt.has_imm && profile().behaviour.write_imm_receive_at_last_packet;
      if (per_packet && ResumesWriteImm(qp, pkt)) {  // only the last packet was left
        if (!PeekRecv(qp)) {
          Packet last = LastPacketOf(pkt);
          ReceiveSendLike(qp, last);  // RNR NAK again / drop
          return RespStep::kDone;
        }
        // The data is the same on every try: what the earlier packets wrote is written again.
        if (uint8_t* dst = RemoteBytes(qp, pkt.rkey, pd, pkt.remote_addr, pkt.data.size(),
                                       access::kRemoteWrite)) {
          if (!Dma(DmaKind::kWriteData, qp.qpn).Write(Addr(dst), pkt.data.data(),
                                                      pkt.data.size())) {
            ResponderDmaFailed(qp, pkt);
            return RespStep::kDone;
          }
        }
        ReceiveSendLike(qp, pkt);
        return RespStep::kDone;
      }
      // rxe_resp.c: check_resource (the receive) before check_rkey at the packet needing it.
      if (per_packet && pkt.npkts == 1 && !PeekRecv(qp)) {
        ReceiveSendLike(qp, pkt);  // RNR NAK / drop, whatever the R_Key
        return RespStep::kDone;
      }
      // IBTA C9-88: a zero-length RDMA need not carry a valid address or R_Key (rxe_resp.c
      // check_rkey skips it).
      const bool empty = pkt.data.empty();
      uint8_t* dst = empty ? nullptr
                           : RemoteBytes(qp, pkt.rkey, pd, pkt.remote_addr, pkt.data.size(),
                                         access::kRemoteWrite);
      if (!empty && !dst) {  // R15: RC NAKs, UC drops silently
        if (IsReliable(qp.type)) {
          // A one-packet WRITE_WITH_IMM took its receive before the R_Key check (rxe_resp.c
          // check_resource first); the class C error completes that receive with
          // REM_ACCESS_ERR (do_class_ac_error, do_complete; measured: sequence 113).
          RecvWr r;
          if (per_packet && pkt.has_imm && pkt.npkts == 1 && TakeRecv(qp, &r)) {
            WorkCompletion wc;
            wc.wr_id = r.wr_id;
            wc.qp_num = qp.qpn;
            wc.status = WcStatus::kRemAccessErr;
            // Into a full CQ, do_complete returns RESPST_ERR_CQ_OVERFLOW before the NAK
            // (PushCqe moved the QP to ERR): the sender hears nothing (as in
            // InvalidateForSend and ReceiveSendLike's errors).
            if (!PushRecvCqe(qp, wc, pkt.solicited)) {
              return RespStep::kDone;
            }
          }
          RespondError(qp, pkt, NakCode::kRemoteAccess, EventType::kQpAccessErr);
        } else if (per_packet && pkt.npkts == 1 && qp.srq) {
          // UC on an SRQ (rxe_resp.c RESPST_ERR_RKEY_VIOLATION, "UC/SRQ Class D"): the receive
          // taken by check_resource completes with REM_ACCESS_ERR; the message is dropped and
          // the QP carries on (measured: differential sequence 723). Without an SRQ: dropped.
          RecvWr r;
          if (TakeRecv(qp, &r)) {
            WorkCompletion wc;
            wc.wr_id = r.wr_id;
            wc.qp_num = qp.qpn;
            wc.status = WcStatus::kRemAccessErr;
            PushRecvCqe(qp, wc, pkt.solicited);
          }
        }
        return RespStep::kDone;
      }
      if (pkt.has_imm && !PeekRecv(qp)) {
        if (per_packet && pkt.npkts > 1) {
          // The packets before the last are executed (their data lands, rq_psn moves); the
          // last one waits for a receive (RNR NAK at its PSN; UC drops it).
          const uint32_t mtu = MtuBytes(qp.attr.path_mtu);
          const size_t head = std::min<size_t>(pkt.data.size(), size_t{pkt.npkts - 1} * mtu);
          if (!Dma(DmaKind::kWriteData, qp.qpn).Write(Addr(dst), pkt.data.data(), head)) {
            ResponderDmaFailed(qp, pkt);
            return RespStep::kDone;
          }
          qp.epsn = qp.ack_psn = PsnAdd(pkt.psn, pkt.npkts - 1);
          if (qp.type == QpType::kUc) qp.uc_mid_message = true;
          qp.write_imm_waiting = true;
          qp.write_imm_wait_psn = qp.epsn;
          Packet last = LastPacketOf(pkt);
          ReceiveSendLike(qp, last);
          return RespStep::kDone;
        }
        ReceiveSendLike(qp, pkt);  // sends the RNR NAK / drops
        return RespStep::kDone;
      }
      if (!pkt.data.empty() &&
          !Dma(DmaKind::kWriteData, qp.qpn).Write(Addr(dst), pkt.data.data(), pkt.data.size())) {
        ResponderDmaFailed(qp, pkt);
        return RespStep::kDone;
      }
      if (pkt.has_imm) {
        ReceiveSendLike(qp, pkt);
      } else {
        qp.epsn = qp.ack_psn = PsnAdd(pkt.psn, pkt.npkts);
        if (IsReliable(qp.type)) SendAck(qp, pkt);
      }
      return RespStep::kDone;
    }
    case PacketKind::kReadReq: {
      // C9-88: a zero-length READ checks no R_Key either.
      const uint8_t* src = pkt.length == 0 ? nullptr
                                           : RemoteBytes(qp, pkt.rkey, pd, pkt.remote_addr,
                                                         pkt.length, access::kRemoteRead);
      if (pkt.length != 0 && !src) {
        RespondError(qp, pkt, NakCode::kRemoteAccess, EventType::kQpAccessErr);
        return RespStep::kDone;
      }
      Packet r;
      r.kind = PacketKind::kReadResp;
      r.psn = pkt.psn;
      if (src && !Dma(DmaKind::kReadSource, qp.qpn)
                      .Read(Addr(src), r.data.ResizeForOverwrite(pkt.length), pkt.length)) {
        ResponderDmaFailed(qp, pkt);
        return RespStep::kDone;
      }
      r.npkts = PacketCount(pkt.length, MtuBytes(qp.attr.path_mtu));
      if (!dup) {
        qp.epsn = PsnAdd(pkt.psn, r.npkts);
        Qp::RdAtomicRes res;
        res.read = true;
        res.first_psn = pkt.psn;
        res.last_psn = PsnAdd(pkt.psn, std::max<uint32_t>(r.npkts, 1) - 1);
        res.rkey = pkt.rkey;
        res.va = pkt.remote_addr;
        res.length = pkt.length;
        TakeRdAtomicRes(qp, res);
      }
      SendResponse(qp, pkt, std::move(r), 0, pkt.length);  // the data is read by DMA
      return RespStep::kDone;
    }
    case PacketKind::kAtomic: {
      uint8_t* p = RemoteBytes(qp, pkt.rkey, pd, pkt.remote_addr, 8, access::kRemoteAtomic);
      if (!p) {
        RespondError(qp, pkt, NakCode::kRemoteAccess, EventType::kQpAccessErr);
        return RespStep::kDone;
      }
      // host_bus.h contract 5: one read and one write of the 8 bytes, nothing between.
      uint64_t orig;
      uint8_t bytes[8];
      if (!Dma(DmaKind::kAtomic, qp.qpn).Read(Addr(p), bytes, 8)) {
        ResponderDmaFailed(qp, pkt);
        return RespStep::kDone;
      }
      std::memcpy(&orig, bytes, 8);
      uint64_t next = pkt.op == WrOpcode::kAtomicCmpAndSwp
                          ? (orig == pkt.compare_add ? pkt.swap : orig)
                          : orig + pkt.compare_add;
      std::memcpy(bytes, &next, 8);
      if (!bus_->Write(Addr(p), bytes, 8)) {  // tagged with the read just above
        ResponderDmaFailed(qp, pkt);
        return RespStep::kDone;
      }
      qp.atomic_replay.emplace_back(pkt.psn, orig);
      Qp::RdAtomicRes res;
      res.first_psn = res.last_psn = pkt.psn;
      res.orig = orig;
      TakeRdAtomicRes(qp, res);
      if (qp.atomic_replay.size() > kAtomicReplayDepth) qp.atomic_replay.pop_front();
      qp.epsn = qp.ack_psn = PsnAdd(pkt.psn, 1);
      Packet r;
      r.kind = PacketKind::kAtomicResp;
      r.psn = pkt.psn;
      r.atomic_orig = orig;
      // The atomic reads and writes host memory: a PCIe read round trip plus the operation.
      const NicTiming& t = profile().timing.nic;
      SendResponse(qp, pkt, std::move(r), world_->events().Now() + t.pcie_read_ns + t.atomic_ns);
      return RespStep::kDone;
    }
    default:
      return RespStep::kDone;
  }
}

bool Nic::ResumesWriteImm(const Qp& qp, const Packet& pkt) const {
  // epsn inside the message: its packets before epsn were executed earlier (seed 20261217
  // sequence 897: not so after a SEND, the message is an invalid request there).
  return pkt.kind == PacketKind::kWrite && pkt.has_imm && pkt.npkts > 1 &&
         profile().behaviour.write_imm_receive_at_last_packet && qp.write_imm_waiting &&
         qp.write_imm_wait_psn == qp.epsn &&
         PsnDiff(qp.epsn, pkt.psn) > 0 && PsnDiff(qp.epsn, PsnAdd(pkt.psn, pkt.npkts - 1)) <= 0;
}

Packet Nic::LastPacketOf(const Packet& pkt) {
  Packet last;
  last.kind = pkt.kind;
  last.transport = pkt.transport;
  last.src_nic = pkt.src_nic;
  last.src_qpn = pkt.src_qpn;
  last.psn = PsnAdd(pkt.psn, pkt.npkts - 1);
  last.npkts = 1;
  last.has_imm = pkt.has_imm;
  last.sent_by_post = pkt.sent_by_post;  // its NAK's flush order (Nic::Receive)
  return last;
}

bool Nic::ReceiveReady(Qp& qp, RecvQueue& q) {
  // recv_queue.h contract 5: one read of the record per request that finds none (no host
  // write can come between two looks inside one request).
  if (&q == no_receive_in_) return false;
  if (q.Ready(Dma(DmaKind::kRecvDbRec, qp.qpn))) return true;
  no_receive_in_ = &q;
  return false;
}

bool Nic::PeekRecv(Qp& qp) {
  Srq* srq = RecvSrq(qp);
  return ReceiveReady(qp, srq ? srq->rq : qp.rq);
}

bool Nic::TakeRecv(Qp& qp, RecvWr* out, bool* fetch_failed) {
  Srq* srq = RecvSrq(qp);
  RecvQueue& q = srq ? srq->rq : qp.rq;
  if (!ReceiveReady(qp, q)) return false;
  const bool fetched = q.Fetch(Dma(DmaKind::kRecvWqe, qp.qpn), out);  // recv_queue.h 3
  if (!srq) NoteQueues(qp);
  if (fetch_failed) *fetch_failed = !fetched;
  if (srq) CheckSrqLimit(*srq);
  return true;
}

void Nic::ReceiveSendLike(Qp& qp, Packet& pkt) {
  RecvWr r;
  bool fetch_failed = false;
  if (!TakeRecv(qp, &r, &fetch_failed)) {
    // R17: RC (and XRC) answers RNR NAK with min_rnr_timer; UC and UD drop.
    if (IsReliable(qp.type)) {
      Packet nak;
      nak.kind = PacketKind::kNak;
      nak.nak = NakCode::kRnr;
      nak.psn = pkt.psn;
      nak.rnr_timer = qp.attr.min_rnr_timer;
      nak.sent_by_post = pkt.sent_by_post;  // Nic::Receive: a retry's NAK orders the flush
      SendResponse(qp, pkt, std::move(nak));
      // Behaviour::rnr_nak_then_seq_nak: the message's next packet arrives out of sequence
      // (the first was not taken) and draws one NAK PSN sequence error, every retry round.
      if (pkt.npkts > 1 && profile().behaviour.rnr_nak_then_seq_nak && !qp.sent_psn_nak) {
        qp.sent_psn_nak = true;
        Packet seq;
        seq.kind = PacketKind::kNak;
        seq.nak = NakCode::kPsnSeqErr;
        seq.psn = qp.epsn;
        seq.drawn_by_psn = PsnAdd(pkt.psn, 1);  // the message's second packet
        SendResponse(qp, pkt, std::move(seq));
      }
    }
    return;
  }
  const bool write_imm = pkt.kind == PacketKind::kWrite;
  std::vector<uint8_t> grh_and_data;
  const uint8_t* data = pkt.data.data();
  size_t len = write_imm ? 0 : pkt.data.size();
  const bool grh = qp.type == QpType::kUd && profile().port.link_layer == LinkLayer::kEthernet;
  if (grh) {  // UD on RoCE: 40 bytes of GRH first in the receive buffer
    Gid dgid;
    GidAt(roce_gid_index(), &dgid);
    grh_and_data = NetworkHeader(pkt, dgid);
    grh_and_data.insert(grh_and_data.end(), pkt.data.begin(), pkt.data.end());
    data = grh_and_data.data();
    len = grh_and_data.size();
  }
  WorkCompletion wc;
  wc.wr_id = r.wr_id;
  wc.qp_num = qp.qpn;
  // Behaviour::connected_recv_src_qp_zero: rxe fills src_qp from a DETH only.
  const bool datagram = qp.type == QpType::kUd;
  wc.src_qp = datagram || !profile().behaviour.connected_recv_src_qp_zero ? pkt.src_qpn : 0;
  uint32_t pd = ResponderPd(qp);
  // A receive WQE the NIC could not fetch (host_bus.h contract 2) is a local QP operation
  // error, as a malformed WQE: nothing is written.
  WcStatus st = fetch_failed ? WcStatus::kLocQpOpErr
                : len        ? mrs_.Scatter(Dma(DmaKind::kReceiveData, qp.qpn), r.sg_list, pd,
                                            data, len)
                             : WcStatus::kSuccess;
  if (st != WcStatus::kSuccess) {
    const bool too_small = st == WcStatus::kLocLenErr;
    // rxe_resp.c send_data_in: every copy_data failure is a malformed WQE
    // (Behaviour::recv_error_is_malformed_wqe): LOC_QP_OP_ERR, NAK remote op, ERR, UD too.
    const bool malformed = profile().behaviour.recv_error_is_malformed_wqe;
    // rxe copies a message packet by packet: the packets before the one that fails are
    // executed (their data lands, resp.psn and the ACK PSN move past them).
    uint32_t executed = 0;
    if (malformed && pkt.npkts > 1 && !fetch_failed) {
      const uint32_t mtu = MtuBytes(qp.attr.path_mtu);
      for (uint32_t k = pkt.npkts - 1; k > 0 && executed == 0; --k) {
        if (mrs_.Scatter(Dma(DmaKind::kReceiveData, qp.qpn), r.sg_list, pd, data,
                         size_t{k} * mtu) == WcStatus::kSuccess) {
          executed = k;
        }
      }
      if (executed) qp.epsn = qp.ack_psn = PsnAdd(pkt.psn, executed);
    }
    // UD on RoCE: rxe copies the GRH area first, then the payload (two copy_data calls): the
    // 40 bytes land when they fit, whatever happens to the payload.
    if (malformed && grh && !fetch_failed) {
      (void)mrs_.Scatter(Dma(DmaKind::kReceiveData, qp.qpn), r.sg_list, pd, data,
                         len - pkt.data.size());
    }
    if (malformed) st = WcStatus::kLocQpOpErr;
    wc.status = st;
    const bool posted = PushRecvCqe(qp, wc, pkt.solicited);
    if (qp.type == QpType::kUd && !malformed) return;  // a UD QP carries on
    bool defer = false;
    // rxe_resp.c: the class A/C error's NAK goes in RESPST_ACKNOWLEDGE, after do_complete
    // posted the receive's CQE. Into a full receive CQ do_complete returns
    // RESPST_ERR_CQ_OVERFLOW (class G, RESPST_ERROR): no NAK, the QP to ERR (PushCqe did),
    // and the sender times out (seed 20261223 sequence 811; row 101 for SEND_WITH_INV).
    if (IsReliable(qp.type) && posted) {
      Packet nak;
      nak.kind = PacketKind::kNak;
      nak.nak = st == WcStatus::kLocLenErr ? NakCode::kInvalidRequest : NakCode::kRemoteOp;
      // The packet that overflows the receive is NAKed (rxe_resp.c send_data_in per
      // packet): the earlier packets of the message fit.
      nak.psn = PsnAdd(pkt.psn, executed);
      if (!malformed && too_small && pkt.npkts > 1) {
        const uint32_t mtu = MtuBytes(qp.attr.path_mtu);
        nak.psn = PsnAdd(pkt.psn, std::min<uint32_t>(pkt.npkts - 1, RecvCapacity(r) / mtu));
      }
      defer = qp.state != QpState::kErr && DeferFlushTo(nak, pkt);
      SendResponse(qp, pkt, std::move(nak));
    }
    if (qp.state != QpState::kErr) EnterError(qp, "receive error", defer);
    return;
  }
  // UD too: rxe_resp.c execute sets resp.psn = psn + 1 for every type, and a query shows it
  // (Behaviour::query_qp_stored_view).
  qp.epsn = qp.ack_psn = PsnAdd(pkt.psn, pkt.npkts);
  if (pkt.has_inv && !InvalidateForSend(qp, pkt, &wc)) {
    // rxe_resp.c execute returns RESPST_ERR_INVALIDATE_RKEY before it sets resp.psn past the
    // last packet (Behaviour::failed_invalidate_keeps_psn; seed 20261207 sequence 1361).
    if (profile().behaviour.failed_invalidate_keeps_psn) {
      qp.epsn = qp.ack_psn = PsnAdd(pkt.psn, pkt.npkts - 1);
    }
    return;
  }
  wc.status = WcStatus::kSuccess;
  wc.opcode = write_imm ? WcOpcode::kRecvRdmaWithImm : WcOpcode::kRecv;
  wc.byte_len = static_cast<uint32_t>(write_imm ? pkt.data.size() : len);
  if (pkt.has_imm) {
    wc.imm_data = pkt.imm;
    wc.wc_flags |= wc_flag::kWithImm;
  }
  if (grh || profile().behaviour.recv_wc_grh_always) wc.wc_flags |= wc_flag::kGrh;
  if (pkt.has_inv) {
    // IBTA 11.4.2.1: WITH_INV and the rkey; rxe (Behaviour::recv_inv_flag_as_ip_csum_ok):
    // the kernel's IB_WC_WITH_INVALIDATE bit, read by libibverbs as IBV_WC_IP_CSUM_OK.
    if (profile().behaviour.recv_inv_flag_as_ip_csum_ok) {
      wc.wc_flags |= wc_flag::kIpCsumOk;
    } else {
      wc.wc_flags |= wc_flag::kWithInv;
      wc.imm_data = pkt.imm;
    }
  }
  bool ok = PushRecvCqe(qp, wc, pkt.solicited);
  if (IsReliable(qp.type) && ok) SendAck(qp, pkt);
}

bool Nic::InvalidateForSend(Qp& qp, const Packet& pkt, WorkCompletion* wc) {
  // rxe_resp.c execute: after the data is placed, invalidate_rkey (a window's rkey:
  // rxe_invalidate_mw; a region's is refused as by LOCAL_INV, nic_mw.cc).
  if (InvalidateWindow(qp, pkt.imm, "SEND_WITH_INV") == 0) return true;
  // RESPST_ERR_INVALIDATE_RKEY (class J): the receive completes with REM_INV_REQ_ERR and
  // the QP goes to ERR; the sender's SEND is ACKed (measured on rxe 6.1: it completes
  // successfully, its QP stays in RTS).
  wc->status = WcStatus::kRemInvReqErr;
  // A receive CQ with no room: do_complete returns RESPST_ERR_CQ_OVERFLOW before the ACK
  // (PushCqe moved the QP to ERR), so the sender hears nothing and times out (seed 20261216
  // sequence 1543).
  if (!PushRecvCqe(qp, *wc, pkt.solicited)) return false;
  bool defer = false;
  if (IsReliable(qp.type)) defer = SendAck(qp, pkt, qp.state != QpState::kErr);
  if (qp.state != QpState::kErr) EnterError(qp, "invalid rkey to invalidate", defer);
  return false;
}

void Nic::ResponderDmaFailed(Qp& qp, const Packet& pkt) {
  if (IsReliable(qp.type)) RespondError(qp, pkt, NakCode::kRemoteOp, EventType::kQpFatal);
}

void Nic::RespondError(Qp& qp, const Packet& pkt, NakCode code, EventType event) {
  Packet nak;
  nak.kind = PacketKind::kNak;
  nak.nak = code;
  nak.psn = pkt.psn;
  const bool defer = qp.state != QpState::kErr && DeferFlushTo(nak, pkt);
  SendResponse(qp, pkt, std::move(nak));
  if (profile().behaviour.qp_error_events) RaiseQpEvent(qp, event);
  // R15: both sides end in ERR.
  EnterError(qp, code == NakCode::kRemoteAccess ? "remote access violation"
                 : code == NakCode::kRemoteOp   ? "remote operational error (DMA failed)"
                                                : "invalid request", defer);
}

bool Nic::DeferFlushTo(Packet& resp, const Packet& req) const {
  // rxe runs a loopback response's receiver inline (rxe_loopback -> rxe_rcv): the requester
  // completes, and its own flush tasklets run, before the responder's rxe_qp_error.
  resp.responder_flush_after = profile().behaviour.loopback_response_before_responder_flush &&
                               req.src_nic == index_ && world_->lossless();
  resp.sent_by_post = req.sent_by_post;
  resp.responder_flush_first = resp.responder_flush_after && req.sent_by_post &&
                               req.kind == PacketKind::kReadReq &&
                               profile().behaviour.loopback_read_nak_flushes_responder_first;
  return resp.responder_flush_after;
}

bool Nic::SendAck(const Qp& qp, const Packet& req, bool may_defer_flush) {
  Packet ack;
  ack.kind = PacketKind::kAck;
  const bool deferred = may_defer_flush && DeferFlushTo(ack, req);
  ack.psn = PsnAdd(req.psn, req.npkts - 1);
  SendResponse(qp, req, std::move(ack));
  return deferred;
}

uint64_t Nic::RequestTransfersDone() const {
  // host_bus.h contract 3: the request's transfers so far took this much extra target time.
  // The contexts' fetch (request_contexts_ns_) is left out, as before this rule: a receive's
  // CQE may be visible before the QPC/MPT/MTT fetch is (profiles with a context cache).
  return world_->events().Now() + (bus_->delay_total() - request_delay_mark_);
}

void Nic::SendResponse(const Qp& qp, const Packet& req, Packet resp, uint64_t ready_ns,
                       uint64_t dma_bytes) {
  resp.transport = WireTransport(qp.type);
  resp.src_nic = index_;
  resp.dst_nic = req.src_nic;
  resp.src_qpn = qp.qpn;
  resp.dst_qpn = req.src_qpn;
  // host_bus.h contract 3: the extra target time of the request's transfers so far.
  const uint64_t extra = bus_->delay_total() - request_delay_mark_;
  world_->Transmit(std::move(resp), std::max(ready_ns, request_contexts_ns_) + extra,
                   profile().timing.nic.ack_ns, dma_bytes,
                   MtuBytes(qp.attr.path_mtu));
}

}  // namespace qptwin::model::engine
