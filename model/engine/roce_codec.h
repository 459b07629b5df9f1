// RoCE v2 datagrams <-> the engine's messages (issue 13: several processes). Pure code: no
// sockets (tools/exec owns those).
//
// Contract:
//  1. EncodeRoce cuts one Packet (a whole message, packet.h) into the UDP payloads of its
//     MTU-sized packets: BTH, then the extension headers of the opcode and position in the
//     order of IBTA 9.2 (XRCETH, DETH, RETH, AtomicETH, AETH, AtomicAckETH, ImmDt, IETH),
//     big-endian, payload padded to 4 (BTH PadCnt), then the ICRC: CRC-32 over the masked
//     pseudo-header (8 bytes of 1s for the LRH, the IPv4 header with TOS, TTL and checksum
//     set to 1s, the UDP header with checksum 1s, the BTH with its reserved byte 4 set to
//     1s), the rest of the headers and the padded payload, inverted and stored
//     little-endian (RoCE v2 annex A17.3.3; rxe_icrc.c). The IPv4 header assumed is the one
//     Linux sends from an unconnected socket with DF set: ID 0, flags DF.
//  2. Packet i of n carries PSN psn + i and the opcode FIRST/MIDDLE/LAST/ONLY of its
//     position; RC/XRC requests set AckReq on their last packet.
//  3. RoceReassembler::Feed decodes one datagram; it never reads outside [data, data + len).
//     A message is returned once its last packet arrived in PSN order (FIRST, MIDDLE...,
//     LAST, or ONLY); anything else (short, unknown opcode, wrong ICRC, a packet out of
//     sequence) is rejected with a reason and drops the partial message of that stream, as
//     a lost packet would (the requester's retransmission recovers RC).
//  4. Streams are keyed by (sender address and port, destination QP, request/response):
//     the packets of one message arrive in order on one stream (a port sends in order).
//  5. What a datagram does not carry is left at Packet's defaults: src_nic, dst_nic, and for
//     RC/UC/XRC the source QPN (BTH names only the destination); the caller fills them.
//     sgid is the sender's IPv4 address, IPv4-mapped.
#pragma once

#include <cstdint>
#include <map>
#include <string_view>
#include <tuple>
#include <vector>

#include "model/engine/packet.h"

namespace qptwin::model::engine {

inline constexpr uint16_t kRoceUdpPort = 4791;  // IANA, RoCE v2

struct RoceEndpoints {  // host byte order
  uint32_t src_ip = 0;
  uint32_t dst_ip = 0;
  uint16_t src_port = kRoceUdpPort;
  uint16_t dst_port = kRoceUdpPort;
};

// The IPv4 address of an IPv4-mapped GID (::ffff:a.b.c.d), false for any other GID.
bool GidToIpv4(const Gid& gid, uint32_t* ip);
Gid Ipv4ToGid(uint32_t ip);

// The UDP payloads of `pkt` with path MTU `mtu` (bytes), appended to *out.
void EncodeRoce(const Packet& pkt, uint32_t mtu, const RoceEndpoints& ep,
                std::vector<std::vector<uint8_t>>* out);

// CRC-32 (IEEE 802.3, reflected, as crc32_le) continuing from `crc`, no inversion.
uint32_t Crc32Le(uint32_t crc, const uint8_t* p, size_t n);
// The ICRC the datagram `d` (UDP payload, ICRC included at its end) must carry.
uint32_t RoceIcrc(const uint8_t* d, size_t len, const RoceEndpoints& ep);

enum class RoceResult : uint8_t {
  kMessage,     // *out holds a whole message
  kPartial,     // a FIRST or MIDDLE packet, kept
  kMalformed,   // too short, bad version, unknown opcode, headers past the end
  kBadIcrc,
  kOutOfOrder,  // MIDDLE/LAST without its FIRST, a PSN gap, a length that does not add up
};
inline constexpr int kNumRoceResults = 5;
std::string_view ToName(RoceResult r);

class RoceReassembler {
 public:
  // Messages larger than this are rejected (kOutOfOrder) rather than buffered.
  static constexpr size_t kMaxMessage = size_t{1} << 31;

  RoceResult Feed(const uint8_t* data, size_t len, const RoceEndpoints& ep, Packet* out);
  size_t partial_streams() const { return partial_.size(); }

 private:
  struct Partial {
    Packet head;  // the FIRST packet's headers
    uint32_t next_psn = 0;
    uint32_t npkts = 0;
    std::vector<uint8_t> data;
  };
  using Key = std::tuple<uint32_t, uint16_t, uint32_t, bool>;
  std::map<Key, Partial> partial_;
};

}  // namespace qptwin::model::engine
