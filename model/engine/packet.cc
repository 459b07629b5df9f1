#include "model/engine/packet.h"

#include <array>
#include <cstring>

namespace qptwin::model::engine {
namespace {
// ImmDt or IETH: 4 bytes after the BTH (and RETH).
uint32_t Ext(const Packet& pkt) { return pkt.has_imm || pkt.has_inv ? 4 : 0; }
}  // namespace
namespace {

constexpr std::array<std::string_view, kNumPacketKinds> kKindNames = {
    "SEND", "WRITE", "READ_REQ", "ATOMIC", "ACK", "NAK", "READ_RESP", "ATOMIC_RESP"};
static_assert(kKindNames.size() == static_cast<size_t>(PacketKind::kAtomicResp) + 1);

constexpr std::array<std::string_view, kNumNakCodes> kNakNames = {
    "NONE", "RNR", "PSN_SEQ_ERR", "INVALID_REQUEST", "REMOTE_ACCESS", "REMOTE_OP"};
static_assert(kNakNames.size() == static_cast<size_t>(NakCode::kRemoteOp) + 1);

}  // namespace

std::string_view ToName(PacketKind k) {
  size_t i = static_cast<size_t>(k);
  return i < kKindNames.size() ? kKindNames[i] : "?";
}

std::string_view ToName(NakCode c) {
  size_t i = static_cast<size_t>(c);
  return i < kNakNames.size() ? kNakNames[i] : "?";
}

std::string Describe(const Packet& p) {
  std::string s(ToName(p.kind));
  if (p.kind == PacketKind::kNak) s += "(" + std::string(ToName(p.nak)) + ")";
  s += " psn=" + std::to_string(p.psn) + " n=" + std::to_string(p.npkts) + " " +
       std::to_string(p.src_nic) + "->" + std::to_string(p.dst_nic) + " qpn " +
       std::to_string(p.src_qpn) + "->" + std::to_string(p.dst_qpn) + " " +
       std::to_string(p.data.size()) + "B";
  return s;
}

namespace {

constexpr size_t kGrhBytes = 40;

bool IsV4Mapped(const Gid& g) {
  for (int i = 0; i < 10; ++i) {
    if (g.raw[i] != 0) return false;
  }
  return g.raw[10] == 0xff && g.raw[11] == 0xff;
}

}  // namespace

std::vector<uint8_t> NetworkHeader(const Packet& pkt, const Gid& dgid) {
  std::vector<uint8_t> h(kGrhBytes, 0);
  if (!IsV4Mapped(pkt.sgid)) {  // RoCE v2 over IPv6: the IPv6 header is the GRH
    h[0] = 0x60 | (pkt.traffic_class >> 4);
    h[1] = static_cast<uint8_t>(pkt.traffic_class << 4);
    const uint32_t payload = 8 + 12 + 8 + Ext(pkt) + pkt.data.size() + 4;
    h[4] = static_cast<uint8_t>(payload >> 8);
    h[5] = static_cast<uint8_t>(payload);
    h[6] = 17;  // next header: UDP
    h[7] = pkt.hop_limit;
    std::memcpy(&h[8], pkt.sgid.raw.data(), 16);
    std::memcpy(&h[24], dgid.raw.data(), 16);
    return h;
  }
  // rxe_resp.c build_rdma_network_hdr: union rdma_network_hdr puts the IPv4 header in the
  // last 20 bytes (20 reserved zero bytes first). Measured on rxe: version/IHL 0x45, total
  // length IP+UDP+BTH+DETH+payload+ICRC, DF, TTL = the AV's hop limit, UDP, checksum 0.
  // The identification rxe's IP stack picks is not modelled (0 here).
  uint8_t* ip = &h[20];
  const uint32_t total = 20 + 8 + 12 + 8 + Ext(pkt) + pkt.data.size() + 4;
  ip[0] = 0x45;
  ip[1] = pkt.traffic_class;
  ip[2] = static_cast<uint8_t>(total >> 8);
  ip[3] = static_cast<uint8_t>(total);
  ip[6] = 0x40;  // DF
  ip[8] = pkt.hop_limit;
  ip[9] = 17;  // UDP
  std::memcpy(&ip[12], &pkt.sgid.raw[12], 4);
  std::memcpy(&ip[16], &dgid.raw[12], 4);
  return h;
}

}  // namespace qptwin::model::engine
