#include "spec/scenario/narrate.h"

#include <algorithm>
#include <cerrno>
#include <cstdint>

#include "spec/posting_rules.h"
#include "spec/qp_state_table.h"

namespace qptwin::scenario {
namespace {

const QpView* Find(const std::vector<QpView>& views, const std::string& name) {
  for (const QpView& v : views) {
    if (v.name == name) return &v;
  }
  return nullptr;
}

std::string S(QpState s) { return std::string(ToName(s)); }
std::string N(uint64_t n) { return std::to_string(n); }

std::string Micros(uint64_t ns) {
  std::string s = std::to_string(ns / 1000) + "." + std::to_string(ns % 1000 / 100);
  return s + " us";
}

// "RESET -> INIT [STATE|PKEY_INDEX|PORT|ACCESS_FLAGS] -> RTR [...]"
std::string Route(const Verdict& v) {
  std::string out;
  for (const Verdict::Step& s : v.path) {
    if (out.empty()) out = S(s.from);
    out += " -> " + S(s.to) + " [" + FormatAttrMask(s.mask) + "]";
  }
  return out;
}

// Where the table accepts `bit` for `type`: "INIT->RTR (required), SQD->SQD (optional)".
std::string WhereAccepted(QpType type, AttrMask bit) {
  std::string out;
  const int t = static_cast<int>(type);
  for (QpState from : AllQpStates()) {
    for (QpState to : AllQpStates()) {
      const Transition& tr = TransitionOf(from, to);
      if (!tr.valid || t >= kQpTypeSlots) continue;
      const char* how = (tr.required[t] & bit) ? "required" : (tr.optional[t] & bit) ? "optional" : nullptr;
      if (how) out += (out.empty() ? "" : ", ") + S(from) + "->" + S(to) + " (" + how + ")";
    }
  }
  return out.empty() ? "in no transition" : "only at " + out;
}

}  // namespace

std::string CurStateMismatch(QpType type, QpState claimed, QpState actual,
                             const QpAttr& attr, AttrMask mask, int ret) {
  const QpState next = NextState(claimed, attr.qp_state, mask);
  const Verdict v = Judge(type, claimed, next, mask);
  std::string s = "IBV_QP_CUR_STATE does not match: cur_state=" + S(claimed) +
                  " but the QP is in " + S(actual) + "; the kernel judges the modify from the "
                  "cur_state given (rxe_qp_chk_attr: ib_modify_qp_is_ok(cur_state, new_state, "
                  "...)) as " + S(claimed) + "->" + S(next);
  if (ret == 0) return s + ", which the table allows: accepted";
  s += ": " + std::string(ErrnoName(ret));
  if (!v.legal) s += " (" + v.Reason() + ")";
  return s;
}

namespace {

void ExplainModify(const Command& c, int ret, const Step& step, const QpView& qp,
                   std::vector<std::string>* why) {
  const QpState cur = qp.state;
  const QpState next = NextState(cur, c.attr.qp_state, c.mask);
  const Verdict v = Judge(qp.type, cur, next, c.mask);
  const std::string pair = std::string(ToName(qp.type)) + " " + S(cur) + "->" + S(next);
  if ((c.mask & attr::kCurState) && c.attr.cur_qp_state != cur) {
    why->push_back(CurStateMismatch(qp.type, c.attr.cur_qp_state, cur, c.attr, c.mask, ret));
    why->push_back("omit cur_state (the QP's state is used) or give " + S(cur));
    if (ret == 0) {
      why->push_back(qp.name + ": " + S(cur) + " -> " + S(next));
      return;
    }
    why->push_back("a failed modify changes nothing (ibv_modify_qp(3)): " + qp.name +
                   " stays in " + S(cur));
    return;
  }
  if (ret != 0) {
    if (!v.legal) {
      why->push_back("refused by the state table (kernel verbs.c ib_modify_qp_is_ok): " +
                     v.Reason());
      if (v.invalid_pair && !v.path.empty()) {
        why->push_back("the legal route is " + Route(v));
      } else if (v.invalid_pair) {
        why->push_back(S(next) + " cannot be reached from " + S(cur) + " by modify");
      } else {
        for (AttrMask bit = 1; bit != 0 && bit <= v.forbidden; bit <<= 1) {
          if (!(v.forbidden & bit)) continue;
          why->push_back(std::string(AttrBitName(bit)) + " is accepted for " +
                         std::string(ToName(qp.type)) + " " + WhereAccepted(qp.type, bit));
        }
        why->push_back("a mask the table accepts for " + pair + ": " +
                       FormatAttrMask(v.fixed_mask) +
                       (v.optional ? " (optional: " + FormatAttrMask(v.optional) + ")" : ""));
      }
    } else {
      why->push_back("the mask is legal for " + pair + ", but a value was refused: " +
                     (step.note.empty() ? "the device said " + std::string(ErrnoName(ret))
                                        : step.note));
    }
    why->push_back("a failed modify changes nothing (ibv_modify_qp(3)): " + qp.name +
                   " stays in " + S(cur));
    return;
  }
  std::string line = qp.name + ": " + S(cur) + " -> " + S(next) + "; the table requires " +
                     (v.required ? FormatAttrMask(v.required) : std::string("nothing")) +
                     " for " + pair;
  if (v.optional) line += ", allows " + FormatAttrMask(v.optional);
  why->push_back(line);
  if (!(c.mask & attr::kState)) {
    why->push_back("without STATE the modify is judged as " + S(cur) + "->" + S(cur) +
                   " (ib_modify_qp_is_ok)");
  }
  if (next == QpState::kInit && cur == QpState::kReset) {
    why->push_back("post_recv is accepted from INIT on (R4); post_send waits for RTS (R2)");
  } else if (next == QpState::kRtr && cur == QpState::kInit) {
    why->push_back("RTR: incoming requests are now processed (R10); nothing is sent yet");
  } else if (next == QpState::kRts && cur != QpState::kRts) {
    why->push_back("post_send is accepted from now on (R2); modify is local: no packet is "
                   "exchanged with the peer");
  } else if (next == QpState::kSqd && cur == QpState::kRts) {
    why->push_back("SQD: WRs in flight finish, no new send WR starts" +
                   std::string(c.attr.en_sqd_async_notify
                                   ? "; SQ_DRAINED follows when the SQ is idle (R11)"
                                   : " (R11)"));
  } else if (next == QpState::kErr && cur != QpState::kErr) {
    why->push_back("ERR flushes every outstanding WR with WR_FLUSH_ERR, unsignaled ones too (R6):"
                   " SQ " + N(qp.sq) + ", RQ " + N(qp.rq) + " to flush");
  } else if (next == QpState::kReset && cur != QpState::kReset) {
    why->push_back("RESET discards both queues without completions (R9): SQ " + N(qp.sq) +
                   ", RQ " + N(qp.rq) + " WRs dropped");
  }
}

// The posting rule that refused a post_send/post_recv (ret != 0), in one sentence. `qp` is
// the QP as it stood before the post, `after` after it (null when it is gone).
std::string PostingRuleRefusal(const Command& c, int ret, const Step& step, const QpView& qp,
                               const QpView* after) {
  const bool send = c.verb == Verb::kPostSend;
  const int depth = send ? qp.sq : qp.rq;
  const uint32_t max_wr = send ? qp.max_send_wr : qp.max_recv_wr;
  const uint32_t max_sge = send ? qp.max_send_sge : qp.max_recv_sge;
  // The posting-rules oracle (spec/posting_rules.h) names the rule the failing WR broke: the
  // one at bad_wr, after the WRs of the list before it were queued.
  const int posted = after ? std::max(0, (send ? after->sq : after->rq) - depth) : 0;
  PostQueue q{qp.type, qp.state, !qp.srq.empty(), static_cast<size_t>(depth + posted), max_wr,
              max_sge, UINT32_MAX /* the inline limit is not in the view */};
  PostRule rule;
  if (send) {
    SendWrFacts f;
    f.opcode = c.send.opcode;
    f.num_sge = c.sges.size();
    for (const SgeRef& sge : c.sges) f.length += sge.length;
    f.is_inline = (c.send.send_flags & send_flag::kInline) != 0;
    rule = CheckSendWr(q, f, Behaviour{});
  } else {
    rule = CheckRecvWr(q, c.sges.size());
  }
  if (PostRuleErrno(rule) != ret && rule == PostRule::kTooManySges && ret == ENOMEM) {
    rule = PostRule::kQueueFull;  // both hold; this device checked the room first
  }
  if (rule == PostRule::kOk || PostRuleErrno(rule) != ret) {
    return "the provider refused the WR: " + std::string(ErrnoName(ret)) +
           (step.note.empty() ? "" : " (" + step.note + ")");
  }
  if (rule == PostRule::kSendBelowRts) {
    return "post_send needs RTS or later: the QP is in " + S(qp.state) +
           " (rdma-facts R2, rxe_post_send)";
  }
  if (rule == PostRule::kRecvOnSrqQp) {
    return qp.name + " takes its receives from SRQ " + qp.srq +
           ": post_recv on the QP is EINVAL, post to the SRQ (R4)";
  }
  if (rule == PostRule::kQueueFull) {
    return std::string(send ? "the send" : "the receive") + " queue is full: " + N(depth) +
           " of " + N(max_wr) + " outstanding when the list started (R5)";
  }
  if (rule == PostRule::kTooManySges) {
    return N(c.sges.size()) + " SGEs > max_" + (send ? "send" : "recv") + "_sge " + N(max_sge) +
           " (R5)";
  }
  if (rule == PostRule::kOpcodeNotForType && qp.type == QpType::kUd) {
    return "UD carries SEND and SEND_IMM only: no RDMA or atomic operations "
           "(IBTA 9.8.1, rxe_wr_opcode_info)";
  }
  if (rule == PostRule::kOpcodeNotForType && qp.type == QpType::kUc) {
    return "UC has no RDMA READ and no atomics: they need a reliable responder "
           "(IBTA 9.8.1, rxe_wr_opcode_info)";
  }
  return std::string(PostRuleReason(rule));
}

void ExplainPost(const Command& c, int ret, const Step& step, const QpView& qp,
                 std::vector<std::string>* why) {
  const bool send = c.verb == Verb::kPostSend;
  const QpView* after = Find(step.qps, qp.name);
  if (ret == 0) {
    if (send && !(c.send.send_flags & send_flag::kSignaled) && !qp.sig_all) {
      why->push_back("unsignaled: no CQE on success, but one on error (R21, IBTA 10.7.3.1)");
    }
    if (c.count > 1) why->push_back(N(c.count) + " WRs in one post list, one doorbell");
    return;
  }
  why->push_back(PostingRuleRefusal(c, ret, step, qp, after));
  if (c.count > 1 && after) {
    const int depth = send ? qp.sq : qp.rq;
    why->push_back("a post list is not atomic: the WRs before bad_wr were posted (" +
                   N((send ? after->sq : after->rq) - depth) + " here), the rest were not");
  }
}

void ExplainPoll(const Step& step, std::vector<std::string>* why) {
  int n = 0;
  // Consecutive CQEs of one QP with one error status share one explanation.
  std::string ids, qp, op;
  WcStatus status = WcStatus::kSuccess;
  auto flush = [&] {
    if (!ids.empty()) {
      why->push_back("wr_id=" + ids + " on " + qp + ": " + std::string(ToName(status)) + ": " +
                     StatusMeaning(status, op));
    }
    ids.clear();
  };
  for (const Outcome& o : step.outcomes) {
    if (o.kind != Outcome::Kind::kWc) continue;
    ++n;
    if (o.wc.status == WcStatus::kSuccess) continue;
    if (!ids.empty() && (o.qp != qp || o.wc.status != status || o.wr_opcode != op)) flush();
    ids += (ids.empty() ? "" : ",") + N(o.wc.wr_id);
    qp = o.qp;
    op = o.wr_opcode;
    status = o.wc.status;
  }
  flush();
  if (n == 0) {
    why->push_back("no CQE: nothing finished that writes one (unsignaled successes and "
                   "silently dropped messages write none, R21, R15, R17)");
  }
}

}  // namespace

namespace {

// REM_INV_REQ_ERR: the responder NAKed the request as invalid (rxe_resp.c); the cause
// depends on the operation.
std::string InvalidRequestMeaning(const std::string& op) {
  const std::string send =
      "the responder's receive buffer was shorter than the message (rxe_resp.c check_length: "
      "RESPST_ERR_LENGTH; the responder's receive completes with LOC_LEN_ERR)";
  const std::string rdma =
      "the responder QP's access flags do not allow it (rxe_resp.c check_op_valid: "
      "REMOTE_WRITE, REMOTE_READ or REMOTE_ATOMIC missing), or the operation does not fit the "
      "responder (an atomic not 8-byte aligned: RESPST_ERR_MISALIGNED_ATOMIC; a length beyond "
      "the MTU rules: RESPST_ERR_LENGTH)";
  const std::string tail = "; the requester's WR fails and both QPs go to ERR (R16)";
  if (op == "SEND" || op == "SEND_WITH_IMM" || op == "SEND_WITH_INV") {
    return "NAK invalid request: " + send + tail;
  }
  if (!op.empty() && op != "RECV") return "NAK invalid request: " + rdma + tail;
  return "NAK invalid request: for a SEND " + send + "; for RDMA or atomics " + rdma + tail;
}

}  // namespace

std::string StatusMeaning(WcStatus status, const std::string& wr_opcode) {
  switch (status) {
    case WcStatus::kSuccess:
      return "";
    case WcStatus::kWrFlushErr:
      return "flushed because the QP is in ERR; flush CQEs carry wr_id, status, qp_num only (R6)";
    case WcStatus::kRemAccessErr:
      return "the responder refused rkey, range or access: NAK, the requester's WR fails and "
             "both QPs go to ERR (R15)";
    case WcStatus::kRemInvReqErr:
      return InvalidRequestMeaning(wr_opcode);
    case WcStatus::kRnrRetryExcErr:
      return "no receive was posted at the responder; after rnr_retry RNR NAKs the requester "
             "gives up and goes to ERR (R17, R18)";
    case WcStatus::kRetryExcErr:
      return "no ACK within the transport timeout (4.096 us * 2^timeout) after retry_cnt "
             "retries; the QP goes to ERR (R19)";
    case WcStatus::kLocLenErr:
      if (wr_opcode == "RECV") {
        return "the message was longer than this receive buffer (rxe_resp.c check_length); "
               "the sender gets REM_INV_REQ_ERR and the QP goes to ERR";
      }
      return "the message does not fit the receive buffer (or exceeds the port's limits)";
    case WcStatus::kLocProtErr:
      return "an SGE is outside its MR or its lkey is wrong";
    case WcStatus::kLocQpOpErr:
      if (wr_opcode == "RECV") {
        return "this receive could not take the data (too small, a bad lkey or outside its MR; "
               "rxe_resp.c send_data_in: RESPST_ERR_MALFORMED_WQE): the QP goes to ERR, UD "
               "too, and an RC sender gets REM_OP_ERR (Behaviour::recv_error_is_malformed_wqe)";
      }
      return "the local QP could not execute the WR (rxe: also an lkey that names no MR of "
             "the PD, Behaviour::unresolved_lkey_is_qp_op_err)";
    case WcStatus::kRemOpErr:
      return "NAK remote operational error: the responder could not execute the request (rxe: "
             "its receive could not take the data, RESPST_ERR_MALFORMED_WQE); the requester's "
             "WR fails and both QPs go to ERR";
    default:
      return "an error CQE is written even for an unsignaled WR, then the QP goes to ERR "
             "(IBTA 10.7.3.1, R7)";
  }
}

std::string EventMeaning(EventType type) {
  switch (type) {
    case EventType::kSqDrained:
      return "the send queue of a QP in SQD is idle: attributes may change, SQD->RTS resumes "
             "(R11, IBTA 11.6.3)";
    case EventType::kCqErr:
      return "a CQE did not fit: the CQ overflowed and is unusable (R13); size CQs for every "
             "CQE that can be outstanding";
    case EventType::kQpLastWqeReached:
      return "a QP attached to an SRQ entered ERR: no more receives will be taken (R6)";
    case EventType::kQpFatal:
      return "the QP hit an error it cannot report in a CQE and went to ERR";
    case EventType::kCommEst:
      return "the first packet arrived while the QP was in RTR";
    default:
      return std::string(ToName(type));
  }
}

std::vector<std::string> ExplainStep(const Command& c, int ret, const Step& step,
                                     const std::vector<QpView>& before,
                                     const std::vector<StateEvent>& changes) {
  std::vector<std::string> why;
  const QpView* qp = Find(before, c.name);
  switch (c.verb) {
    case Verb::kQp:
      if (const QpView* v = Find(step.qps, c.name); v && ret == 0) {
        why.push_back(c.name + " (" + std::string(ToName(v->type)) + ") starts in RESET with "
                      "room for " + N(v->max_send_wr) + " send and " + N(v->max_recv_wr) +
                      " receive WRs");
      }
      break;
    case Verb::kModify:
      if (qp) {
        ExplainModify(c, ret, step, *qp, &why);
      } else if (ret != 0) {
        why.push_back("the QP does not exist (never created or destroyed): EINVAL, never a "
                      "crash (backend.h contract 2)");
      }
      break;
    case Verb::kPostSend:
    case Verb::kPostRecv:
      if (qp) ExplainPost(c, ret, step, *qp, &why);
      break;
    case Verb::kPoll:
      if (ret == 0 || ret == ETIMEDOUT) ExplainPoll(step, &why);
      break;
    case Verb::kEvents:
      for (const Outcome& o : step.outcomes) {
        if (o.kind == Outcome::Kind::kEvent) {
          why.push_back(std::string(ToName(o.event)) + " " + o.object + ": " +
                        EventMeaning(o.event));
        }
      }
      break;
    case Verb::kDestroy:
      if (ret == EBUSY) {
        why.push_back(c.name + " is still in use: destroy order is the caller's, users first "
                      "(backend.h contract 4)");
      } else if (ret == 0 && qp && (qp->sq || qp->rq)) {
        why.push_back(N(qp->sq + qp->rq) + " outstanding WRs go with the QP, without CQEs");
      }
      break;
    case Verb::kAdvance:
      why.push_back(N(c.advance_ns / 1000) + " us pass");
      break;
    default:
      break;
  }
  for (const StateEvent& e : changes) {
    if (e.cause == "modify" || e.cause == "created") continue;
    why.push_back(e.qp + " moved " + S(e.from) + " -> " + S(e.to) + " at " + Micros(e.time_ns) +
                  ": " + e.cause);
  }
  // Queue depths that changed, for every QP.
  // Both view lists are in name order (Runner::Views walks a map): one merge walk, so a
  // step costs O(QPs), not O(QPs^2).
  std::string depths;
  size_t bi = 0;
  for (const QpView& a : step.qps) {
    while (bi < before.size() && before[bi].name < a.name) ++bi;
    const QpView* b = bi < before.size() && before[bi].name == a.name ? &before[bi] : nullptr;
    int sq0 = b ? b->sq : 0, rq0 = b ? b->rq : 0;
    if (sq0 == a.sq && rq0 == a.rq) continue;
    depths += (depths.empty() ? "" : "; ") + a.name + " SQ " + N(sq0) + "->" + N(a.sq) + "/" +
              N(a.max_send_wr) + " RQ " + N(rq0) + "->" + N(a.rq) + "/" +
              N(a.srq.empty() ? a.max_recv_wr : 0) + (a.srq.empty() ? "" : " (SRQ " + a.srq + ")");
  }
  if (!depths.empty()) why.push_back("outstanding WRs: " + depths);
  return why;
}

}  // namespace qptwin::scenario
