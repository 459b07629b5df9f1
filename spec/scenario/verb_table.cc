#include "spec/scenario/verb_table.h"

#include <array>
#include <string>

namespace qptwin::scenario {
namespace {

const std::array<VerbSpec, kNumVerbs>& Table() {
  static const auto* table = new std::array<VerbSpec, kNumVerbs>{{
      {Verb::kDevice, "device", 1, {}, {"profile"}, "device NAME [profile=P]"},
      {Verb::kPd, "pd", 1, {}, {"dev"}, "pd NAME [dev=DEVICE]"},
      {Verb::kMr, "mr", 1, {"pd", "len"}, {"access"},
       "mr NAME pd=PD len=N [access=LOCAL_WRITE|REMOTE_WRITE|REMOTE_READ|REMOTE_ATOMIC]"},
      {Verb::kCq, "cq", 1, {}, {"cqe", "dev", "channel"},
       "cq NAME [cqe=N] [dev=DEVICE] [channel=CHANNEL]"},
      {Verb::kSrq, "srq", 1, {"pd"}, {"max_wr", "max_sge"}, "srq NAME pd=PD [max_wr=N] [max_sge=N]"},
      {Verb::kQp, "qp", 1, {"type", "pd", "send_cq", "recv_cq"},
       {"srq", "max_send_wr", "max_recv_wr", "max_send_sge", "max_recv_sge", "max_inline",
        "sq_sig_all"},
       "qp NAME type=RC|UC|UD pd=PD send_cq=CQ recv_cq=CQ [srq=SRQ] [max_send_wr=N] "
       "[max_recv_wr=N] [max_send_sge=N] [max_recv_sge=N] [max_inline=N] [sq_sig_all=0|1]"},
      {Verb::kModify, "modify", 1, {},
       {"state", "cur_state", "pkey_index", "port", "qkey", "access", "path_mtu", "dest",
        "av", "dest_qpn", "cap", "rq_psn", "sq_psn", "timeout", "retry_cnt", "rnr_retry",
        "min_rnr_timer", "max_rd_atomic", "max_dest_rd_atomic", "en_sqd_async_notify"},
       "modify QP [state=S] [cur_state=S] [pkey_index=N] [port=N] [qkey=N] [access=FLAGS] "
       "[path_mtu=N] [dest=QP] [av=QP] [dest_qpn=QP] [cap=W,W,S,S,I] [rq_psn=N] [sq_psn=N] [timeout=N] [retry_cnt=N] [rnr_retry=N] "
       "[min_rnr_timer=N] [max_rd_atomic=N] [max_dest_rd_atomic=N] [en_sqd_async_notify=0|1]"},
      {Verb::kQuery, "query", 1, {}, {}, "query QP [expect=STATE]"},
      {Verb::kPostSend, "post_send", 1, {"wr_id", "op"},
       {"sge", "remote", "imm", "flags", "ah", "qkey", "compare", "swap", "add", "count",
        "last_sge", "mw", "bind", "access", "inv"},
       "post_send QP wr_id=N op=SEND|SEND_IMM|WRITE|WRITE_IMM|READ|CMP_SWP|FETCH_ADD|BIND_MW|"
       "LOCAL_INV|SEND_WITH_INV [sge=MR:OFF:LEN[,...]] [remote=MR:OFF|MW:OFF] [imm=N] "
       "[flags=SIGNALED|FENCE|INLINE|SOLICITED] [ah=QP] [qkey=N] [compare=N] [swap=N] [add=N] "
       "[count=N] [last_sge=MR:OFF:LEN[,...]] [mw=MW bind=MR:OFF:LEN access=FLAGS] [inv=MW|MR]"},
      {Verb::kPostRecv, "post_recv", 1, {"wr_id"}, {"sge", "count", "last_sge"},
       "post_recv QP|SRQ wr_id=N [sge=MR:OFF:LEN[,...]] [count=N] [last_sge=MR:OFF:LEN[,...]]"},
      {Verb::kPoll, "poll", 1, {}, {"n", "timeout_ms"},
       "poll CQ [n=N] [timeout_ms=T] [expect=STATUS,...|none]"},
      {Verb::kEvents, "events", 0, {}, {"wait", "timeout_ms"},
       "events [wait=EVENT_TYPE] [timeout_ms=T] [expect=EVENT_TYPE,...|none]"},
      {Verb::kFill, "fill", 4, {}, {}, "fill MR OFF LEN BYTE"},
      {Verb::kCheck, "check", 4, {}, {}, "check MR OFF LEN BYTE"},
      {Verb::kDestroy, "destroy", 1, {}, {}, "destroy NAME"},
      {Verb::kAdvance, "advance", 0, {"us"}, {}, "advance us=N"},
      {Verb::kQueryDevice, "query_device", 0, {}, {"dev"}, "query_device [dev=DEVICE]"},
      {Verb::kQueryPort, "query_port", 0, {}, {"dev", "port"},
       "query_port [dev=DEVICE] [port=N]"},
      {Verb::kQuerySrq, "query_srq", 1, {}, {}, "query_srq SRQ"},
      {Verb::kModifySrq, "modify_srq", 1, {}, {"max_wr", "srq_limit"},
       "modify_srq SRQ [max_wr=N] [srq_limit=N]"},
      {Verb::kResizeCq, "resize_cq", 1, {"cqe"}, {}, "resize_cq CQ cqe=N"},
      {Verb::kChannel, "channel", 1, {}, {"dev"}, "channel NAME [dev=DEVICE]"},
      {Verb::kReqNotify, "req_notify", 1, {}, {"solicited"}, "req_notify CQ [solicited=0|1]"},
      {Verb::kGetCqEvent, "get_cq_event", 1, {}, {"timeout_ms"},
       "get_cq_event CHANNEL [timeout_ms=T]"},
      {Verb::kAckCqEvents, "ack_cq_events", 1, {}, {"n"}, "ack_cq_events CQ [n=N]"},
      {Verb::kReregMr, "rereg_mr", 1, {}, {"pd", "len", "access"},
       "rereg_mr MR [pd=PD] [len=N] [access=FLAGS]"},
      {Verb::kAllocMw, "alloc_mw", 1, {"pd"}, {"type"}, "alloc_mw NAME pd=PD [type=1|2]"},
      {Verb::kBindMw, "bind_mw", 1, {"mw", "bind"}, {"wr_id", "access", "flags"},
       "bind_mw QP mw=MW bind=MR:OFF:LEN [access=REMOTE_WRITE|REMOTE_READ|REMOTE_ATOMIC] "
       "[wr_id=N] [flags=SIGNALED]"},
      {Verb::kDeallocMw, "dealloc_mw", 1, {}, {}, "dealloc_mw MW"},
  }};
  return *table;
}

}  // namespace

const VerbSpec& SpecOf(Verb v) { return Table()[static_cast<size_t>(v)]; }

std::string VerbChoices() {
  std::string out;
  for (const VerbSpec& s : Table()) {
    if (!out.empty()) out += ", ";
    out += s.name;
  }
  return out;
}

std::string_view ToName(Verb v) { return SpecOf(v).name; }

std::optional<Verb> ParseVerb(std::string_view s) {
  for (const VerbSpec& spec : Table()) {
    // Most names differ in length or first letter: no memcmp call for them.
    if (spec.name.size() == s.size() && (s.empty() || (spec.name[0] == s[0] && spec.name == s))) {
      return spec.verb;
    }
  }
  return std::nullopt;
}

std::string_view ToName(ObjectKind k) {
  static constexpr std::array<std::string_view, 8> kNames = {
      "device", "PD", "MR", "CQ", "SRQ", "QP", "channel", "MW"};
  return kNames[static_cast<size_t>(k)];
}

}  // namespace qptwin::scenario
