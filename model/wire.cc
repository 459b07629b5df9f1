#include "model/wire.h"

#include <array>

namespace qptwin::model {
namespace {

constexpr std::array<std::string_view, kNumWireOps> kWireOpNames = {
    "SEND", "WRITE", "READ_REQ", "READ_RESP", "ATOMIC", "ATOMIC_RESP", "ACK"};
static_assert(kWireOpNames.size() == static_cast<size_t>(WireOp::kAck) + 1);

// RoCE v2 (Annex A17): Ethernet II framing around IPv4/UDP (dport 4791).
constexpr uint32_t kPreambleIfg = 20;  // preamble 7 + SFD 1 + inter-frame gap 12
constexpr uint32_t kEthernet = 14;
constexpr uint32_t kFcs = 4;
constexpr uint32_t kIpv4 = 20;
constexpr uint32_t kUdp = 8;
constexpr uint32_t kMinFrame = 64;  // Ethernet header .. FCS
// InfiniBand local route header and variant CRC (IBTA 7.7, 7.8).
constexpr uint32_t kLrh = 8;
constexpr uint32_t kVcrc = 2;
// IB transport headers (IBTA 9.2-9.3).
constexpr uint32_t kBth = 12;
constexpr uint32_t kIcrc = 4;
constexpr uint32_t kReth = 16;
constexpr uint32_t kAeth = 4;
constexpr uint32_t kImmDt = 4;
constexpr uint32_t kAtomicEth = 28;
constexpr uint32_t kAtomicAckEth = 8;
constexpr uint32_t kDeth = 8;

uint32_t Transport(WireOp op, PacketPos pos, bool imm, bool ud) {
  const bool first = pos == PacketPos::kFirst || pos == PacketPos::kOnly;
  const bool last = pos == PacketPos::kLast || pos == PacketPos::kOnly;
  uint32_t b = kBth + kIcrc;
  switch (op) {
    case WireOp::kSend:
      if (ud) b += kDeth;
      if (last && imm) b += kImmDt;
      break;
    case WireOp::kWrite:
      if (first) b += kReth;
      if (last && imm) b += kImmDt;
      break;
    case WireOp::kReadReq: b += kReth; break;
    case WireOp::kReadResp:
      if (first || last) b += kAeth;
      break;
    case WireOp::kAtomic: b += kAtomicEth; break;
    case WireOp::kAtomicResp: b += kAeth + kAtomicAckEth; break;
    case WireOp::kAck: b += kAeth; break;
  }
  return b;
}

}  // namespace

std::string_view ToName(WireOp op) {
  size_t i = static_cast<size_t>(op);
  return i < kWireOpNames.size() ? kWireOpNames[i] : "?";
}

uint32_t PacketCount(uint64_t len, uint32_t mtu_bytes) {
  if (len == 0 || mtu_bytes == 0) return 1;
  return static_cast<uint32_t>((len + mtu_bytes - 1) / mtu_bytes);
}

PacketPos PositionOf(uint32_t i, uint32_t n) {
  if (n <= 1) return PacketPos::kOnly;
  if (i == 0) return PacketPos::kFirst;
  return i + 1 == n ? PacketPos::kLast : PacketPos::kMiddle;
}

uint32_t HeaderBytes(WireFormat f, WireOp op, PacketPos pos, bool imm, bool ud) {
  uint32_t t = Transport(op, pos, imm, ud);
  if (f == WireFormat::kInfiniBand) return kLrh + t + kVcrc;
  return kPreambleIfg + kEthernet + kIpv4 + kUdp + t + kFcs;
}

uint32_t PacketWireBytes(WireFormat f, WireOp op, PacketPos pos, bool imm, bool ud,
                         uint32_t payload) {
  uint32_t padded = (payload + 3) & ~3u;
  uint32_t bytes = HeaderBytes(f, op, pos, imm, ud) + padded;
  if (f == WireFormat::kRoceV2 && bytes - kPreambleIfg < kMinFrame) {
    bytes = kPreambleIfg + kMinFrame;
  }
  return bytes;
}

uint64_t SerializationPs(double gbps, uint64_t wire_bytes) {
  if (gbps <= 0) return 0;
  // bits / (Gb/s) = ns; x1000 for ps. Rounded up: a packet never takes less than its bits.
  double ps = static_cast<double>(wire_bytes) * 8000.0 / gbps;
  uint64_t whole = static_cast<uint64_t>(ps);
  return ps > static_cast<double>(whole) + 1e-6 ? whole + 1 : whole;
}

MessageWire WireOf(const LinkTiming& link, WireOp op, uint64_t payload, uint32_t mtu, bool imm,
                   bool ud) {
  MessageWire m;
  bool has_payload = op == WireOp::kSend || op == WireOp::kWrite || op == WireOp::kReadResp;
  uint64_t left = has_payload ? payload : 0;
  m.packets = PacketCount(left, mtu);
  for (uint32_t i = 0; i < m.packets; ++i) {
    uint32_t chunk = static_cast<uint32_t>(left < mtu ? left : mtu);
    left -= chunk;
    uint32_t bytes = PacketWireBytes(link.format, op, PositionOf(i, m.packets), imm, ud, chunk);
    m.wire_bytes += bytes;
    m.wire_ps += SerializationPs(link.gbps, bytes);
  }
  return m;
}

double GoodputBoundGbps(const LinkTiming& link, WireOp op, uint64_t payload, uint32_t mtu) {
  MessageWire m = WireOf(link, op, payload, mtu, false, false);
  if (m.wire_bytes == 0) return 0;
  return link.gbps * static_cast<double>(payload) / static_cast<double>(m.wire_bytes);
}

uint64_t WriteDoorbellToCqePs(const Timing& t, uint64_t bytes, uint32_t mtu, int switches) {
  const NicTiming& n = t.nic;
  const uint64_t one_way = (static_cast<uint64_t>(switches) + 1) * t.link.propagation_ns * 1000 +
                           static_cast<uint64_t>(switches) * t.link.switch_ns * 1000 +
                           n.rx_latency_ns * 1000;
  // timing.h contract 1: a PCIe rate of 0 is free, its round trip included (Nic::FetchWqes).
  const auto fetch = [&](uint64_t b) {
    return n.pcie_gbps > 0 ? n.pcie_read_ns * 1000 + SerializationPs(n.pcie_gbps, b) : 0;
  };
  return n.doorbell_ns * 1000 + fetch(n.wqe_bytes) + fetch(bytes) + n.tx_latency_ns * 1000 +
         WireOf(t.link, WireOp::kWrite, bytes, mtu, false, false).wire_ps + one_way +
         n.ack_ns * 1000 + WireOf(t.link, WireOp::kAck, 0, mtu, false, false).wire_ps + one_way +
         n.cqe_ns * 1000;
}

}  // namespace qptwin::model
