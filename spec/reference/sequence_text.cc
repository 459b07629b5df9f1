// Rendering of sequences as .qps lines (tools/scenario grammar), so a shrunk failure replays.
#include <ostream>
#include <string>

#include "spec/reference/sequence.h"

namespace qptwin::reference {
namespace {

const char* const kQpName[] = {"a", "b"};

}  // namespace

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
