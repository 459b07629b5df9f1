// The posting-rules oracle: what ibv_post_send / ibv_post_recv return for a list of WRs on a
// queue in a given state (rdma-facts R2-R5; rdma-core providers/rxe post_one_send,
// validate_send_wr; IBTA 10.8.3, 11.4.1.1), beside the legality table of qp_state_table.h.
// The model's engine, the reference model (spec/reference) and the narration
// (spec/scenario/narrate.cc) all ask it, so the three cannot drift apart.
//
// Contract:
//  1. Pure functions of their arguments; facts the oracle cannot know (is the AH valid, does
//     an inline source lie in registered memory) are passed in as facts of the WR.
//  2. A list is judged WR by WR in order; the first WR that breaks a rule ends it: the
//     verdict's err is that rule's errno and bad its index; the WRs before it are queued.
//  3. Below RTS a send list is refused (R2: EINVAL, bad 0, nothing queued) unless the device
//     queues it anyway (Behaviour::post_send_below_rts_queues): then the WRs are judged as in
//     RTS, those before the first failure are queued, and err is EINVAL (the doorbell's) with
//     bad = the first WR not queued (the list's size when all were).
//  4. Where two rules fail on the same WR and devices order their checks differently, the
//     verdict names the second one too (`also`): a device may report either.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "spec/device_description.h"
#include "spec/vocabulary.h"

namespace qptwin {

enum class PostRule : uint8_t {
  kOk,
  kNoSendQueue,       // XRC_RECV: no send queue (mlx5 creates it without one)
  kNoRecvQueue,       // XRC_SEND / XRC_RECV: no receive queue of their own
  kSendBelowRts,      // R2
  kRecvInReset,       // R4
  kRecvOnSrqQp,       // R4: the QP takes its receives from an SRQ
  kTooManySges,       // R5
  kOpcodeNotModelled, // TSO
  kBindMwInvalid,     // BIND_MW: RC/UC, no SGE, a window and region that exist
  kOpcodeNotForType,  // IBTA 9.8.1: UD sends only; UC no READ / atomics
  kInlineTooLong,     // longer than the granted max_inline_data
  kInlineNotForOp,    // READ and atomics cannot be inline
  kAtomicNotAligned,  // validate_send_wr: 8 bytes, 8-byte aligned remote address
  kNoAh,              // UD without a valid address handle
  kQueueFull,         // R5
  kInlineUnregistered,  // the model reads only registered memory (a model limit)
  kCount,
};

std::string_view PostRuleName(PostRule r);
// One sentence with the rule's source, for narration.
std::string_view PostRuleReason(PostRule r);
int PostRuleErrno(PostRule r);  // 0, EINVAL or ENOMEM

// Whether the QP type carries the opcode (IBTA 9.8.1; an XRC initiator carries RC's).
bool OpcodeAllowed(QpType type, WrOpcode op);
// Whether the model implements the opcode.
bool OpcodeModelled(WrOpcode op);
bool IsAtomicOpcode(WrOpcode op);

// The queue a list goes to, as it is when the call starts.
struct PostQueue {
  QpType type = QpType::kRc;
  QpState state = QpState::kReset;
  bool has_srq = false;
  size_t outstanding = 0;  // WRs already on the queue
  uint32_t depth = 0;      // what the queue holds (granted max_*_wr)
  uint32_t max_sge = 0;
  uint32_t max_inline_data = 0;
};

struct SendWrFacts {
  WrOpcode opcode = WrOpcode::kSend;
  size_t num_sge = 0;
  uint64_t length = 0;
  bool is_inline = false;
  uint64_t remote_addr = 0;
  bool ah_valid = true;                  // UD only
  bool inline_source_registered = true;  // inline only
  bool bind_resolved = true;             // BIND_MW only: its window and region exist
};
SendWrFacts FactsOf(const SendWr& wr);  // length from the SGEs; ah/registration assumed valid

struct PostVerdict {
  int err = 0;
  size_t bad = 0;     // index of the first WR not queued (meaningful when err != 0)
  size_t queued = 0;  // WRs of the list that reach the queue
  PostRule rule = PostRule::kOk;  // the rule that ended the list
  PostRule also = PostRule::kOk;  // contract 4
};

// The rules in the order the device checks them for one send WR on `q` (q.outstanding
// counting the WRs of the list before it); `below_rts_queued`: judged as in RTS (contract 3).
PostRule CheckSendWr(const PostQueue& q, const SendWrFacts& wr, const Behaviour& b,
                     bool below_rts_queued = false);
PostRule CheckRecvWr(const PostQueue& q, size_t num_sge, const Behaviour& b = {});

PostVerdict JudgeSendList(const PostQueue& q, const std::vector<SendWrFacts>& wrs,
                          const Behaviour& b);
PostVerdict JudgeRecvList(const PostQueue& q, const std::vector<size_t>& num_sges,
                          const Behaviour& b = {});

// A send queue below RTS (R2): RESET, INIT, RTR.
bool SendBelowRts(QpState s);
// WRs posted to a queue in this state complete at once with WR_FLUSH_ERR (R6): sends in ERR
// or SQE; receives in ERR unless the device lets them wait (Behaviour::recv_in_err_waits).
bool FlushedAtPost(bool send, QpState s, const Behaviour& b);

}  // namespace qptwin
