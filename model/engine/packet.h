// What travels on the modelled wire. The model moves whole messages: one Packet stands
// for the `npkts` MTU-sized packets of a message (PSNs psn .. psn + npkts - 1), which is
// what timing, loss and PSN accounting use.
#pragma once

#include <cstdint>
#include <cstring>
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

// A message's bytes. Up to kInline bytes live inside the Packet (no heap block per small
// message: a queue of them stays one contiguous ring, issue 15); longer ones on the heap.
// The subset of std::vector<uint8_t> the engine uses; a move copies only size() bytes.
class Payload {
 public:
  static constexpr uint32_t kInline = 64;
  Payload() = default;
  Payload(const Payload& o) { assign(o.data(), o.data() + o.size_); }
  Payload(Payload&& o) noexcept { Take(o); }
  Payload& operator=(const Payload& o) {
    if (this != &o) assign(o.data(), o.data() + o.size_);
    return *this;
  }
  Payload& operator=(Payload&& o) noexcept {
    if (this != &o) {
      Free();
      Take(o);
    }
    return *this;
  }
  ~Payload() { Free(); }

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  uint8_t* data() { return cap_ > kInline ? heap_ : inline_; }
  const uint8_t* data() const { return cap_ > kInline ? heap_ : inline_; }
  const uint8_t* begin() const { return data(); }
  const uint8_t* end() const { return data() + size_; }
  // n bytes, their values unspecified (the caller writes them all).
  uint8_t* ResizeForOverwrite(size_t n) {
    if (n > cap_) {
      Free();
      heap_ = new uint8_t[n];
      cap_ = static_cast<uint32_t>(n);
    }
    size_ = static_cast<uint32_t>(n);
    return data();
  }
  void assign(const uint8_t* first, const uint8_t* last) {
    const size_t n = static_cast<size_t>(last - first);
    if (n) std::memcpy(ResizeForOverwrite(n), first, n);
    size_ = static_cast<uint32_t>(n);
  }
  void clear() { size_ = 0; }

 private:
  void Free() {
    if (cap_ > kInline) delete[] heap_;
    cap_ = kInline;
    size_ = 0;
  }
  void Take(Payload& o) {
    size_ = o.size_;
    cap_ = o.cap_;
    if (o.cap_ > kInline) {
      heap_ = o.heap_;
    } else if (o.size_) {
      std::memcpy(inline_, o.inline_, o.size_);
    }
    o.cap_ = kInline;
    o.size_ = 0;
  }

  uint32_t size_ = 0;
  uint32_t cap_ = kInline;  // > kInline: the bytes are at heap_
  union {
    uint8_t inline_[kInline];
    uint8_t* heap_;
  };
};

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
  bool has_inv = false;  // SEND_WITH_INV: IETH with the rkey to invalidate in `imm`
  uint32_t qkey = 0;  // DETH (UD)
  // RoCE v2 IP header: the sender's GID and the AV's hop limit and traffic class (what
  // rxe copies into a UD receive's GRH area).
  Gid sgid;
  uint8_t hop_limit = 64;
  uint8_t traffic_class = 0;
  uint32_t xrc_srqn = 0;  // XRCETH (XRC requests): the target's XRC SRQ
  Payload data;
  // RETH / AtomicETH
  uint64_t remote_addr = 0;
  uint32_t rkey = 0;
  uint32_t length = 0;  // READ: bytes requested
  uint64_t compare_add = 0;
  uint64_t swap = 0;
  // AETH / responses
  NakCode nak = NakCode::kNone;
  uint32_t drawn_by_psn = 0;  // a sequence NAK: the PSN of the request that drew it
  uint8_t rnr_timer = 0;
  uint64_t atomic_orig = 0;
  // Behaviour::loopback_send_completes_after_receive: the sending UC/UD WQE (its serial),
  // completed by the receiving side once it has handled the message; 0: none.
  uint64_t sender_serial = 0;
  // Behaviour::loopback_response_before_responder_flush: the responder (src_qpn, same device)
  // entered ERR when it sent this response and flushes its queues once it has been handled.
  bool responder_flush_after = false;
  // Behaviour::loopback_read_nak_flushes_responder_first: the requester's flush waits for
  // the responder's (a READ request's response).
  bool responder_flush_first = false;
  // The request was sent by a post's own requester run (Behaviour::post_runs_requester), not
  // by a retry or a later wake-up; a response marked responder_flush_after copies it.
  bool sent_by_post = false;
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
