// A driver's commands to the NIC (issue 12, step (c)): the objects a driver asks firmware
// for (a PD, a region, CQs, QPs, their state) through registers in the NIC's MMIO space, so
// a program of its own (an ISS, a bare-metal test) sets up and runs the data path with no
// verbs call at all. mlx5 puts its commands in a queue in host memory with mailboxes; this
// is a simpler mailbox in registers, with mlx5's division of labour: the NIC assigns the
// numbers (PD, CQ and QP numbers, keys) and answers them, and the driver names where its
// queues go by a window of its memory map (kQueueMemory), as it allocates DMA memory for
// them.
//
// Contract:
//  1. Registers, offsets in the slot's MMIO space (model/sim/platform.h contract 13), little
//     endian, one mailbox per NIC shared by every initiator:
//       kOpOffset     (u32, write)  runs the command whose Op it names with CMD_IN0..7
//       kStatusOffset (u32, read)   the errno of the last command (0: done), as the verb
//                                   behind it returns it; EOPNOTSUPP for an unknown op
//       kInOffset + 8 i  (u64, read/write) CMD_IN i, i = 0..7 (kept until written again)
//       kOutOffset + 8 i (u64, read) CMD_OUT i, i = 0..7: the last command's answers, all 0
//                                   when it failed
//     A 4-byte access reaches half of a u64 register. Other offsets and sizes in the block,
//     and a read of CMD_OP, are TLM address or burst errors (no command runs).
//  2. A command is the verb behind it on a device of the newest model Backend alive (the
//     newest NIC on the slot whose target is open(): a Backend's Devices may keep its NIC
//     after it is gone), with that verb's
//     checks, errno and cost (the host's time, as the verb's own call). The objects belong to
//     one context of the device opened for the driver when its first command arrives; its
//     numbers are the driver's handles, and a number no object of that context has is
//     EINVAL. The context's objects live as long as the Backend (or until destroyed).
//  3. Queues a command makes take their rings from the device's queue memory (kQueueMemory,
//     model_backend.h ModelQueueMemoryAt: also its EINVAL for a range that wraps): a
//     CREATE_CQ, CREATE_SRQ or CREATE_QP without a window is EINVAL and makes nothing, and
//     the answer names where each ring and record is (model_backend.h
//     ModelCqRing, ModelSendRing, ModelRecvRing give the layouts). A driver puts a queue
//     where it wants by naming that queue's own buffer as the window just before the
//     create (RESIZE_CQ's and MODIFY_SRQ's new ring alike): in a buffer no live queue
//     uses, first fit starts the ring at its first 64-byte boundary, then (a QP) the
//     receive ring and its record, or (a CQ, an SRQ) the record, each 64-byte aligned
//     (queue_memory.h contract 2); a buffer too small is ENOMEM. Naming again a window
//     whose queues live on makes it current again with them (queue_memory.h contract 1):
//     the next queue goes after them.
//  4. A QP's address vector is RoCE's: the peer's GID (CMD_IN6, CMD_IN7: bytes 0-7 and
//     8-15, byte i of each in bits 8i..8i+7), global, at this port's default GID index
//     (spec/backend.h AddressTo), when the mask has kAv; an address handle's alike.
#pragma once

#include <cstdint>

namespace qptwin::model::engine {

namespace command {
inline constexpr uint64_t kOpOffset = 0x1000;
inline constexpr uint64_t kStatusOffset = 0x1004;
inline constexpr uint64_t kInOffset = 0x1008;
inline constexpr uint64_t kOutOffset = 0x1048;
inline constexpr int kWords = 8;
inline constexpr uint64_t kEnd = kOutOffset + 8 * kWords;  // the block is [kOpOffset, kEnd)

// CMD_IN / CMD_OUT by index. Bit fields are (first bit, width).
enum class Op : uint32_t {
  kNop = 0,
  // in0 bus address, in1 length (0: no window; later creates are EINVAL, contract 3).
  kQueueMemory = 1,
  // in0 port (1). out0, out1 GID bytes 0-7, 8-15 at the default index; out2 that index;
  // out3 PortState (0, 8) | active Mtu (8, 8) | lid (16, 16).
  kQueryPort = 2,
  kAllocPd = 3,    // out0 PD number
  kDeallocPd = 4,  // in0 PD number
  // in0 PD number, in1 bus address, in2 length, in3 AccessFlags. out0 lkey, out1 rkey,
  // out2 the MR's number: a BIND_MW WQE names the region by it (send_wqe_image.h header byte
  // 84).
  kRegMr = 5,
  kDeregMr = 6,  // in0 lkey
  // in0 entries, in1 the interrupt's bus address, in2 its 32-bit value, in3 bit 0: the CQ
  // has an interrupt (model_backend.h ModelCqEvent). out0 CQ number, out1 ring address,
  // out2 consumer record address, out3 CQEs in the ring.
  kCreateCq = 7,
  kDestroyCq = 8,  // in0 CQ number
  // in0 QpType, in1 PD number, in2 send CQ (0, 32) | receive CQ (32, 32), in3 max_send_wr
  // (0, 32) | max_recv_wr (32, 32), in4 max_send_sge (0, 16) | max_recv_sge (16, 16) |
  // max_inline_data (32, 32), in5 SRQ number (0, 32) | on that SRQ (32, 1). out0 QP number, out1 send ring address, out2 its slots
  // (0, 32) | stride (32, 32), out3 receive ring address, out4 receive record address,
  // out5 its slots (0, 32) | stride (32, 32), out6 max_send_wr (0, 32) | max_recv_wr
  // (32, 32) granted, out7 max_inline_data granted. A QP with no receive queue of its own
  // (on an SRQ, max_recv_wr 0, XRC_SEND) answers no receive ring (out3..5 are 0). XRC_SEND
  // needs no receive CQ (in2's upper half 0 or a CQ's number) and takes no SRQ (in5 is not
  // read). XRC_RECV takes in6 its XRCD number, not a PD, CQs, caps or queue memory, and has
  // no queues: out0 only.
  kCreateQp = 9,
  // in0 QP number, in1 AttrMask, in2 qp_state (0, 8) | cur_qp_state (8, 8) | path_mtu (16,
  // 8) | port_num (24, 8) | pkey_index (32, 16) | timeout (48, 8) | min_rnr_timer (56, 8),
  // in3 dest_qp_num (0, 32) | qkey (32, 32), in4 rq_psn (0, 32) | sq_psn (32, 32), in5
  // qp_access_flags (0, 32) | retry_cnt (32, 8) | rnr_retry (40, 8) | max_rd_atomic (48, 8)
  // | max_dest_rd_atomic (56, 8), in6 and in7 the peer's GID (contract 4).
  kModifyQp = 10,
  kQueryQp = 11,    // in0 QP number. out0 qp_state, out1 sq_psn, out2 rq_psn, out3 dest_qp_num
  kDestroyQp = 12,  // in0 QP number
  // in0 PD number, in1 max_wr, in2 max_sge. out0 SRQ number (the driver's handle; the NIC
  // counts them from 1), out1 ring address, out2 record address, out3 slots (0, 32) |
  // stride (32, 32), out4 max_wr granted.
  kCreateSrq = 13,
  // in0 SRQ number, in1 mask (srq_attr: kMaxWr, kLimit), in2 max_wr, in3 srq_limit:
  // ibv_modify_srq. A resize (kMaxWr) places the ring anew (model_backend.h ModelSrqRing: the
  // receives not taken move to its front); a limit arms SRQ_LIMIT_REACHED (kGetEvent). out
  // as kCreateSrq's.
  kModifySrq = 14,
  kDestroySrq = 15,  // in0 SRQ number
  // in0 CQ number, in1 entries: ibv_resize_cq (model_backend.h ModelCqRing: the ring anew,
  // the CQEs not taken at its front, the counts from 0). out1.. as kCreateCq's, out0 the
  // CQ number.
  kResizeCq = 16,
  // The oldest asynchronous event of the driver's context not yet taken (ibv_get_async_event
  // and ibv_ack_async_event in one; EAGAIN when there is none). out0 its EventType
  // (ibv_event_type's value), out1 the object's number (QP, CQ or SRQ number; the port for a
  // port's event), out2 the model's time of it (ns). A destroy drops the object's events not
  // yet taken, as the kernel's uverbs does (ib_uverbs_release_uevent). With an event
  // queue (kCreateEq), only the events still waiting for room in it.
  kGetEvent = 17,
  // The context's event queue (engine/nic.h CreateEq: one per context), so the driver takes
  // its events from memory after an interrupt instead of asking kGetEvent: in0 entries
  // (1..65536, rounded up to a power of two), in1 the interrupt's bus address, in2 its
  // 32-bit value, in3 bit 0: the queue has an interrupt. out0 EQ number, out1 ring address
  // (a block of the window, contract 3), out2 its EQEs. Each event is then a 32-byte EQE
  // (0 its EventType u32, 8 its object's number u64 as kGetEvent's out1, 16 its time in
  // ns u64, 31 the owner bit: ((n / EQEs) & 1) ^ 1 for the n-th written); the driver arms
  // the queue with its consumer index (model/sim/platform.h NicSlot::kEqArmOffset, contract
  // 8): one interrupt after the next EQE, or at once when EQEs wait untaken. An event goes
  // in when the ring has room by that index and its write succeeds; the others wait in
  // order (kGetEvent may take them, before older EQEs the driver has not read). The ring
  // starts cleared (EIO when that fails). An EQE written stays when its object is
  // destroyed (the destroy drops only the events not written). EBUSY for a second queue.
  kCreateEq = 18,
  kDestroyEq = 19,  // in0 EQ number; the events not written wait for kGetEvent again
  // A UD address handle (ibv_create_ah) to the peer's GID (in1, in2: as kModifyQp's in6,
  // in7; contract 4) on PD in0. out0 the AH number: a UD send WQE names it (send_wqe_image.h
  // header byte 64), beside the remote QPN (68) and Q_Key (72).
  kCreateAh = 20,
  kDestroyAh = 21,  // in0 AH number
  // A memory window (ibv_alloc_mw) on PD in0 of type in1 (1 or 2). out0 the MW number,
  // out1 its rkey. The driver binds it with a BIND_MW WQE in a QP's send ring (type 1 as
  // ibv_bind_mw posts one, type 2 as IBV_WR_BIND_MW), which names the window by its
  // current rkey (header byte 80), the new rkey (60), the region by its number (84, out2
  // of kRegMr), the range (32, 40) and the window's access (88).
  kAllocMw = 22,
  kDeallocMw = 23,  // in0 MW number; a bound window is unbound (backend.h AllocMw contract 5)
  // An XRC domain (ibv_open_xrcd, a new one): out0 its number. EOPNOTSUPP on a device
  // without XRC (rxe). kCloseXrcd: EBUSY while an XRC SRQ or XRC_RECV QP uses it.
  kOpenXrcd = 24,
  kCloseXrcd = 25,  // in0 XRCD number
  // An XRC SRQ (ibv_create_srq_ex, IBV_SRQT_XRC): in0 PD number, in1 max_wr, in2 max_sge,
  // in3 XRCD number, in4 the CQ its receives complete on. out0..out4 as kCreateSrq's, out5
  // its number on the wire (ibv_get_srq_num): an XRC_SEND WQE names it (header byte 76).
  // kModifySrq and kDestroySrq take out0.
  kCreateXrcSrq = 26,
};
}  // namespace command

// What the NIC's MMIO hands a command to (contract 2); the slot's newest NIC names it.
class CommandTarget {
 public:
  virtual ~CommandTarget() = default;
  // Runs `op` with `in`; fills `out` (all 0 on failure); returns 0 or the errno.
  virtual int Command(uint32_t op, const uint64_t in[command::kWords],
                      uint64_t out[command::kWords]) = 0;
  // False once its Backend is gone (also when that happened off the kernel's thread and its
  // NIC was left to the leaked World): the slot takes the next newest NIC's.
  virtual bool open() const { return true; }
};

}  // namespace qptwin::model::engine
