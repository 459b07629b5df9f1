// The NIC's contract with host software: its MMIO register map, the command block that
// creates and modifies objects, and the layouts of send/receive WQEs and CQEs in host
// memory. Plain C++ (no SystemC): a driver, a test or a user's CPU model encodes with these.
//
// Contract:
//  1. All fields are little endian at the offsets below; Encode*/Decode* are exact inverses.
//  2. MMIO (the NIC's target socket, offsets from the NIC's BAR), 32- or 64-bit accesses:
//       0x0000 CMD_OP      (u32, write) executes the command in CMD_ARG0..7 (CmdOp below)
//       0x0004 CMD_STATUS  (u32, read)  errno of the last command (0: done), as libibverbs
//       0x0008 CMD_ARG0 .. 0x0040 CMD_ARG7 (u64, read/write)
//       0x1000 + 8*qpn     SQ doorbell (u32): the SQ producer index (WQEs posted, ever)
//       0x1004 + 8*qpn     RQ doorbell (u32): the RQ producer index
//     The host chooses QPNs (< kMaxQps), CQNs (< kMaxCqs) and keys in its commands (a
//     simplification: mlx5's firmware assigns them and returns them in its command mailbox).
//     A command costs the host ControlTiming's figure as annotated delay on the CMD_OP write.
//  3. Rings live in host memory: a send queue of sq_entries WQEs of kWqeBytes, WQE i at
//     sq_addr + (i % sq_entries) * kWqeBytes (the same for the RQ); a CQ of cq_entries CQEs
//     of kCqeBytes. A CQE is valid when its owner byte equals the pass bit: 1 on the first
//     pass through the ring, 0 on the second, and so on (mlx5's owner bit, inverted sense).
//     The NIC does not check CQ overflow (the host sizes its CQ).
//  4. Keys: lkey == rkey == the key given to kRegMr; a region is [addr, addr + length) of
//     host physical addresses (no IOMMU, no zero-based regions).
#pragma once

#include <cstdint>

#include "spec/vocabulary.h"

namespace qptwin::sc {

inline constexpr uint64_t kRegCmdOp = 0x0000;
inline constexpr uint64_t kRegCmdStatus = 0x0004;
inline constexpr uint64_t kRegCmdArg0 = 0x0008;  // CMD_ARGi at kRegCmdArg0 + 8 * i
inline constexpr int kCmdArgs = 8;
inline constexpr uint64_t kRegDoorbell = 0x1000;  // + 8 * qpn: SQ PI; + 4: RQ PI
inline constexpr uint32_t kMaxQps = 512;
inline constexpr uint32_t kMaxCqs = 64;
inline constexpr uint64_t kBarBytes = kRegDoorbell + 8 * kMaxQps;

inline constexpr uint64_t SqDoorbell(uint32_t qpn) { return kRegDoorbell + 8ull * qpn; }
inline constexpr uint64_t RqDoorbell(uint32_t qpn) { return kRegDoorbell + 8ull * qpn + 4; }

// Commands; arguments by index.
enum class CmdOp : uint32_t {
  kNop = 0,
  kCreateCq = 1,   // 0 cqn, 1 ring address, 2 entries
  kCreateQp = 2,   // 0 qpn, 1 QpType, 2 sq address, 3 sq entries, 4 rq address,
                   // 5 rq entries, 6 send cqn | recv cqn << 32, 7 pd
  kModifyQp = 3,   // 0 qpn, 1 AttrMask, 2 QpState, 3 destination port (the Switch's port of
                   // the peer NIC), 4 dest qpn, 5 sq psn | rq psn << 32, 6 access, 7 qkey
  kRegMr = 4,      // 0 key, 1 pd, 2 address, 3 length, 4 AccessFlags
  kDeregMr = 5,    // 0 key
  kDestroyQp = 6,  // 0 qpn
};

// A send WQE (64 bytes) and, with the same layout, a receive WQE (opcode/remote unused).
//   0 u8 WrOpcode   1 u8 SendFlags   2 u16 0   4 u32 imm (host order)   8 u64 wr_id
//  16 u64 local addr   24 u32 length   28 u32 lkey   32 u64 remote addr   40 u32 rkey
//  44 u32 UD: dest qpn   48 u32 UD: qkey   52 u32 UD: destination port   56..63 0
inline constexpr uint32_t kWqeBytes = 64;
struct Wqe {
  WrOpcode opcode = WrOpcode::kSend;
  uint8_t flags = 0;  // send_flag::k* (kSignaled, kSolicited)
  uint32_t imm = 0;
  uint64_t wr_id = 0;
  uint64_t addr = 0;
  uint32_t length = 0;
  uint32_t lkey = 0;
  uint64_t remote_addr = 0;
  uint32_t rkey = 0;
  uint32_t ud_qpn = 0;
  uint32_t ud_qkey = 0;
  uint32_t ud_port = 0;
};
void EncodeWqe(const Wqe& w, uint8_t out[kWqeBytes]);
Wqe DecodeWqe(const uint8_t in[kWqeBytes]);

// A CQE (32 bytes):
//   0 u64 wr_id   8 u32 byte_len   12 u32 imm   16 u32 qpn   20 u32 src_qp
//  24 u8 WcStatus  25 u8 WcOpcode  26 u8 wc_flags (kWithImm)  27..30 0  31 u8 owner
inline constexpr uint32_t kCqeBytes = 32;
struct Cqe {
  uint64_t wr_id = 0;
  uint32_t byte_len = 0;
  uint32_t imm = 0;
  uint32_t qpn = 0;
  uint32_t src_qp = 0;
  WcStatus status = WcStatus::kSuccess;
  WcOpcode opcode = WcOpcode::kSend;
  uint8_t wc_flags = 0;
  uint8_t owner = 0;
};
void EncodeCqe(const Cqe& c, uint8_t out[kCqeBytes]);
Cqe DecodeCqe(const uint8_t in[kCqeBytes]);

// The owner byte of the CQE written at CQ producer index `pi` of a ring of `entries`.
inline constexpr uint8_t OwnerOf(uint32_t pi, uint32_t entries) {
  return ((pi / entries) & 1) ? 0 : 1;
}

}  // namespace qptwin::sc
