// Rendering of sequences as .qps lines (tools/scenario grammar), so a shrunk failure replays.
#include <ostream>
#include <string>

#include "spec/reference/sequence.h"
#include "spec/vocabulary.h"

namespace qptwin::reference {
namespace {

const char* const kQpName[] = {"a", "b"};

}  // namespace

std::string ModifyLine(const char* qp, const char* peer, const QpAttr& a, AttrMask mask) {
  std::string out = std::string("modify ") + qp;
  auto add = [&out](const std::string& kv) { out += " " + kv; };
  auto num = [](uint64_t v) { return std::to_string(v); };
  if (mask & attr::kState) add("state=" + std::string(ToName(a.qp_state)));
  if (mask & attr::kCurState) add("cur_state=" + std::string(ToName(a.cur_qp_state)));
  if (mask & attr::kEnSqdAsyncNotify) add("en_sqd_async_notify=" + num(a.en_sqd_async_notify));
  if (mask & attr::kAccessFlags) add("access=" + FormatAccessFlags(a.qp_access_flags));
  if (mask & attr::kPkeyIndex) add("pkey_index=" + num(a.pkey_index));
  if (mask & attr::kPort) add("port=" + num(a.port_num));
  if (mask & attr::kQkey) add("qkey=" + num(a.qkey));
  if ((mask & attr::kAv) && (mask & attr::kDestQpn)) {
    add(std::string("dest=") + peer);
  } else if (mask & attr::kAv) {
    add(std::string("av=") + peer);
  } else if (mask & attr::kDestQpn) {
    add(std::string("dest_qpn=") + peer);
  }
  if (mask & attr::kPathMtu) add("path_mtu=" + num(MtuBytes(a.path_mtu)));
  if (mask & attr::kTimeout) add("timeout=" + num(a.timeout));
  if (mask & attr::kRetryCnt) add("retry_cnt=" + num(a.retry_cnt));
  if (mask & attr::kRnrRetry) add("rnr_retry=" + num(a.rnr_retry));
  if (mask & attr::kRqPsn) add("rq_psn=" + num(a.rq_psn));
  if (mask & attr::kMaxQpRdAtomic) add("max_rd_atomic=" + num(a.max_rd_atomic));
  if (mask & attr::kMinRnrTimer) add("min_rnr_timer=" + num(a.min_rnr_timer));
  if (mask & attr::kSqPsn) add("sq_psn=" + num(a.sq_psn));
  if (mask & attr::kMaxDestRdAtomic) add("max_dest_rd_atomic=" + num(a.max_dest_rd_atomic));
  if (mask & attr::kCap) {
    add("cap=" + num(a.cap.max_send_wr) + "," + num(a.cap.max_recv_wr) + "," +
        num(a.cap.max_send_sge) + "," + num(a.cap.max_recv_sge) + "," +
        num(a.cap.max_inline_data));
  }
  if (!(mask & attr::kState) && mask == 0) out += "  # empty mask";
  return out;
}

void showValue(const SeqCommand& c, std::ostream& os) {
  const char* qp = kQpName[c.qp];
  switch (c.kind) {
    case SeqCommand::Kind::kModify:
      os << "modify " << qp;
      if (c.with_state) os << " state=" << ToName(c.target);
      os << "  # minimum mask";
      if (c.add) os << " +" << FormatAttrMask(c.add);
      if (c.drop) os << " -" << FormatAttrMask(c.drop);
      if (c.bad_port) os << ", port out of range";
      os << ", rnr_retry=" << int(c.rnr_retry);
      break;
    case SeqCommand::Kind::kPostSend:
      for (int i = 0; i < c.count; ++i) {
        if (i) os << "\n";
        os << "post_send " << qp << " wr_id=" << i << " op=" << (c.write ? "WRITE remote=m:2048" : "SEND")
           << " sge=" << ((i == c.count - 1 && c.sges_last > 1) ? "m:0:8,m:8:8" : "m:0:8");
        if (c.sges_last > 2 && i == c.count - 1) os << ",m:16:8";
      }
      break;
    case SeqCommand::Kind::kPostRecv:
      for (int i = 0; i < c.count; ++i) {
        if (i) os << "\n";
        os << "post_recv " << qp << " wr_id=" << i << " sge=m:1024:64";
        if (i == c.count - 1 && c.sges_last > 1) os << ",m:1088:64";
        if (i == c.count - 1 && c.sges_last > 2) os << ",m:1152:64";
      }
      break;
    case SeqCommand::Kind::kSettle:
      os << "poll cq0 n=1 timeout_ms=1";
      break;
    case SeqCommand::Kind::kBringUp:
      os << "# bring " << qp << " up to RTS (minimum masks, through RESET from ERR)\n"
         << "modify " << qp << " state=INIT pkey_index=0 port=1 access=LOCAL_WRITE|REMOTE_WRITE|"
         << "REMOTE_READ|REMOTE_ATOMIC\nmodify " << qp << " state=RTR dest=" << kQpName[1 - c.qp]
         << " path_mtu=1024 rq_psn=0 max_dest_rd_atomic=1 min_rnr_timer=14\nmodify " << qp
         << " state=RTS sq_psn=0 timeout=8 retry_cnt=3 rnr_retry=" << int(c.rnr_retry)
         << " max_rd_atomic=1";
      break;
  }
}

std::string SequencePreamble() {
  return "device d0\n"
         "pd pd0\n"
         "mr m pd=pd0 len=4096 access=LOCAL_WRITE|REMOTE_WRITE|REMOTE_READ|REMOTE_ATOMIC\n"
         "cq cq0 cqe=4096\n"
         "qp a type=RC pd=pd0 send_cq=cq0 recv_cq=cq0 max_send_wr=8 max_recv_wr=8 "
         "max_send_sge=2 max_recv_sge=2 sq_sig_all=1\n"
         "qp b type=RC pd=pd0 send_cq=cq0 recv_cq=cq0 max_send_wr=8 max_recv_wr=8 "
         "max_send_sge=2 max_recv_sge=2 sq_sig_all=1\n";
}

}  // namespace qptwin::reference
