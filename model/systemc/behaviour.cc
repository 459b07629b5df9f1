#include "model/systemc/behaviour.h"

#include <cerrno>

#include "spec/qp_state_table.h"

namespace qptwin::sc {

using engine::NakCode;
using engine::Packet;
using engine::PacketKind;

int KeyTable::Register(uint32_t key, const Region& r) {
  if (key == 0 || regions_.count(key) || r.length == 0 || (r.access & ~access::kKnownMask)) {
    return EINVAL;
  }
  regions_[key] = r;
  return 0;
}

int KeyTable::Deregister(uint32_t key) { return regions_.erase(key) ? 0 : EINVAL; }

bool KeyTable::Check(uint32_t key, uint32_t pd, uint64_t addr, uint64_t len,
                     AccessFlags need) const {
  auto it = regions_.find(key);
  if (it == regions_.end()) return false;
  const Region& r = it->second;
  if (r.pd != pd || (r.access & need) != need) return false;
  return addr >= r.addr && len <= r.length && addr - r.addr <= r.length - len;
}

void SetState(QpContext& qp, QpState s) {
  qp.state = s;
  qp.traced_state = static_cast<int>(s);
}

int ApplyModify(QpContext& qp, const ModifyArgs& a) {
  const QpState next = NextState(qp.state, a.state, a.mask);
  if (!IsModifyOk(qp.state, next, qp.type, a.mask)) return EINVAL;
  if (a.mask & attr::kAv) qp.dest_port = a.dest_port;
  if (a.mask & attr::kDestQpn) qp.dest_qpn = a.dest_qpn;
  if (a.mask & attr::kSqPsn) qp.sq_psn = a.sq_psn & 0xffffff;
  if (a.mask & attr::kRqPsn) qp.rq_psn = a.rq_psn & 0xffffff;
  if (a.mask & attr::kAccessFlags) qp.access = a.access;
  if (a.mask & attr::kQkey) qp.qkey = a.qkey;
  if (next == QpState::kReset) {
    qp.sq_pi = qp.sq_ci = qp.rq_pi = qp.rq_ci = 0;
    qp.outstanding.clear();
    qp.sq_occupancy = qp.rq_occupancy = 0;
  }
  SetState(qp, next);
  return 0;
}

bool OpcodeAllowed(QpType type, WrOpcode op) {
  const bool send = op == WrOpcode::kSend || op == WrOpcode::kSendWithImm;
  const bool write = op == WrOpcode::kRdmaWrite || op == WrOpcode::kRdmaWriteWithImm;
  switch (type) {
    case QpType::kRc: return send || write || op == WrOpcode::kRdmaRead;
    case QpType::kUc: return send || write;
    case QpType::kUd: return send;
    default: return false;
  }
}

PacketKind KindOf(WrOpcode op) {
  switch (op) {
    case WrOpcode::kRdmaWrite:
    case WrOpcode::kRdmaWriteWithImm: return PacketKind::kWrite;
    case WrOpcode::kRdmaRead: return PacketKind::kReadReq;
    default: return PacketKind::kSend;
  }
}

WcOpcode SendWcOpcode(WrOpcode op) {
  switch (op) {
    case WrOpcode::kRdmaWrite:
    case WrOpcode::kRdmaWriteWithImm: return WcOpcode::kRdmaWrite;
    case WrOpcode::kRdmaRead: return WcOpcode::kRdmaRead;
    default: return WcOpcode::kSend;
  }
}

NakCode CheckRemote(const QpContext& qp, const KeyTable& keys, const Packet& p) {
  AccessFlags need = 0;
  uint64_t len = p.data.size();
  if (p.kind == PacketKind::kWrite) {
    need = access::kRemoteWrite;
  } else if (p.kind == PacketKind::kReadReq) {
    need = access::kRemoteRead;
    len = p.length;
  } else {
    return NakCode::kNone;
  }
  // rxe_resp.c check_rkey: "A zero-byte op is not required to set an addr or rkey" (C9-88).
  if (len == 0) return NakCode::kNone;
  if ((qp.access & need) != need || !keys.Check(p.rkey, qp.pd, p.remote_addr, len, need)) {
    return NakCode::kRemoteAccess;
  }
  return NakCode::kNone;
}

WcStatus StatusOfNak(NakCode c) {
  switch (c) {
    case NakCode::kRemoteAccess: return WcStatus::kRemAccessErr;
    case NakCode::kInvalidRequest: return WcStatus::kRemInvReqErr;
    case NakCode::kRemoteOp: return WcStatus::kRemOpErr;
    case NakCode::kRnr: return WcStatus::kRnrRetryExcErr;
    case NakCode::kPsnSeqErr: return WcStatus::kRetryExcErr;
    default: return WcStatus::kSuccess;
  }
}

}  // namespace qptwin::sc
