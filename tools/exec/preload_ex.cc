// The extended CQ (ibv_start_poll / ibv_wc_read_*) and QP (ibv_wr_*) function tables of
// model objects: verbs.h's inline wrappers call these through ibv_cq_ex / ibv_qp_ex.
#include <arpa/inet.h>

#include <cerrno>
#include <cstring>

#include "tools/exec/datapath.h"
#include "tools/exec/preload.h"

namespace qptwin::exec {
namespace {

ModelCq* Cq(ibv_cq_ex* c) { return reinterpret_cast<ModelCq*>(c); }
ModelQp* Qp(ibv_qp_ex* q) { return reinterpret_cast<ModelQp*>(q); }

int Next(ibv_cq_ex* c, bool let_time_pass) {
  ModelCq* cq = Cq(c);
  int r = 0;
  Preload::Get().Run([&] {
    if (!let_time_pass && cq->pending.empty()) {
      WorkCompletion w;
      r = cq->mctx->dev->PollCq(cq->h, 1, &w);
      if (r == 1) cq->current = w;
      return;
    }
    r = PollInto(cq, 1, nullptr, &cq->current);
  });
  if (r < 0) return -r;
  if (r == 0) return ENOENT;
  c->wr_id = cq->current.wr_id;
  c->status = static_cast<ibv_wc_status>(cq->current.status);
  return 0;
}

int StartPoll(ibv_cq_ex* c, ibv_poll_cq_attr* attr) {
  if (attr != nullptr && attr->comp_mask != 0) return EINVAL;
  return Next(c, true);
}
int NextPoll(ibv_cq_ex* c) { return Next(c, false); }
void EndPoll(ibv_cq_ex*) {}
ibv_wc_opcode ReadOpcode(ibv_cq_ex* c) { return static_cast<ibv_wc_opcode>(Cq(c)->current.opcode); }
uint32_t ReadVendorErr(ibv_cq_ex* c) { return Cq(c)->current.vendor_err; }
uint32_t ReadByteLen(ibv_cq_ex* c) { return Cq(c)->current.byte_len; }
__be32 ReadImmData(ibv_cq_ex* c) { return htonl(Cq(c)->current.imm_data); }
uint32_t ReadQpNum(ibv_cq_ex* c) { return Cq(c)->current.qp_num; }
uint32_t ReadSrcQp(ibv_cq_ex* c) { return Cq(c)->current.src_qp; }
unsigned int ReadWcFlags(ibv_cq_ex* c) { return Cq(c)->current.wc_flags; }
uint32_t ReadSlid(ibv_cq_ex* c) { return Cq(c)->current.slid; }
uint8_t ReadSl(ibv_cq_ex* c) { return Cq(c)->current.sl; }
uint8_t ReadDlidPathBits(ibv_cq_ex* c) { return Cq(c)->current.dlid_path_bits; }
// Reads of fields the CQ was not created with (create_cq_ex refuses those wc_flags): zeros,
// never a null function pointer.
uint64_t ReadNone64(ibv_cq_ex*) { return 0; }
uint16_t ReadCvlan(ibv_cq_ex*) { return 0; }
uint32_t ReadFlowTag(ibv_cq_ex*) { return 0; }
void ReadTmInfo(ibv_cq_ex*, ibv_wc_tm_info* info) { std::memset(info, 0, sizeof(*info)); }

// ---- ibv_wr_* -------------------------------------------------------------------------------

SendWr* Add(ibv_qp_ex* q, WrOpcode op) {
  ModelQp* qp = Qp(q);
  qp->batch.emplace_back();
  qp->inline_data.emplace_back();
  SendWr& w = qp->batch.back();
  w.wr_id = q->wr_id;
  w.send_flags = q->wr_flags;
  w.opcode = op;
  return &w;
}
SendWr* Last(ibv_qp_ex* q) {
  ModelQp* qp = Qp(q);
  if (qp->batch.empty()) {
    qp->batch_error = true;  // a setter before any WR: wr_complete fails (EINVAL)
    return nullptr;
  }
  return &qp->batch.back();
}

void WrStart(ibv_qp_ex* q) {
  Qp(q)->batch.clear();
  Qp(q)->inline_data.clear();
  Qp(q)->batch_error = false;
}
void WrAbort(ibv_qp_ex* q) { WrStart(q); }

void WrRdma(ibv_qp_ex* q, WrOpcode op, uint32_t rkey, uint64_t addr) {
  SendWr* w = Add(q, op);
  w->rkey = rkey;
  w->remote_addr = addr;
}
void WrRdmaWrite(ibv_qp_ex* q, uint32_t rkey, uint64_t addr) {
  WrRdma(q, WrOpcode::kRdmaWrite, rkey, addr);
}
void WrRdmaWriteImm(ibv_qp_ex* q, uint32_t rkey, uint64_t addr, __be32 imm) {
  WrRdma(q, WrOpcode::kRdmaWriteWithImm, rkey, addr);
  Qp(q)->batch.back().imm_data = ntohl(imm);
}
void WrRdmaRead(ibv_qp_ex* q, uint32_t rkey, uint64_t addr) {
  WrRdma(q, WrOpcode::kRdmaRead, rkey, addr);
}
void WrCmpSwp(ibv_qp_ex* q, uint32_t rkey, uint64_t addr, uint64_t compare, uint64_t swap) {
  WrRdma(q, WrOpcode::kAtomicCmpAndSwp, rkey, addr);
  Qp(q)->batch.back().compare_add = compare;
  Qp(q)->batch.back().swap = swap;
}
void WrFetchAdd(ibv_qp_ex* q, uint32_t rkey, uint64_t addr, uint64_t add) {
  WrRdma(q, WrOpcode::kAtomicFetchAndAdd, rkey, addr);
  Qp(q)->batch.back().compare_add = add;
}
void WrSend(ibv_qp_ex* q) { Add(q, WrOpcode::kSend); }
void WrSendImm(ibv_qp_ex* q, __be32 imm) { Add(q, WrOpcode::kSendWithImm)->imm_data = ntohl(imm); }
void WrSetUdAddr(ibv_qp_ex* q, ibv_ah* ah, uint32_t qpn, uint32_t qkey) {
  if (SendWr* w = Last(q)) {
    w->ah = reinterpret_cast<ModelAh*>(ah)->h;
    w->remote_qpn = qpn;
    w->remote_qkey = qkey;
  }
}
void WrSetXrcSrqn(ibv_qp_ex* q, uint32_t srqn) {
  if (SendWr* w = Last(q)) w->remote_srqn = srqn;
}
void WrSetSge(ibv_qp_ex* q, uint32_t lkey, uint64_t addr, uint32_t length) {
  if (SendWr* w = Last(q)) w->sg_list.assign(1, Sge{addr, length, lkey});
}
void WrSetSgeList(ibv_qp_ex* q, size_t n, const ibv_sge* sg) {
  if (SendWr* w = Last(q)) {
    w->sg_list.resize(n);
    for (size_t i = 0; i < n; ++i) w->sg_list[i] = Sge{sg[i].addr, sg[i].length, sg[i].lkey};
  }
}
void WrSetInlineDataList(ibv_qp_ex* q, size_t n, const ibv_data_buf* bufs) {
  SendWr* w = Last(q);
  if (!w) return;
  std::vector<uint8_t>& data = Qp(q)->inline_data.back();
  data.clear();
  for (size_t i = 0; i < n; ++i) {
    const auto* p = static_cast<const uint8_t*>(bufs[i].addr);
    data.insert(data.end(), p, p + bufs[i].length);
  }
  w->send_flags |= IBV_SEND_INLINE;
  w->sg_list.clear();
}
void WrSetInlineData(ibv_qp_ex* q, void* addr, size_t length) {
  const ibv_data_buf b{addr, length};
  WrSetInlineDataList(q, 1, &b);
}

// Memory windows (providers/rxe wr_bind_mw, wr_local_inv, wr_send_inv): the window, the
// rkey it gets and the region; the rkey to invalidate goes in imm_data (SendWr's union).
void WrBindMw(ibv_qp_ex* q, ibv_mw* mw, uint32_t rkey, const ibv_mw_bind_info* info) {
  SendWr* w = Add(q, WrOpcode::kBindMw);
  w->mw = mw ? Model<ModelMw>(mw)->h : MwHandle{};
  if (mw) w->mw_rkey = mw->rkey;  // providers/rxe wr_bind_mw reads it here, not at wr_complete
  w->rkey = rkey;
  if (info) w->bind_info = BindInfo(*info);
}
void WrLocalInv(ibv_qp_ex* q, uint32_t rkey) { Add(q, WrOpcode::kLocalInv)->imm_data = rkey; }
void WrSendInv(ibv_qp_ex* q, uint32_t rkey) { Add(q, WrOpcode::kSendWithInv)->imm_data = rkey; }

// Work requests the model has no verb for (TSO, atomic write): the batch fails at
// wr_complete with EOPNOTSUPP's neighbour EINVAL, as a provider that sets no such op would
// leave the program calling a null pointer instead.
void WrUnsupported(ibv_qp_ex* q) { Qp(q)->batch_error = true; }
void WrSendTso(ibv_qp_ex* q, void*, uint16_t, uint16_t) { WrUnsupported(q); }
void WrAtomicWrite(ibv_qp_ex* q, uint32_t, uint64_t, const void*) { WrUnsupported(q); }

int WrComplete(ibv_qp_ex* q) {
  ModelQp* qp = Qp(q);
  if (qp->batch_error) {
    WrStart(q);
    return EINVAL;
  }
  int err = 0;
  Preload::Get().Run([&] {
    ModelContext* m = qp->mctx;
    size_t inline_off = 0;
    for (size_t i = 0; i < qp->batch.size(); ++i) {
      SendWr& w = qp->batch[i];
      uint64_t len = 0;
      for (Sge& s : w.sg_list) {
        len += s.length;
        if (s.length > 0) s.addr = LocalAddr(m, s.lkey, s.addr, s.length);
      }
      if (w.send_flags & IBV_SEND_INLINE) {
        const uint8_t* part = qp->inline_data[i].data();
        const size_t n = qp->inline_data[i].size();
        len = n;
        w.sg_list.assign(1, InlineSge(m, &part, &n, 1, &inline_off));
      }
      const bool atomic = w.opcode == WrOpcode::kAtomicCmpAndSwp ||
                          w.opcode == WrOpcode::kAtomicFetchAndAdd;
      const bool rdma = w.opcode == WrOpcode::kRdmaWrite ||
                        w.opcode == WrOpcode::kRdmaWriteWithImm || w.opcode == WrOpcode::kRdmaRead;
      if (atomic || rdma) w.remote_addr = RemoteAddr(qp->peer, w.rkey, w.remote_addr, atomic ? 8 : len);
    }
    size_t bad = qp->batch.size();
    err = m->dev->PostSend(qp->h, qp->batch, &bad);
    NoteBinds(m, qp->batch, err ? bad : qp->batch.size());
  });
  WrStart(q);
  return err;
}

}  // namespace

void InstallCqExOps(ModelCq* cq, uint64_t) {
  ibv_cq_ex& c = cq->cq;
  c.start_poll = StartPoll;
  c.next_poll = NextPoll;
  c.end_poll = EndPoll;
  c.read_opcode = ReadOpcode;
  c.read_vendor_err = ReadVendorErr;
  c.read_byte_len = ReadByteLen;
  c.read_imm_data = ReadImmData;
  c.read_qp_num = ReadQpNum;
  c.read_src_qp = ReadSrcQp;
  c.read_wc_flags = ReadWcFlags;
  c.read_slid = ReadSlid;
  c.read_sl = ReadSl;
  c.read_dlid_path_bits = ReadDlidPathBits;
  c.read_completion_ts = ReadNone64;
  c.read_completion_wallclock_ns = ReadNone64;
  c.read_cvlan = ReadCvlan;
  c.read_flow_tag = ReadFlowTag;
  c.read_tm_info = ReadTmInfo;
}

void InstallQpExOps(ModelQp* qp) {
  ibv_qp_ex& q = qp->qpx;
  q.wr_start = WrStart;
  q.wr_complete = WrComplete;
  q.wr_abort = WrAbort;
  q.wr_rdma_write = WrRdmaWrite;
  q.wr_rdma_write_imm = WrRdmaWriteImm;
  q.wr_rdma_read = WrRdmaRead;
  q.wr_atomic_cmp_swp = WrCmpSwp;
  q.wr_atomic_fetch_add = WrFetchAdd;
  q.wr_send = WrSend;
  q.wr_send_imm = WrSendImm;
  q.wr_set_ud_addr = WrSetUdAddr;
  q.wr_set_xrc_srqn = WrSetXrcSrqn;
  q.wr_set_sge = WrSetSge;
  q.wr_set_sge_list = WrSetSgeList;
  q.wr_set_inline_data = WrSetInlineData;
  q.wr_set_inline_data_list = WrSetInlineDataList;
  q.wr_bind_mw = WrBindMw;
  q.wr_local_inv = WrLocalInv;
  q.wr_send_inv = WrSendInv;
  q.wr_send_tso = WrSendTso;
  q.wr_atomic_write = WrAtomicWrite;
}

}  // namespace qptwin::exec
