#include "spec/posting_rules.h"

#include <cerrno>

namespace qptwin {
namespace {

struct RuleInfo {
  PostRule rule;
  std::string_view name;
  int err;
  std::string_view reason;
};

constexpr RuleInfo kRules[] = {
    {PostRule::kOk, "ok", 0, "every rule holds: the WR is queued"},
    {PostRule::kNoSendQueue, "no_send_queue", EINVAL,
     "an XRC_RECV QP has no send queue: ibv_post_send has nothing to post to"},
    {PostRule::kNoRecvQueue, "no_recv_queue", EINVAL,
     "XRC QPs have no receive queue: XRC_RECV receives into the XRC SRQ the sender names"},
    {PostRule::kSendBelowRts, "send_below_rts", EINVAL,
     "post_send needs RTS or later (rdma-facts R2, providers/rxe rxe_post_send)"},
    {PostRule::kRecvInReset, "recv_in_reset", EINVAL,
     "post_recv needs INIT or later: the QP is in RESET (R4)"},
    {PostRule::kRecvOnSrqQp, "recv_on_srq_qp", EINVAL,
     "the QP takes its receives from its SRQ: post_recv on the QP is EINVAL, post to the SRQ (R4)"},
    {PostRule::kTooManySges, "too_many_sges", EINVAL, "more SGEs than the queue's max_sge (R5)"},
    {PostRule::kOpcodeNotModelled, "opcode_not_modelled", EINVAL, "TSO is not modelled"},
    {PostRule::kBindMwInvalid, "bind_mw_invalid", EINVAL,
     "a BIND_MW needs an RC or UC QP, no SGEs, and a window and region that exist "
     "(providers/rxe validate_send_wr; convert_send_wr reads both objects)"},
    {PostRule::kOpcodeNotForType, "opcode_not_for_type", EINVAL,
     "the QP type lacks the opcode: UD carries SEND and SEND_IMM only, UC has no READ and no "
     "atomics (IBTA 9.8.1, rxe_wr_opcode_info)"},
    {PostRule::kInlineTooLong, "inline_too_long", EINVAL,
     "inline data longer than the QP's max_inline_data"},
    {PostRule::kInlineNotForOp, "inline_not_for_op", EINVAL,
     "RDMA READ and atomics cannot carry inline data"},
    {PostRule::kAtomicNotAligned, "atomic_not_aligned", EINVAL,
     "an atomic needs an 8-byte buffer and an 8-byte aligned remote address "
     "(providers/rxe validate_send_wr)"},
    {PostRule::kNoAh, "no_ah", EINVAL, "a UD send needs a valid address handle"},
    {PostRule::kQueueFull, "queue_full", ENOMEM, "the queue is full (R5)"},
    {PostRule::kInlineUnregistered, "inline_unregistered", EINVAL,
     "the model copies inline data only from registered memory"},
};
static_assert(sizeof(kRules) / sizeof(kRules[0]) == static_cast<size_t>(PostRule::kCount),
              "every PostRule needs its row");

const RuleInfo& Info(PostRule r) { return kRules[static_cast<size_t>(r)]; }

}  // namespace

std::string_view PostRuleName(PostRule r) { return Info(r).name; }
std::string_view PostRuleReason(PostRule r) { return Info(r).reason; }
int PostRuleErrno(PostRule r) { return Info(r).err; }

bool OpcodeAllowed(QpType type, WrOpcode op) {
  // IBTA 9.8: an XRC initiator carries the RC operations; an XRC target sends nothing.
  const bool rc = type == QpType::kRc || type == QpType::kXrcSend;
  switch (op) {
    case WrOpcode::kSend:
    case WrOpcode::kSendWithImm: return type != QpType::kXrcRecv;
    case WrOpcode::kRdmaWrite:
    case WrOpcode::kRdmaWriteWithImm: return rc || type == QpType::kUc;
    case WrOpcode::kRdmaRead:
    case WrOpcode::kAtomicCmpAndSwp:
    case WrOpcode::kAtomicFetchAndAdd: return rc;
    // rxe_opcode.c rxe_wr_opcode_info: BIND_MW on RC and UC, LOCAL_INV on RC. SEND_WITH_INV
    // carries an IETH, whose packet opcodes (SEND LAST/ONLY with Invalidate) IBTA Table 38
    // defines for RC and XRC only: UC has none (rxe_req.c next_opcode_uc returns -EINVAL, so
    // rxe completes it with LOC_QP_OP_ERR; differential seed 1101, sequences 35, 59, 372).
    case WrOpcode::kBindMw: return rc || type == QpType::kUc;
    case WrOpcode::kLocalInv: return rc;
    case WrOpcode::kSendWithInv: return rc;
    default: return false;  // TSO: not modelled
  }
}

bool OpcodeModelled(WrOpcode op) {
  switch (op) {
    case WrOpcode::kSend:
    case WrOpcode::kSendWithImm:
    case WrOpcode::kRdmaWrite:
    case WrOpcode::kRdmaWriteWithImm:
    case WrOpcode::kRdmaRead:
    case WrOpcode::kAtomicCmpAndSwp:
    case WrOpcode::kAtomicFetchAndAdd:
    case WrOpcode::kLocalInv:
    case WrOpcode::kBindMw:
    case WrOpcode::kSendWithInv: return true;
    default: return false;
  }
}

bool IsAtomicOpcode(WrOpcode op) {
  return op == WrOpcode::kAtomicCmpAndSwp || op == WrOpcode::kAtomicFetchAndAdd;
}

SendWrFacts FactsOf(const SendWr& wr) {
  SendWrFacts f;
  f.opcode = wr.opcode;
  f.num_sge = wr.sg_list.size();
  for (const Sge& s : wr.sg_list) f.length += s.length;
  f.is_inline = (wr.send_flags & send_flag::kInline) != 0;
  f.remote_addr = wr.remote_addr;
  return f;
}

bool SendBelowRts(QpState s) {
  return s == QpState::kReset || s == QpState::kInit || s == QpState::kRtr;
}

bool FlushedAtPost(bool send, QpState s, const Behaviour& b) {
  if (send) return s == QpState::kErr || s == QpState::kSqe;
  return s == QpState::kErr && !b.recv_in_err_waits;
}

PostRule CheckSendWr(const PostQueue& q, const SendWrFacts& wr, const Behaviour& b,
                     bool below_rts_queued) {
  if (q.type == QpType::kXrcRecv) return PostRule::kNoSendQueue;
  if (SendBelowRts(q.state) && !below_rts_queued) return PostRule::kSendBelowRts;
  if (wr.num_sge > q.max_sge) return PostRule::kTooManySges;
  if (!OpcodeModelled(wr.opcode)) return PostRule::kOpcodeNotModelled;
  if (wr.opcode == WrOpcode::kBindMw &&
      (wr.num_sge > 0 || !wr.bind_resolved ||
       !(q.type == QpType::kRc || q.type == QpType::kUc || q.type == QpType::kXrcSend))) {
    return PostRule::kBindMwInvalid;
  }
  // rxe's provider leaves the type check to the kernel requester (LOC_QP_OP_ERR).
  if (!OpcodeAllowed(q.type, wr.opcode) && !b.opcode_checked_by_requester) {
    return PostRule::kOpcodeNotForType;
  }
  if (wr.is_inline && wr.length > q.max_inline_data) return PostRule::kInlineTooLong;
  if (wr.is_inline && (wr.opcode == WrOpcode::kRdmaRead || IsAtomicOpcode(wr.opcode))) {
    return PostRule::kInlineNotForOp;
  }
  // A UD WR has no remote address: ibv_send_wr's wr union holds the AH there, and
  // providers/rxe's alignment check reads that pointer (measured on rxe: a UD CMP_SWP named
  // with a misaligned address is posted and fails in the requester, LOC_QP_OP_ERR).
  const bool remote_misaligned = q.type != QpType::kUd && (wr.remote_addr & 7) != 0;
  if (IsAtomicOpcode(wr.opcode) && (wr.length < 8 || remote_misaligned)) {
    return PostRule::kAtomicNotAligned;
  }
  if (q.type == QpType::kUd && !wr.ah_valid) return PostRule::kNoAh;
  if (q.outstanding >= q.depth) return PostRule::kQueueFull;
  if (wr.is_inline && !wr.inline_source_registered) return PostRule::kInlineUnregistered;
  return PostRule::kOk;
}

PostRule CheckRecvWr(const PostQueue& q, size_t num_sge, const Behaviour& b) {
  if (q.type == QpType::kXrcSend || q.type == QpType::kXrcRecv) return PostRule::kNoRecvQueue;
  if (q.state == QpState::kReset) return PostRule::kRecvInReset;
  if (q.has_srq) return PostRule::kRecvOnSrqQp;
  if (b.recv_full_checked_first && q.outstanding >= q.depth) return PostRule::kQueueFull;
  if (num_sge > q.max_sge) return PostRule::kTooManySges;
  if (q.outstanding >= q.depth) return PostRule::kQueueFull;
  return PostRule::kOk;
}

namespace {

// The rule the same WR would break if the device checked the queue's room first (R5 leaves
// the order of "too many SGEs" and "queue full" open).
PostRule AlsoFull(PostRule r, const PostQueue& q) {
  return r == PostRule::kTooManySges && q.outstanding >= q.depth ? PostRule::kQueueFull
                                                                 : PostRule::kOk;
}

}  // namespace

PostVerdict JudgeSendList(const PostQueue& q, const std::vector<SendWrFacts>& wrs,
                          const Behaviour& b) {
  PostVerdict v;
  const bool queue_anyway = SendBelowRts(q.state) && b.post_send_below_rts_queues &&
                            q.type != QpType::kXrcRecv;
  PostQueue at = q;
  for (size_t i = 0; i < wrs.size(); ++i, ++at.outstanding) {
    PostRule r = CheckSendWr(at, wrs[i], b, queue_anyway);
    if (r == PostRule::kOk) continue;
    v.rule = r;
    v.also = AlsoFull(r, at);
    v.err = queue_anyway ? EINVAL : PostRuleErrno(r);  // rxe: the doorbell's EINVAL wins
    v.bad = i;
    v.queued = i;
    return v;
  }
  v.queued = wrs.size();
  if (queue_anyway) {  // all queued, then the doorbell refuses the QP
    v.rule = PostRule::kSendBelowRts;
    v.err = EINVAL;
    v.bad = wrs.size();
  }
  return v;
}

PostVerdict JudgeRecvList(const PostQueue& q, const std::vector<size_t>& num_sges,
                          const Behaviour& b) {
  PostVerdict v;
  PostQueue at = q;
  for (size_t i = 0; i < num_sges.size(); ++i, ++at.outstanding) {
    PostRule r = CheckRecvWr(at, num_sges[i], b);
    if (r == PostRule::kOk) continue;
    v.rule = r;
    v.also = AlsoFull(r, at);
    v.err = PostRuleErrno(r);
    v.bad = i;
    v.queued = i;
    return v;
  }
  v.queued = num_sges.size();
  return v;
}

}  // namespace qptwin
