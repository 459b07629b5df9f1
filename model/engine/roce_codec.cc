#include "model/engine/roce_codec.h"

#include <algorithm>
#include <array>
#include <cstring>

#include "model/wire.h"

namespace qptwin::model::engine {
namespace {

// BTH opcodes (IBTA 9.2, table 38): the transport in bits 7-5, the operation in 4-0.
constexpr uint8_t kRc = 0x00, kUc = 0x20, kUd = 0x60, kXrc = 0xa0;
enum Op : uint8_t {
  kSendFirst = 0x00, kSendMiddle = 0x01, kSendLast = 0x02, kSendLastImm = 0x03,
  kSendOnly = 0x04, kSendOnlyImm = 0x05, kWriteFirst = 0x06, kWriteMiddle = 0x07,
  kWriteLast = 0x08, kWriteLastImm = 0x09, kWriteOnly = 0x0a, kWriteOnlyImm = 0x0b,
  kReadRequest = 0x0c, kReadRespFirst = 0x0d, kReadRespMiddle = 0x0e, kReadRespLast = 0x0f,
  kReadRespOnly = 0x10, kAcknowledge = 0x11, kAtomicAcknowledge = 0x12, kCmpSwap = 0x13,
  kFetchAdd = 0x14, kSendLastInv = 0x16, kSendOnlyInv = 0x17,
};

constexpr size_t kBth = 12, kXrceth = 4, kDeth = 8, kReth = 16, kAtomicEth = 28, kAeth = 4,
                 kAtomicAckEth = 8, kImmDt = 4, kIeth = 4, kIcrc = 4;

// What follows the BTH for one opcode (rxe_opcode.c's mask per opcode).
struct Layout {
  bool valid = false;
  PacketKind kind = PacketKind::kSend;
  PacketPos pos = PacketPos::kOnly;
  bool xrceth = false, deth = false, reth = false, atomic = false, aeth = false,
       atomic_ack = false, imm = false, ieth = false, payload = false;
  WrOpcode op = WrOpcode::kSend;
};

bool TransportOf(uint8_t prefix, QpType* t) {
  switch (prefix) {
    case kRc: *t = QpType::kRc; return true;
    case kUc: *t = QpType::kUc; return true;
    case kUd: *t = QpType::kUd; return true;
    case kXrc: *t = QpType::kXrcSend; return true;
    default: return false;
  }
}

Layout LayoutOf(uint8_t opcode) {
  Layout l;
  QpType t;
  if (!TransportOf(opcode & 0xe0, &t)) return l;
  const uint8_t op = opcode & 0x1f;
  auto set = [&](PacketKind k, PacketPos p, WrOpcode w) {
    l.valid = true;
    l.kind = k;
    l.pos = p;
    l.op = w;
  };
  switch (op) {
    case kSendFirst: set(PacketKind::kSend, PacketPos::kFirst, WrOpcode::kSend); break;
    case kSendMiddle: set(PacketKind::kSend, PacketPos::kMiddle, WrOpcode::kSend); break;
    case kSendLast: set(PacketKind::kSend, PacketPos::kLast, WrOpcode::kSend); break;
    case kSendLastImm: set(PacketKind::kSend, PacketPos::kLast, WrOpcode::kSendWithImm); break;
    case kSendOnly: set(PacketKind::kSend, PacketPos::kOnly, WrOpcode::kSend); break;
    case kSendOnlyImm: set(PacketKind::kSend, PacketPos::kOnly, WrOpcode::kSendWithImm); break;
    case kSendLastInv: set(PacketKind::kSend, PacketPos::kLast, WrOpcode::kSendWithInv); break;
    case kSendOnlyInv: set(PacketKind::kSend, PacketPos::kOnly, WrOpcode::kSendWithInv); break;
    case kWriteFirst: set(PacketKind::kWrite, PacketPos::kFirst, WrOpcode::kRdmaWrite); break;
    case kWriteMiddle: set(PacketKind::kWrite, PacketPos::kMiddle, WrOpcode::kRdmaWrite); break;
    case kWriteLast: set(PacketKind::kWrite, PacketPos::kLast, WrOpcode::kRdmaWrite); break;
    case kWriteLastImm:
      set(PacketKind::kWrite, PacketPos::kLast, WrOpcode::kRdmaWriteWithImm);
      break;
    case kWriteOnly: set(PacketKind::kWrite, PacketPos::kOnly, WrOpcode::kRdmaWrite); break;
    case kWriteOnlyImm:
      set(PacketKind::kWrite, PacketPos::kOnly, WrOpcode::kRdmaWriteWithImm);
      break;
    case kReadRequest: set(PacketKind::kReadReq, PacketPos::kOnly, WrOpcode::kRdmaRead); break;
    case kReadRespFirst: set(PacketKind::kReadResp, PacketPos::kFirst, WrOpcode::kRdmaRead); break;
    case kReadRespMiddle:
      set(PacketKind::kReadResp, PacketPos::kMiddle, WrOpcode::kRdmaRead);
      break;
    case kReadRespLast: set(PacketKind::kReadResp, PacketPos::kLast, WrOpcode::kRdmaRead); break;
    case kReadRespOnly: set(PacketKind::kReadResp, PacketPos::kOnly, WrOpcode::kRdmaRead); break;
    case kAcknowledge: set(PacketKind::kAck, PacketPos::kOnly, WrOpcode::kSend); break;
    case kAtomicAcknowledge:
      set(PacketKind::kAtomicResp, PacketPos::kOnly, WrOpcode::kSend);
      break;
    case kCmpSwap: set(PacketKind::kAtomic, PacketPos::kOnly, WrOpcode::kAtomicCmpAndSwp); break;
    case kFetchAdd:
      set(PacketKind::kAtomic, PacketPos::kOnly, WrOpcode::kAtomicFetchAndAdd);
      break;
    default: return l;
  }
  // Which opcodes each transport has (IBTA table 38): UC sends and writes, UD SEND_ONLY.
  if (t == QpType::kUc && l.kind != PacketKind::kSend && l.kind != PacketKind::kWrite) l.valid = false;
  if (t == QpType::kUc && l.op == WrOpcode::kSendWithInv) l.valid = false;
  if (t == QpType::kUd && (op != kSendOnly && op != kSendOnlyImm)) l.valid = false;
  if (!l.valid) return l;
  const bool first = l.pos == PacketPos::kFirst || l.pos == PacketPos::kOnly;
  const bool last = l.pos == PacketPos::kLast || l.pos == PacketPos::kOnly;
  l.xrceth = t == QpType::kXrcSend && IsRequest(l.kind);
  l.deth = t == QpType::kUd;
  l.reth = (l.kind == PacketKind::kWrite && first) || l.kind == PacketKind::kReadReq;
  l.atomic = l.kind == PacketKind::kAtomic;
  l.aeth = l.kind == PacketKind::kAck || l.kind == PacketKind::kAtomicResp ||
           (l.kind == PacketKind::kReadResp && l.pos != PacketPos::kMiddle);
  l.atomic_ack = l.kind == PacketKind::kAtomicResp;
  l.imm = last && (l.op == WrOpcode::kSendWithImm || l.op == WrOpcode::kRdmaWriteWithImm);
  l.ieth = last && l.op == WrOpcode::kSendWithInv;
  l.payload = l.kind == PacketKind::kSend || l.kind == PacketKind::kWrite ||
              l.kind == PacketKind::kReadResp;
  return l;
}

uint8_t PrefixOf(QpType t) {
  switch (t) {
    case QpType::kUc: return kUc;
    case QpType::kUd: return kUd;
    case QpType::kXrcSend:
    case QpType::kXrcRecv: return kXrc;
    default: return kRc;
  }
}

uint8_t OpcodeOf(const Packet& p, PacketPos pos) {
  const bool imm = p.has_imm, inv = p.has_inv;
  uint8_t op = kAcknowledge;
  switch (p.kind) {
    case PacketKind::kSend:
      switch (pos) {
        case PacketPos::kFirst: op = kSendFirst; break;
        case PacketPos::kMiddle: op = kSendMiddle; break;
        case PacketPos::kLast: op = inv ? kSendLastInv : imm ? kSendLastImm : kSendLast; break;
        case PacketPos::kOnly: op = inv ? kSendOnlyInv : imm ? kSendOnlyImm : kSendOnly; break;
      }
      break;
    case PacketKind::kWrite:
      switch (pos) {
        case PacketPos::kFirst: op = kWriteFirst; break;
        case PacketPos::kMiddle: op = kWriteMiddle; break;
        case PacketPos::kLast: op = imm ? kWriteLastImm : kWriteLast; break;
        case PacketPos::kOnly: op = imm ? kWriteOnlyImm : kWriteOnly; break;
      }
      break;
    case PacketKind::kReadReq: op = kReadRequest; break;
    case PacketKind::kAtomic:
      op = p.op == WrOpcode::kAtomicCmpAndSwp ? kCmpSwap : kFetchAdd;
      break;
    case PacketKind::kReadResp:
      switch (pos) {
        case PacketPos::kFirst: op = kReadRespFirst; break;
        case PacketPos::kMiddle: op = kReadRespMiddle; break;
        case PacketPos::kLast: op = kReadRespLast; break;
        case PacketPos::kOnly: op = kReadRespOnly; break;
      }
      break;
    case PacketKind::kAtomicResp: op = kAtomicAcknowledge; break;
    case PacketKind::kAck:
    case PacketKind::kNak: op = kAcknowledge; break;
  }
  return PrefixOf(p.transport) | op;
}

// AETH syndrome (IBTA 9.7.5.2.1): 0b00xxxxx ACK (credits; 0x1f: none counted), 0b01ttttt
// RNR NAK with its timer, 0b11ccccc NAK with its code.
uint8_t SyndromeOf(const Packet& p) {
  if (p.kind != PacketKind::kNak) return 0x1f;
  switch (p.nak) {
    case NakCode::kRnr: return static_cast<uint8_t>(0x20 | (p.rnr_timer & 0x1f));
    case NakCode::kPsnSeqErr: return 0x60;
    case NakCode::kInvalidRequest: return 0x61;
    case NakCode::kRemoteAccess: return 0x62;
    case NakCode::kRemoteOp: return 0x63;
    case NakCode::kNone: return 0x1f;
  }
  return 0x1f;
}

bool FromSyndrome(uint8_t s, Packet* p) {
  switch (s >> 5) {
    case 0: return true;  // ACK
    case 1:
      p->kind = PacketKind::kNak;
      p->nak = NakCode::kRnr;
      p->rnr_timer = s & 0x1f;
      return true;
    case 3:
      p->kind = PacketKind::kNak;
      switch (s & 0x1f) {
        case 0: p->nak = NakCode::kPsnSeqErr; return true;
        case 1: p->nak = NakCode::kInvalidRequest; return true;
        case 2: p->nak = NakCode::kRemoteAccess; return true;
        case 3: p->nak = NakCode::kRemoteOp; return true;
        default: return false;
      }
    default: return false;
  }
}

void Put16(std::vector<uint8_t>* b, uint16_t v) {
  b->push_back(static_cast<uint8_t>(v >> 8));
  b->push_back(static_cast<uint8_t>(v));
}
void Put32(std::vector<uint8_t>* b, uint32_t v) {
  Put16(b, static_cast<uint16_t>(v >> 16));
  Put16(b, static_cast<uint16_t>(v));
}
void Put64(std::vector<uint8_t>* b, uint64_t v) {
  Put32(b, static_cast<uint32_t>(v >> 32));
  Put32(b, static_cast<uint32_t>(v));
}
uint32_t Get32(const uint8_t* p) {
  return uint32_t{p[0]} << 24 | uint32_t{p[1]} << 16 | uint32_t{p[2]} << 8 | p[3];
}
uint64_t Get64(const uint8_t* p) { return uint64_t{Get32(p)} << 32 | Get32(p + 4); }

const std::array<uint32_t, 256>& CrcTable() {
  static const std::array<uint32_t, 256> table = [] {
    std::array<uint32_t, 256> t{};
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t c = i;
      for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xedb88320u ^ (c >> 1) : c >> 1;
      t[i] = c;
    }
    return t;
  }();
  return table;
}

// Size of the headers after the BTH.
size_t ExtLength(const Layout& l) {
  return (l.xrceth ? kXrceth : 0) + (l.deth ? kDeth : 0) + (l.reth ? kReth : 0) +
         (l.atomic ? kAtomicEth : 0) + (l.aeth ? kAeth : 0) +
         (l.atomic_ack ? kAtomicAckEth : 0) + (l.imm ? kImmDt : 0) + (l.ieth ? kIeth : 0);
}

}  // namespace

bool GidToIpv4(const Gid& gid, uint32_t* ip) {
  for (int i = 0; i < 10; ++i) {
    if (gid.raw[i] != 0) return false;
  }
  if (gid.raw[10] != 0xff || gid.raw[11] != 0xff) return false;
  *ip = Get32(&gid.raw[12]);
  return true;
}

Gid Ipv4ToGid(uint32_t ip) {
  Gid g;
  g.raw[10] = 0xff;
  g.raw[11] = 0xff;
  g.raw[12] = static_cast<uint8_t>(ip >> 24);
  g.raw[13] = static_cast<uint8_t>(ip >> 16);
  g.raw[14] = static_cast<uint8_t>(ip >> 8);
  g.raw[15] = static_cast<uint8_t>(ip);
  return g;
}

uint32_t Crc32Le(uint32_t crc, const uint8_t* p, size_t n) {
  const auto& t = CrcTable();
  for (size_t i = 0; i < n; ++i) crc = t[(crc ^ p[i]) & 0xff] ^ (crc >> 8);
  return crc;
}

uint32_t RoceIcrc(const uint8_t* d, size_t len, const RoceEndpoints& ep) {
  // The masked pseudo-header: LRH (8 bytes of 1s), IPv4, UDP, BTH (rxe_icrc.c).
  uint8_t ph[8 + 20 + 8 + kBth];
  std::memset(ph, 0xff, 8);
  uint8_t* ip = ph + 8;
  const uint16_t udp_len = static_cast<uint16_t>(8 + len);
  const uint16_t ip_len = static_cast<uint16_t>(20 + udp_len);
  const uint8_t ip_hdr[20] = {0x45, 0xff, static_cast<uint8_t>(ip_len >> 8),
                              static_cast<uint8_t>(ip_len), 0, 0, 0x40, 0, 0xff, 17, 0xff, 0xff,
                              static_cast<uint8_t>(ep.src_ip >> 24),
                              static_cast<uint8_t>(ep.src_ip >> 16),
                              static_cast<uint8_t>(ep.src_ip >> 8), static_cast<uint8_t>(ep.src_ip),
                              static_cast<uint8_t>(ep.dst_ip >> 24),
                              static_cast<uint8_t>(ep.dst_ip >> 16),
                              static_cast<uint8_t>(ep.dst_ip >> 8), static_cast<uint8_t>(ep.dst_ip)};
  std::memcpy(ip, ip_hdr, 20);
  uint8_t* udp = ip + 20;
  udp[0] = static_cast<uint8_t>(ep.src_port >> 8);
  udp[1] = static_cast<uint8_t>(ep.src_port);
  udp[2] = static_cast<uint8_t>(ep.dst_port >> 8);
  udp[3] = static_cast<uint8_t>(ep.dst_port);
  udp[4] = static_cast<uint8_t>(udp_len >> 8);
  udp[5] = static_cast<uint8_t>(udp_len);
  udp[6] = udp[7] = 0xff;
  uint8_t* bth = udp + 8;
  std::memcpy(bth, d, kBth);
  bth[4] = 0xff;  // FECN, BECN, reserved
  uint32_t crc = Crc32Le(0xffffffffu, ph, sizeof(ph));
  crc = Crc32Le(crc, d + kBth, len - kBth - kIcrc);
  return ~crc;
}

void EncodeRoce(const Packet& pkt, uint32_t mtu, const RoceEndpoints& ep,
                std::vector<std::vector<uint8_t>>* out) {
  if (mtu == 0) mtu = 4096;
  const bool payload = pkt.kind == PacketKind::kSend || pkt.kind == PacketKind::kWrite ||
                       pkt.kind == PacketKind::kReadResp;
  const size_t len = payload ? pkt.data.size() : 0;
  const uint32_t n = payload ? PacketCount(len, mtu) : 1;
  for (uint32_t i = 0; i < n; ++i) {
    const PacketPos pos = PositionOf(i, n);
    const uint8_t opcode = OpcodeOf(pkt, pos);
    const Layout l = LayoutOf(opcode);
    const size_t off = size_t{i} * mtu;
    const size_t chunk = payload ? std::min<size_t>(mtu, len - off) : 0;
    const uint8_t pad = static_cast<uint8_t>((4 - chunk % 4) % 4);
    std::vector<uint8_t> b;
    b.reserve(kBth + ExtLength(l) + chunk + pad + kIcrc);
    // BTH: opcode; SE, MigReq (0, as rxe), PadCnt, TVer; P_Key; reserved; DestQP; AckReq; PSN.
    const bool last = pos == PacketPos::kLast || pos == PacketPos::kOnly;
    b.push_back(opcode);
    b.push_back(static_cast<uint8_t>((pkt.solicited && last ? 0x80 : 0) | pad << 4));
    Put16(&b, 0xffff);
    Put32(&b, pkt.dst_qpn & 0xffffff);
    const bool ack_req = last && IsRequest(pkt.kind) &&
                         (pkt.transport == QpType::kRc || l.xrceth);
    Put32(&b, (ack_req ? 0x80000000u : 0) | PsnAdd(pkt.psn, i));
    if (l.xrceth) Put32(&b, pkt.xrc_srqn & 0xffffff);
    if (l.deth) {
      Put32(&b, pkt.qkey);
      Put32(&b, pkt.src_qpn & 0xffffff);
    }
    if (l.reth) {
      Put64(&b, pkt.remote_addr);
      Put32(&b, pkt.rkey);
      Put32(&b, pkt.kind == PacketKind::kReadReq ? pkt.length
                                                  : static_cast<uint32_t>(pkt.data.size()));
    }
    if (l.atomic) {
      Put64(&b, pkt.remote_addr);
      Put32(&b, pkt.rkey);
      const bool cas = pkt.op == WrOpcode::kAtomicCmpAndSwp;
      Put64(&b, cas ? pkt.swap : pkt.compare_add);  // Swap (or Add) Data
      Put64(&b, cas ? pkt.compare_add : 0);         // Compare Data
    }
    if (l.aeth) Put32(&b, uint32_t{SyndromeOf(pkt)} << 24);  // MSN: the model keeps none
    if (l.atomic_ack) Put64(&b, pkt.atomic_orig);
    if (l.imm || l.ieth) Put32(&b, pkt.imm);
    if (chunk) b.insert(b.end(), pkt.data.data() + off, pkt.data.data() + off + chunk);
    b.insert(b.end(), pad + kIcrc, 0);
    const uint32_t icrc = RoceIcrc(b.data(), b.size(), ep);
    for (int k = 0; k < 4; ++k) b[b.size() - 4 + k] = static_cast<uint8_t>(icrc >> (8 * k));
    out->push_back(std::move(b));
  }
}

std::string_view ToName(RoceResult r) {
  static constexpr std::string_view kNames[] = {"message", "partial", "malformed", "bad ICRC",
                                                "out of order"};
  static_assert(sizeof(kNames) / sizeof(kNames[0]) == kNumRoceResults);
  return kNames[static_cast<int>(r)];
}

RoceResult RoceReassembler::Feed(const uint8_t* d, size_t len, const RoceEndpoints& ep,
                                 Packet* out) {
  if (len < kBth + kIcrc) return RoceResult::kMalformed;
  const Layout l = LayoutOf(d[0]);
  if (!l.valid || (d[1] & 0x0f) != 0) return RoceResult::kMalformed;  // TVer 0
  const size_t ext = ExtLength(l);
  const size_t pad = (d[1] >> 4) & 3;
  if (len < kBth + ext + pad + kIcrc) return RoceResult::kMalformed;
  const size_t chunk = len - kBth - ext - pad - kIcrc;
  if (!l.payload && (chunk != 0 || pad != 0)) return RoceResult::kMalformed;
  uint32_t icrc = 0;
  for (int k = 0; k < 4; ++k) icrc |= uint32_t{d[len - 4 + k]} << (8 * k);
  if (icrc != RoceIcrc(d, len, ep)) return RoceResult::kBadIcrc;

  Packet p;
  (void)TransportOf(d[0] & 0xe0, &p.transport);
  p.kind = l.kind;
  p.op = l.op;
  p.solicited = (d[1] & 0x80) != 0;
  p.dst_qpn = Get32(d + 4) & 0xffffff;
  p.psn = Get32(d + 8) & 0xffffff;
  p.sgid = Ipv4ToGid(ep.src_ip);
  const uint8_t* h = d + kBth;
  uint32_t reth_len = 0;
  if (l.xrceth) {
    p.xrc_srqn = Get32(h) & 0xffffff;
    h += kXrceth;
  }
  if (l.deth) {
    p.qkey = Get32(h);
    p.src_qpn = Get32(h + 4) & 0xffffff;
    h += kDeth;
  }
  if (l.reth) {
    p.remote_addr = Get64(h);
    p.rkey = Get32(h + 8);
    reth_len = Get32(h + 12);
    if (l.kind == PacketKind::kReadReq) p.length = reth_len;
    h += kReth;
  }
  if (l.atomic) {
    p.remote_addr = Get64(h);
    p.rkey = Get32(h + 8);
    const uint64_t swap_add = Get64(h + 12), cmp = Get64(h + 20);
    if (l.op == WrOpcode::kAtomicCmpAndSwp) {
      p.swap = swap_add;
      p.compare_add = cmp;
    } else {
      p.compare_add = swap_add;
    }
    h += kAtomicEth;
  }
  if (l.aeth) {
    if (!FromSyndrome(h[0], &p)) return RoceResult::kMalformed;
    if (p.kind == PacketKind::kNak && l.kind != PacketKind::kAck) return RoceResult::kMalformed;
    h += kAeth;
  }
  if (l.atomic_ack) {
    p.atomic_orig = Get64(h);
    h += kAtomicAckEth;
  }
  if (l.imm || l.ieth) {
    p.has_imm = l.imm;
    p.has_inv = l.ieth;
    p.imm = Get32(h);
    h += 4;
  }

  const Key key{ep.src_ip, ep.src_port, p.dst_qpn, !IsRequest(l.kind)};
  auto it = partial_.find(key);
  const bool starts = l.pos == PacketPos::kFirst || l.pos == PacketPos::kOnly;
  if (starts) {
    if (it != partial_.end()) partial_.erase(it);  // its LAST was lost
    if (l.pos == PacketPos::kOnly) {
      if (l.kind == PacketKind::kWrite && reth_len != chunk) return RoceResult::kOutOfOrder;
      p.data.assign(h, h + chunk);
      p.npkts = 1;
      *out = std::move(p);
      return RoceResult::kMessage;
    }
    if (l.kind == PacketKind::kWrite && reth_len > kMaxMessage) return RoceResult::kOutOfOrder;
    Partial& part = partial_[key];
    part.data.assign(h, h + chunk);
    part.head = std::move(p);
    part.next_psn = PsnAdd(part.head.psn, 1);
    part.npkts = 1;
    if (l.kind == PacketKind::kWrite) part.head.length = reth_len;  // checked at LAST
    return RoceResult::kPartial;
  }
  // MIDDLE or LAST: continues the stream's message in PSN order.
  if (it == partial_.end()) return RoceResult::kOutOfOrder;
  Partial& part = it->second;
  if (part.head.kind != l.kind || part.next_psn != p.psn ||
      part.data.size() + chunk > kMaxMessage) {
    partial_.erase(it);
    return RoceResult::kOutOfOrder;
  }
  part.data.insert(part.data.end(), h, h + chunk);
  part.next_psn = PsnAdd(part.next_psn, 1);
  ++part.npkts;
  if (l.pos == PacketPos::kMiddle) return RoceResult::kPartial;
  Packet msg = std::move(part.head);
  const std::vector<uint8_t> data = std::move(part.data);
  const uint32_t npkts = part.npkts;
  partial_.erase(it);
  if (msg.kind == PacketKind::kWrite) {
    if (msg.length != data.size()) return RoceResult::kOutOfOrder;
    msg.length = 0;
  }
  // The last packet's own fields: immediate / invalidate, solicited, AETH.
  msg.op = l.op;
  msg.has_imm = p.has_imm;
  msg.has_inv = p.has_inv;
  msg.imm = p.imm;
  msg.solicited = p.solicited;
  if (l.kind == PacketKind::kReadResp) {
    msg.kind = p.kind;
    msg.nak = p.nak;
  }
  msg.data.assign(data.data(), data.data() + data.size());
  msg.npkts = npkts;
  *out = std::move(msg);
  return RoceResult::kMessage;
}

}  // namespace qptwin::model::engine
