#include "model/engine/packet.h"

#include <array>

namespace qptwin::model::engine {
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

}  // namespace qptwin::model::engine
