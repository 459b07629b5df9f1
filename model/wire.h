// Bytes and time on the wire, per packet and per message, for RoCE v2 and InfiniBand.
//
// Contract:
//  1. A message of n payload bytes is cut into PacketCount(n, mtu) packets (at least one);
//     every packet carries its own headers: the base headers of the format plus the
//     extension headers of its opcode and position (IBTA 9.2-9.4):
//       SEND        first/middle: -          last/only: ImmDt 4 if with immediate
//       WRITE       first: RETH 16  middle: -  last: ImmDt 4 if imm  only: RETH 16 (+ImmDt)
//       READ req    RETH 16 (no payload)      READ resp  first/last/only: AETH 4, middle: -
//       ATOMIC      AtomicETH 28              ATOMIC resp AETH 4 + AtomicAckETH 8
//       ACK/NAK     AETH 4                    UD SEND     + DETH 8
//  2. RoCE v2 base: preamble+SFD+IFG 20, Ethernet 14, FCS 4, IPv4 20, UDP 8, BTH 12, ICRC 4
//     (82 bytes), the frame (without preamble/IFG) at least 64 bytes. InfiniBand base: LRH 8,
//     BTH 12, ICRC 4, VCRC 2 (26 bytes). Payloads are padded to 4 bytes (BTH PadCnt).
//  3. Times are exact in picoseconds: bytes * 8000 / gbps, rounded up once per packet.
//  4. WriteDoorbellToCqePs: the one description of a NIC's latency the engine is checked
//     against (examples/systemc/write_latency_test, within its whole-ns rounding; wire_test
//     pins cx6-100g's figure): timing.h contract 2's path of one signaled single-packet RC
//     WRITE from the doorbell's arrival at the NIC until its CQE is visible to the host.
//     (The engine issues the CQE's write when the WQE completes, visible cqe_ns later:
//     model/engine/cq.h 5.)
#pragma once

#include <cstdint>
#include <string_view>

#include "model/timing.h"

namespace qptwin::model {

enum class WireOp : uint8_t { kSend, kWrite, kReadReq, kReadResp, kAtomic, kAtomicResp, kAck };
inline constexpr int kNumWireOps = 7;
enum class PacketPos : uint8_t { kOnly, kFirst, kMiddle, kLast };

std::string_view ToName(WireOp op);

// Packets of a message of `len` bytes with path MTU `mtu_bytes` (at least 1).
uint32_t PacketCount(uint64_t len, uint32_t mtu_bytes);
// Position of packet `i` of `n`.
PacketPos PositionOf(uint32_t i, uint32_t n);
// Header (and framing) bytes of one packet, payload padding excluded.
uint32_t HeaderBytes(WireFormat f, WireOp op, PacketPos pos, bool imm, bool ud);
// Bytes one packet occupies on the wire: headers + payload padded to 4 (+ Ethernet minimum).
uint32_t PacketWireBytes(WireFormat f, WireOp op, PacketPos pos, bool imm, bool ud,
                         uint32_t payload);
// Picoseconds one packet of `wire_bytes` occupies a link of `gbps`.
uint64_t SerializationPs(double gbps, uint64_t wire_bytes);

// SerializationPs with the answers for a few sizes kept: the data path asks the same few
// (a packet's size, an ACK's, a WQE's) packet after packet, and each answer is a division.
class SerializationMemo {
 public:
  uint64_t Ps(double gbps, uint64_t wire_bytes) {
    Entry& e = entries_[wire_bytes & (kEntries - 1)];
    if (e.bytes != wire_bytes || e.gbps != gbps) {
      e.gbps = gbps;
      e.bytes = wire_bytes;
      e.ps = SerializationPs(gbps, wire_bytes);
    }
    return e.ps;
  }

 private:
  static constexpr uint64_t kEntries = 8;
  struct Entry {
    double gbps = 0;  // SerializationPs(0, 0) is 0: an unused entry answers correctly
    uint64_t bytes = 0;
    uint64_t ps = 0;
  };
  Entry entries_[kEntries];
};

struct MessageWire {
  uint32_t packets = 0;
  uint64_t wire_bytes = 0;  // all packets, headers included
  uint64_t wire_ps = 0;     // sum of the packets' serialization times
};
// The packets of a message of `payload` bytes (READ response: the data; requests without
// payload: 0) on `link` with path MTU `mtu`.
MessageWire WireOf(const LinkTiming& link, WireOp op, uint64_t payload, uint32_t mtu, bool imm,
                   bool ud);

// Contract 4: doorbell_ns, the WQE fetch (pcie_read_ns + wqe_bytes at pcie_gbps), the
// payload read (pcie_read_ns + `bytes`), tx_latency_ns (tx_pkt_ns is the send engine's
// packet rate, not a lone message's latency: timing.h contract 3), the WRITE's wire time,
// `switches` switches and switches + 1 cables and rx_latency_ns each way, ack_ns and the
// ACK's wire time, then cqe_ns; in ps, each serialization exact (contract 3). `bytes` is
// at least 1 (a 0-byte WRITE reads no payload on the engine) and fits one packet of `mtu`.
uint64_t WriteDoorbellToCqePs(const Timing& t, uint64_t bytes, uint32_t mtu, int switches);

// The analytic goodput bound of a stream of back-to-back messages: payload bits per second
// (Gb/s) when only the link limits, all headers counted.
double GoodputBoundGbps(const LinkTiming& link, WireOp op, uint64_t payload, uint32_t mtu);

}  // namespace qptwin::model
