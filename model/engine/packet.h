// What travels on the modelled wire. The model moves whole messages: one Packet stands
// for the `npkts` MTU-sized packets of a message (PSNs psn .. psn + npkts - 1), which is
// what timing, loss and PSN accounting use.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "spec/backend.h"
#include "spec/vocabulary.h"

namespace qptwin::model::engine {

enum class PacketKind : uint8_t {
  kSend,        // SEND / SEND_WITH_IMM
  kWrite,       // RDMA_WRITE / RDMA_WRITE_WITH_IMM
  kReadReq,
  kAtomic,      // CMP_AND_SWP / FETCH_AND_ADD
  kAck,
  kNak,
  kReadResp,
  kAtomicResp,
};
inline constexpr int kNumPacketKinds = 8;
inline bool IsRequest(PacketKind k) { return k <= PacketKind::kAtomic; }

// AETH NAK codes (IBTA 9.7.5.2.4 / rxe's aeth_syndrome).
enum class NakCode : uint8_t { kNone, kRnr, kPsnSeqErr, kInvalidRequest, kRemoteAccess, kRemoteOp };
inline constexpr int kNumNakCodes = 6;

std::string_view ToName(PacketKind k);
std::string_view ToName(NakCode c);

struct Packet {
  PacketKind kind = PacketKind::kSend;
  QpType transport = QpType::kRc;
  int src_nic = 0;
  int dst_nic = 0;
  uint32_t src_qpn = 0;
  uint32_t dst_qpn = 0;
  uint32_t psn = 0;
  uint32_t npkts = 1;
  WrOpcode op = WrOpcode::kSend;
  bool solicited = false;
  bool has_imm = false;
  uint32_t imm = 0;
  uint32_t qkey = 0;  // DETH (UD)
  // RoCE v2 IP header: the sender's GID and the AV's hop limit and traffic class (what
  // rxe copies into a UD receive's GRH area).
  Gid sgid;
  uint8_t hop_limit = 64;
  uint8_t traffic_class = 0;
  uint32_t xrc_srqn = 0;  // XRCETH (XRC requests): the target's XRC SRQ
  std::vector<uint8_t> data;
  // RETH / AtomicETH
  uint64_t remote_addr = 0;
  uint32_t rkey = 0;
  uint32_t length = 0;  // READ: bytes requested
  uint64_t compare_add = 0;
  uint64_t swap = 0;
  // AETH / responses
  NakCode nak = NakCode::kNone;
  uint8_t rnr_timer = 0;
  uint64_t atomic_orig = 0;
};

// One line for traces: "SEND psn=100 n=3 1->0 qpn 17->18 3000B".
std::string Describe(const Packet& p);

// The 40 bytes a UD receive gets in front of the data on RoCE v2 (responder.cc): the IPv6
// header, or for an IPv4-mapped sender GID 20 zero bytes and the IPv4 header.
std::vector<uint8_t> NetworkHeader(const Packet& pkt, const Gid& dgid);

// 24-bit PSN arithmetic: a <= b in the window of 2^23 (IBTA 9.7.1).
inline int32_t PsnDiff(uint32_t a, uint32_t b) {
  return static_cast<int32_t>((a - b) << 8) >> 8;
}
inline uint32_t PsnAdd(uint32_t a, uint32_t n) { return (a + n) & 0xffffff; }

}  // namespace qptwin::model::engine
