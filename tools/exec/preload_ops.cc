// The context's ops tables (ibv_context_ops, which verbs.h's inline ibv_post_send,
// ibv_post_recv, ibv_poll_cq, ibv_req_notify_cq and ibv_post_srq_recv call, and the
// verbs_context ops the extended calls find), and IsModel.
#include <arpa/inet.h>

#include <cerrno>
#include <cstring>

#include "tools/exec/datapath.h"
#include "tools/exec/preload.h"

namespace qptwin::exec {

int QueryPortOp(ibv_context*, uint8_t, ibv_port_attr*, size_t);
int QueryDeviceExOp(ibv_context*, const ibv_query_device_ex_input*, ibv_device_attr_ex*, size_t);
ibv_cq_ex* CreateCqExOp(ibv_context*, ibv_cq_init_attr_ex*);
ibv_qp* CreateQpExOp(ibv_context*, ibv_qp_init_attr_ex*);
ibv_srq* CreateSrqExOp(ibv_context*, ibv_srq_init_attr_ex*);
int GetSrqNumOp(ibv_srq*, uint32_t*);
ibv_xrcd* OpenXrcdOp(ibv_context*, ibv_xrcd_init_attr*);
int CloseXrcdOp(ibv_xrcd*);
ibv_mw* AllocMwOp(ibv_pd*, ibv_mw_type);
int DeallocMwOp(ibv_mw*);
int BindMwOp(ibv_qp*, ibv_mw*, ibv_mw_bind*);

namespace {

// One ibv_send_wr as the model's SendWr; inline data goes to the scratch buffer.
void ConvertSend(ModelContext* m, ibv_qp_type type, int peer, const ibv_send_wr* w, size_t* inline_off,
                 SendWr* s) {
  s->wr_id = w->wr_id;
  s->opcode = static_cast<WrOpcode>(w->opcode);
  s->send_flags = w->send_flags;
  // imm_data is __be32; LOCAL_INV / SEND_WITH_INV share it as invalidate_rkey, host order
  // (ibv_post_send(3)), which SendWr carries in imm_data as is.
  const bool inv = w->opcode == IBV_WR_LOCAL_INV || w->opcode == IBV_WR_SEND_WITH_INV;
  s->imm_data = inv ? w->invalidate_rkey : ntohl(w->imm_data);
  uint64_t len = 0;
  for (int i = 0; i < w->num_sge; ++i) len += w->sg_list[i].length;
  switch (w->opcode) {
    case IBV_WR_RDMA_WRITE:
    case IBV_WR_RDMA_WRITE_WITH_IMM:
    case IBV_WR_RDMA_READ:
      s->rkey = w->wr.rdma.rkey;
      s->remote_addr = RemoteAddr(peer, w->wr.rdma.rkey, w->wr.rdma.remote_addr, len);
      break;
    case IBV_WR_ATOMIC_CMP_AND_SWP:
    case IBV_WR_ATOMIC_FETCH_AND_ADD:
      s->rkey = w->wr.atomic.rkey;
      s->remote_addr = RemoteAddr(peer, w->wr.atomic.rkey, w->wr.atomic.remote_addr, 8);
      s->compare_add = w->wr.atomic.compare_add;
      s->swap = w->wr.atomic.swap;
      break;
    case IBV_WR_BIND_MW:
      // bind_mw: the window, the rkey it gets (the program's choice for type 2), the region.
      s->mw = w->bind_mw.mw ? Model<ModelMw>(w->bind_mw.mw)->h : MwHandle{};
      // providers/rxe convert_send_wr: the window is named by mw->rkey as it is now.
      if (w->bind_mw.mw) s->mw_rkey = w->bind_mw.mw->rkey;
      s->rkey = w->bind_mw.rkey;
      s->bind_info = BindInfo(w->bind_mw.bind_info);
      break;
    default:
      break;
  }
  // wr.ud shares a union with wr.rdma/wr.atomic, qp_type.xrc with nothing it would mean.
  if (type == IBV_QPT_UD && w->wr.ud.ah != nullptr) {
    s->ah = Model<ModelAh>(w->wr.ud.ah)->h;
    s->remote_qpn = w->wr.ud.remote_qpn;
    s->remote_qkey = w->wr.ud.remote_qkey;
  }
  if (type == IBV_QPT_XRC_SEND) s->remote_srqn = w->qp_type.xrc.remote_srqn;
  if ((w->send_flags & IBV_SEND_INLINE) && w->num_sge > 0) {
    const uint8_t* parts[64];
    size_t lens[64];
    const int n = std::min(w->num_sge, 64);
    for (int i = 0; i < n; ++i) {
      parts[i] = reinterpret_cast<const uint8_t*>(w->sg_list[i].addr);
      lens[i] = w->sg_list[i].length;
    }
    if (w->num_sge <= 64) {
      s->sg_list.assign(1, InlineSge(m, parts, lens, n, inline_off));
      // Keep the SGE count the program used: the model checks it against max_send_sge.
      s->sg_list.resize(w->num_sge, Sge{0, 0, m->scratch_lkey});
      return;
    }
  }
  ConvertSges(m, w->sg_list, w->num_sge, &s->sg_list);
}

int PostSendOp(ibv_qp* qp, ibv_send_wr* wr, ibv_send_wr** bad_wr) {
  auto* q = Model<ModelQp>(qp);
  int err = 0;
  size_t bad = 0;
  Preload::Get().Run([&] {
    static std::vector<SendWr> wrs;  // model thread only: reused, no allocation per post
    size_t n = 0, inline_off = 0;
    for (ibv_send_wr* w = wr; w; w = w->next, ++n) {
      if (wrs.size() <= n) wrs.emplace_back();
      wrs[n] = SendWr{};
      ConvertSend(q->mctx, qp->qp_type, q->peer, w, &inline_off, &wrs[n]);
    }
    wrs.resize(n);
    bad = n;
    err = q->mctx->dev->PostSend(q->h, wrs, &bad);
    NoteBinds(q->mctx, wrs, err ? bad : n);
  });
  if (err && bad_wr) {
    ibv_send_wr* w = wr;
    for (size_t i = 0; w && i < bad; ++i) w = w->next;
    if (w) *bad_wr = w;  // all posted (rxe below RTS): bad_wr is not written
  }
  return err;
}

template <typename PostFn>
int PostRecvCommon(ModelContext* m, ibv_recv_wr* wr, ibv_recv_wr** bad_wr, PostFn post) {
  int err = 0;
  size_t bad = 0;
  Preload::Get().Run([&] {
    static std::vector<RecvWr> wrs;
    size_t n = 0;
    for (ibv_recv_wr* w = wr; w; w = w->next, ++n) {
      if (wrs.size() <= n) wrs.emplace_back();
      wrs[n].wr_id = w->wr_id;
      ConvertSges(m, w->sg_list, w->num_sge, &wrs[n].sg_list);
    }
    wrs.resize(n);
    bad = n;
    err = post(wrs, &bad);
  });
  if (err && bad_wr) {
    ibv_recv_wr* w = wr;
    for (size_t i = 0; w && i < bad; ++i) w = w->next;
    if (w) *bad_wr = w;
  }
  return err;
}

int PostRecvOp(ibv_qp* qp, ibv_recv_wr* wr, ibv_recv_wr** bad_wr) {
  auto* q = Model<ModelQp>(qp);
  return PostRecvCommon(q->mctx, wr, bad_wr, [&](const std::vector<RecvWr>& w, size_t* bad) {
    return q->mctx->dev->PostRecv(q->h, w, bad);
  });
}

int PostSrqRecvOp(ibv_srq* srq, ibv_recv_wr* wr, ibv_recv_wr** bad_wr) {
  ModelContext* m = Ctx(srq->context);
  auto* s = Model<ModelSrq>(srq);
  return PostRecvCommon(m, wr, bad_wr, [&](const std::vector<RecvWr>& w, size_t* bad) {
    return m->dev->PostSrqRecv(s->h, w, bad);
  });
}

int PollCqOp(ibv_cq* cq, int n, ibv_wc* wc) {
  int r = 0;
  Preload::Get().Run([&] { r = PollInto(Model<ModelCq>(cq), n, wc, nullptr); });
  return r;
}

int ReqNotifyCqOp(ibv_cq* cq, int solicited_only) {
  auto* c = Model<ModelCq>(cq);
  int err = 0;
  Preload::Get().Run([&] {
    err = c->mctx->dev->ReqNotifyCq(c->h, solicited_only != 0);
    if (err || c->armed || cq->channel == nullptr) return;
    c->armed = true;
    Model<ModelChannel>(cq->channel)->armed++;
  });
  return err;
}

}  // namespace

bool IsModel(const ibv_context* ctx) { return ctx != nullptr && ctx->ops.poll_cq == &PollCqOp; }

void InstallOps(ModelContext* m) {
  ibv_context_ops& o = m->vctx.context.ops;
  o.poll_cq = PollCqOp;
  o.req_notify_cq = ReqNotifyCqOp;
  o.post_send = PostSendOp;
  o.post_recv = PostRecvOp;
  o.post_srq_recv = PostSrqRecvOp;
  o.alloc_mw = AllocMwOp;
  o.dealloc_mw = DeallocMwOp;
  o.bind_mw = BindMwOp;
  verbs_context& v = m->vctx;
  v.query_port = QueryPortOp;
  v.query_device_ex = QueryDeviceExOp;
  v.create_cq_ex = CreateCqExOp;
  v.create_qp_ex = CreateQpExOp;
  v.create_srq_ex = CreateSrqExOp;
  v.get_srq_num = GetSrqNumOp;
  v.open_xrcd = OpenXrcdOp;
  v.close_xrcd = CloseXrcdOp;
}

}  // namespace qptwin::exec
