// The plain C++ behaviour of the SystemC NIC (no SystemC here): memory keys with their PD,
// bound and access checks, the QP context and its state machine (spec/qp_state_table.h, the
// kernel's table), and the responder's and completer's verdicts on a packet
// (model/engine/packet.h). The modules of nic.h only add time and move bytes.
//
// Contract:
//  1. Every function validates before it changes anything; errno values as libibverbs.
//  2. Keys (layout.h contract 4): lkey == rkey; Check* never looks outside a region.
//  3. Not thread-safe; one NIC's processes call it from the SystemC kernel's thread.
#pragma once

#include <cstdint>
#include <deque>
#include <map>

#include "model/engine/packet.h"
#include "spec/vocabulary.h"

namespace qptwin::sc {

namespace engine = model::engine;  // packet.h: the packet semantics shared with the engine

struct Region {
  uint32_t pd = 0;
  uint64_t addr = 0;
  uint64_t length = 0;
  AccessFlags access = 0;
};

class KeyTable {
 public:
  // EINVAL for key 0 or a key in use, a zero length or unknown access bits.
  [[nodiscard]] int Register(uint32_t key, const Region& r);
  [[nodiscard]] int Deregister(uint32_t key);  // EINVAL when unknown
  // [addr, addr + len) lies in the region of `key`, of `pd`, with every bit of `need`.
  bool Check(uint32_t key, uint32_t pd, uint64_t addr, uint64_t len, AccessFlags need) const;

 private:
  std::map<uint32_t, Region> regions_;
};

// A ring in host memory (layout.h contract 3).
struct Ring {
  uint64_t addr = 0;
  uint32_t entries = 0;
  uint64_t SlotAddr(uint32_t index, uint32_t bytes) const {
    return addr + static_cast<uint64_t>(index % entries) * bytes;
  }
};

// A send WQE the requester sent and the completer has not completed (RC only).
struct Pending {
  uint64_t wr_id = 0;
  WrOpcode opcode = WrOpcode::kSend;
  bool signaled = false;
  uint32_t length = 0;
  uint64_t local_addr = 0;  // READ: where the response lands
  uint32_t last_psn = 0;
};

struct QpContext {
  bool exists = false;
  uint32_t qpn = 0;
  QpType type = QpType::kRc;
  QpState state = QpState::kReset;
  uint32_t pd = 0;
  Ring sq, rq;
  uint32_t send_cqn = 0, recv_cqn = 0;
  uint32_t dest_port = 0, dest_qpn = 0;
  uint32_t sq_psn = 0;  // next PSN to send
  uint32_t rq_psn = 0;  // next PSN expected
  AccessFlags access = 0;
  uint32_t qkey = 0;
  uint32_t sq_pi = 0, sq_ci = 0;  // doorbell, WQEs taken by the requester
  uint32_t rq_pi = 0, rq_ci = 0;
  bool scheduled = false;         // on the requester's work list
  std::deque<Pending> outstanding;
  // Traced (sc_trace of plain members): state as a number, WQEs posted and not completed.
  int traced_state = 0;
  int sq_occupancy = 0;
  int rq_occupancy = 0;
};

// Arguments of a modify command (layout.h CmdOp::kModifyQp).
struct ModifyArgs {
  AttrMask mask = 0;
  QpState state = QpState::kReset;
  uint32_t dest_port = 0, dest_qpn = 0, sq_psn = 0, rq_psn = 0, qkey = 0;
  AccessFlags access = 0;
};

// ib_modify_qp_is_ok (spec/qp_state_table.h) decides; EINVAL when illegal, the QP untouched.
// A move to RESET clears the rings' indices and the outstanding WQEs (IBTA 10.3.1: RESET
// discards every WQE); the caller flushes on a move to ERR.
[[nodiscard]] int ApplyModify(QpContext& qp, const ModifyArgs& a);
void SetState(QpContext& qp, QpState s);

// WQE opcodes this NIC executes on the QP's transport (IBTA 11.4.1.1 table: UC has no READ
// or atomics, UD only SEND); everything else completes with kLocQpOpErr.
bool OpcodeAllowed(QpType type, WrOpcode op);
engine::PacketKind KindOf(WrOpcode op);
WcOpcode SendWcOpcode(WrOpcode op);

// The responder's verdict on a request: kNone to execute it. RDMA WRITE/READ need the QP's
// remote access flag and an rkey check (IBTA 9.7.4.1.4 / rxe_resp.c check_rkey).
engine::NakCode CheckRemote(const QpContext& qp, const KeyTable& keys, const engine::Packet& p);
// The requester's completion status for a NAK (rxe_comp.c: REM_ACCESS, INV_REQ, REM_OP;
// RNR: this NIC does not retry, as rnr_retry = 0).
WcStatus StatusOfNak(engine::NakCode c);

}  // namespace qptwin::sc
