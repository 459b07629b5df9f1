// QPs (ibv_create_qp, the create_qp_ex op, modify, query, destroy, ibv_qp_to_qp_ex), SRQs,
// AHs and XRC domains of model devices.
#include <fcntl.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "hw/convert.h"
#include "tools/exec/device_attrs.h"
#include "tools/exec/datapath.h"
#include "tools/exec/preload.h"

using qptwin::exec::Ctx;
using qptwin::exec::Fail;
using qptwin::exec::IsModel;
using qptwin::exec::Model;
using qptwin::exec::ModelAh;
using qptwin::exec::ModelContext;
using qptwin::exec::ModelCq;
using qptwin::exec::ModelPd;
using qptwin::exec::ModelQp;
using qptwin::exec::ModelSrq;
using qptwin::exec::ModelXrcd;
using qptwin::exec::Preload;
using qptwin::exec::Real;

namespace qptwin::exec {
void InstallQpExOps(ModelQp* qp);

namespace {

CqHandle CqOf(ibv_cq* cq) { return cq ? Model<ModelCq>(cq)->h : CqHandle{}; }

ModelSrq* NewSrq(ibv_context* context, ibv_pd* pd, void* srq_context, const SrqInitAttr& init,
                 int* err) {
  ModelContext* m = Ctx(context);
  auto* srq = new ModelSrq();
  Preload::Get().Run([&] {
    *err = m->dev->CreateSrqEx(init, &srq->h);
    if (!*err) m->srqs[srq->h.id] = srq;
  });
  if (*err) {
    delete srq;
    return nullptr;
  }
  srq->srq.context = context;
  srq->srq.srq_context = srq_context;
  srq->srq.pd = pd;
  srq->srq.handle = srq->h.id;
  pthread_mutex_init(&srq->srq.mutex, nullptr);
  pthread_cond_init(&srq->srq.cond, nullptr);
  return srq;
}

}  // namespace

// Without the RoCE bridge (bridge.h: QPTWIN_BRIDGE=off, or no loopback) both ends must be
// in this process. A connection to a QP number no model device here has, or to the QP
// itself (what two processes with identical models see: the peer's numbers are this
// process's own), would only time out; say so once, on stderr.
void WarnIfElsewhere(ModelQp* q, uint32_t dest_qpn) {
  static bool warned = false;
  if (warned) return;
  if (q->peer == kElsewhere && Preload::Get().bridge()) return;  // the RoCE bridge carries it
  bool self = false, found = false;
  for (ModelContext* c : Preload::Get().contexts()) {
    if (q->peer >= 0 && c->index != q->peer) continue;
    for (const auto& [h, other] : c->qps) {
      if (other->qpx.qp_base.qp_num != dest_qpn) continue;
      found = true;
      self = self || other == q;
    }
  }
  if (found && !self) return;
  warned = true;
  std::fprintf(stderr,
               "qptwin preload: QP %u connects to QP %u, %s; the model connects QPs of one "
               "process only (the RoCE bridge to other processes is off: tools/exec/README.md)\n",
               q->qpx.qp_base.qp_num, dest_qpn,
               self ? "itself" : "which no model device of this process has");
}

ibv_qp* CreateQpExOp(ibv_context* context, ibv_qp_init_attr_ex* a) {
  constexpr uint32_t kKnown = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_XRCD |
                              IBV_QP_INIT_ATTR_SEND_OPS_FLAGS | IBV_QP_INIT_ATTR_CREATE_FLAGS;
  if (a->comp_mask & ~kKnown) return Fail<ibv_qp>(EOPNOTSUPP);
  // rxe_qp_chk_init (kernel 6.1) refuses every create flag.
  if ((a->comp_mask & IBV_QP_INIT_ATTR_CREATE_FLAGS) && a->create_flags != 0) {
    return Fail<ibv_qp>(EOPNOTSUPP);
  }
  ModelContext* m = Ctx(context);
  QpInitAttr init;
  init.qp_type = static_cast<QpType>(a->qp_type);
  if (a->qp_type == IBV_QPT_XRC_RECV) {
    if (!(a->comp_mask & IBV_QP_INIT_ATTR_XRCD) || a->xrcd == nullptr) return Fail<ibv_qp>(EINVAL);
    init.xrcd = reinterpret_cast<ModelXrcd*>(a->xrcd)->h;
  } else {
    if (!(a->comp_mask & IBV_QP_INIT_ATTR_PD) || a->pd == nullptr) return Fail<ibv_qp>(EINVAL);
    init.pd = Model<ModelPd>(a->pd)->h;
  }
  init.send_cq = CqOf(a->send_cq);
  init.recv_cq = CqOf(a->recv_cq);
  init.srq = a->srq ? Model<ModelSrq>(a->srq)->h : SrqHandle{};
  init.cap = qptwin::hw::FromIbvQpCap(a->cap);
  init.sq_sig_all = a->sq_sig_all != 0;
  auto* qp = new ModelQp();
  QpCap actual;
  uint32_t qpn = 0;
  int err = 0;
  Preload::Get().Run([&] {
    err = m->dev->CreateQp(init, &qp->h, &actual);
    if (err) return;
    (void)m->dev->QpNum(qp->h, &qpn);
    m->qps[qp->h.id] = qp;
  });
  if (err) {
    delete qp;
    return Fail<ibv_qp>(err);
  }
  qp->mctx = m;
  ibv_qp& q = qp->qpx.qp_base;
  q.context = context;
  q.qp_context = a->qp_context;
  q.pd = a->qp_type == IBV_QPT_XRC_RECV ? nullptr : a->pd;
  q.send_cq = a->send_cq;
  q.recv_cq = a->recv_cq;
  q.srq = a->srq;
  q.handle = qp->h.id;
  q.qp_num = qpn;
  q.state = IBV_QPS_RESET;
  q.qp_type = a->qp_type;
  pthread_mutex_init(&q.mutex, nullptr);
  pthread_cond_init(&q.cond, nullptr);
  a->cap = qptwin::hw::ToIbvQpCap(actual);
  if (a->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) {
    qp->ex = true;
    InstallQpExOps(qp);
  }
  return &q;
}

ibv_srq* CreateSrqExOp(ibv_context* context, ibv_srq_init_attr_ex* a) {
  constexpr uint32_t kKnown = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD |
                              IBV_SRQ_INIT_ATTR_XRCD | IBV_SRQ_INIT_ATTR_CQ;
  if (a->comp_mask & ~kKnown) return Fail<ibv_srq>(EOPNOTSUPP);
  SrqInitAttr init;
  init.srq_type = (a->comp_mask & IBV_SRQ_INIT_ATTR_TYPE) && a->srq_type == IBV_SRQT_XRC
                      ? SrqType::kXrc
                      : SrqType::kBasic;
  if ((a->comp_mask & IBV_SRQ_INIT_ATTR_TYPE) && a->srq_type > IBV_SRQT_XRC) {
    return Fail<ibv_srq>(EOPNOTSUPP);
  }
  if ((a->comp_mask & IBV_SRQ_INIT_ATTR_PD) && a->pd) init.pd = Model<ModelPd>(a->pd)->h;
  if ((a->comp_mask & IBV_SRQ_INIT_ATTR_XRCD) && a->xrcd) {
    init.xrcd = reinterpret_cast<ModelXrcd*>(a->xrcd)->h;
  }
  if ((a->comp_mask & IBV_SRQ_INIT_ATTR_CQ) && a->cq) init.cq = Model<ModelCq>(a->cq)->h;
  init.max_wr = a->attr.max_wr;
  init.max_sge = a->attr.max_sge;
  int err = 0;
  ModelSrq* srq = NewSrq(context, a->pd, a->srq_context, init, &err);
  return srq ? &srq->srq : Fail<ibv_srq>(err);
}

int GetSrqNumOp(ibv_srq* srq, uint32_t* num) {
  int err = 0;
  Preload::Get().Run([&] { err = Ctx(srq->context)->dev->SrqNum(Model<ModelSrq>(srq)->h, num); });
  return err;
}

// ibv_open_xrcd(3): with a file (IBV_XRCD_INIT_ATTR_FD), every open of that file on this
// context is the same domain (O_CREAT makes it when there is none); fd -1 is a new one.
ibv_xrcd* OpenXrcdOp(ibv_context* context, ibv_xrcd_init_attr* a) {
  uint64_t inode = 0;
  if ((a->comp_mask & IBV_XRCD_INIT_ATTR_FD) && a->fd != -1) {
    struct stat st;
    if (fstat(a->fd, &st) != 0) return Fail<ibv_xrcd>(EBADF);
    inode = static_cast<uint64_t>(st.st_ino) ^ (static_cast<uint64_t>(st.st_dev) << 40);
  }
  const int oflags = (a->comp_mask & IBV_XRCD_INIT_ATTR_OFLAGS) ? a->oflags : 0;
  ModelContext* m = Ctx(context);
  auto* x = new ModelXrcd();
  x->inode = inode;
  int err = 0;
  Preload::Get().Run([&] {
    auto it = inode ? m->xrcd_files.find(inode) : m->xrcd_files.end();
    if (it != m->xrcd_files.end()) {
      if ((oflags & O_CREAT) && (oflags & O_EXCL)) {
        err = EEXIST;
        return;
      }
      x->h = it->second.first;
      ++it->second.second;
      return;
    }
    if (inode && !(oflags & O_CREAT)) {
      err = ENOENT;  // no domain for that file yet
      return;
    }
    err = m->dev->OpenXrcd(&x->h);
    if (!err && inode) m->xrcd_files[inode] = {x->h, 1};
  });
  if (err) {
    delete x;
    return Fail<ibv_xrcd>(err);
  }
  x->xrcd.context = context;
  return &x->xrcd;
}

int CloseXrcdOp(ibv_xrcd* xrcd) {
  auto* x = reinterpret_cast<ModelXrcd*>(xrcd);
  ModelContext* m = Ctx(xrcd->context);
  int err = 0;
  Preload::Get().Run([&] {
    auto it = x->inode ? m->xrcd_files.find(x->inode) : m->xrcd_files.end();
    if (it != m->xrcd_files.end() && it->second.second > 1) {
      --it->second.second;  // another open of the file keeps the domain
      return;
    }
    err = m->dev->CloseXrcd(x->h);
    if (!err && it != m->xrcd_files.end()) m->xrcd_files.erase(it);
  });
  if (!err) delete x;
  return err;
}

}  // namespace qptwin::exec

extern "C" {

ibv_qp* ibv_create_qp(ibv_pd* pd, ibv_qp_init_attr* attr) {
  static auto real = Real(&ibv_create_qp, "ibv_create_qp");
  if (!IsModel(pd->context)) return real(pd, attr);
  ibv_qp_init_attr_ex ex{};
  std::memcpy(&ex, attr, sizeof(*attr));  // ibv_qp_init_attr is ibv_qp_init_attr_ex's prefix
  ex.comp_mask = IBV_QP_INIT_ATTR_PD;
  ex.pd = pd;
  ibv_qp* qp = qptwin::exec::CreateQpExOp(pd->context, &ex);
  if (qp) attr->cap = ex.cap;
  return qp;
}

int ibv_modify_qp(ibv_qp* qp, ibv_qp_attr* attr, int mask) {
  static auto real = Real(&ibv_modify_qp, "ibv_modify_qp");
  if (!IsModel(qp->context)) return real(qp, attr, mask);
  auto* q = Model<ModelQp>(qp);
  const qptwin::QpAttr a = qptwin::hw::FromIbvQpAttr(*attr);
  int err = 0;
  Preload::Get().Run([&] {
    err = q->mctx->dev->ModifyQp(q->h, a, static_cast<qptwin::AttrMask>(mask));
    if (!err && (mask & IBV_QP_AV)) q->peer = qptwin::exec::PeerDevice(attr->ah_attr);
    if (!err && (mask & IBV_QP_DEST_QPN)) qptwin::exec::WarnIfElsewhere(q, attr->dest_qp_num);
  });
  if (!err && (mask & IBV_QP_STATE)) qp->state = attr->qp_state;
  return err;
}

int ibv_query_qp(ibv_qp* qp, ibv_qp_attr* attr, int mask, ibv_qp_init_attr* init_attr) {
  static auto real = Real(&ibv_query_qp, "ibv_query_qp");
  if (!IsModel(qp->context)) return real(qp, attr, mask, init_attr);
  auto* q = Model<ModelQp>(qp);
  qptwin::QpAttr a;
  qptwin::QpInitAttr init;
  int err = 0;
  Preload::Get().Run([&] { err = q->mctx->dev->QueryQp(q->h, &a, &init); });
  if (err) return err;
  *attr = qptwin::hw::ToIbvQpAttr(a);
  attr->path_mig_state = IBV_MIG_MIGRATED;  // as rxe reports it: no alternate path loaded
  std::memset(init_attr, 0, sizeof(*init_attr));
  init_attr->qp_context = qp->qp_context;
  init_attr->send_cq = qp->send_cq;
  init_attr->recv_cq = qp->recv_cq;
  init_attr->srq = qp->srq;
  init_attr->cap = qptwin::hw::ToIbvQpCap(init.cap);
  init_attr->qp_type = qp->qp_type;
  init_attr->sq_sig_all = init.sq_sig_all ? 1 : 0;
  qp->state = attr->qp_state;
  return 0;
}

int ibv_destroy_qp(ibv_qp* qp) {
  static auto real = Real(&ibv_destroy_qp, "ibv_destroy_qp");
  if (!IsModel(qp->context)) return real(qp);
  auto* q = Model<ModelQp>(qp);
  int err = 0;
  Preload::Get().Run([&] {
    Preload::Get().FlushBridge();  // its last ACKs leave before it goes (bridge.h)
    err = q->mctx->dev->DestroyQp(q->h);
    if (!err) q->mctx->qps.erase(q->h.id);
  });
  if (!err) delete q;
  return err;
}

ibv_qp_ex* ibv_qp_to_qp_ex(ibv_qp* qp) {
  static auto real = Real(&ibv_qp_to_qp_ex, "ibv_qp_to_qp_ex", "IBVERBS_1.6");
  if (!IsModel(qp->context)) return real(qp);
  auto* q = Model<ModelQp>(qp);
  return q->ex ? &q->qpx : nullptr;
}

ibv_srq* ibv_create_srq(ibv_pd* pd, ibv_srq_init_attr* attr) {
  static auto real = Real(&ibv_create_srq, "ibv_create_srq");
  if (!IsModel(pd->context)) return real(pd, attr);
  qptwin::SrqInitAttr init;
  init.pd = Model<ModelPd>(pd)->h;
  init.max_wr = attr->attr.max_wr;
  init.max_sge = attr->attr.max_sge;
  int err = 0;
  ModelSrq* srq = qptwin::exec::NewSrq(pd->context, pd, attr->srq_context, init, &err);
  return srq ? &srq->srq : Fail<ibv_srq>(err);
}

int ibv_modify_srq(ibv_srq* srq, ibv_srq_attr* attr, int mask) {
  static auto real = Real(&ibv_modify_srq, "ibv_modify_srq");
  if (!IsModel(srq->context)) return real(srq, attr, mask);
  const qptwin::SrqAttr a{attr->max_wr, attr->max_sge, attr->srq_limit};
  int err = 0;
  Preload::Get().Run([&] {
    err = Ctx(srq->context)->dev->ModifySrq(Model<ModelSrq>(srq)->h, a, static_cast<uint32_t>(mask));
  });
  return err;
}

int ibv_query_srq(ibv_srq* srq, ibv_srq_attr* attr) {
  static auto real = Real(&ibv_query_srq, "ibv_query_srq");
  if (!IsModel(srq->context)) return real(srq, attr);
  qptwin::SrqAttr a;
  int err = 0;
  Preload::Get().Run([&] { err = Ctx(srq->context)->dev->QuerySrq(Model<ModelSrq>(srq)->h, &a); });
  if (!err) *attr = ibv_srq_attr{a.max_wr, a.max_sge, a.srq_limit};
  return err;
}

int ibv_destroy_srq(ibv_srq* srq) {
  static auto real = Real(&ibv_destroy_srq, "ibv_destroy_srq");
  if (!IsModel(srq->context)) return real(srq);
  auto* s = Model<ModelSrq>(srq);
  ModelContext* m = Ctx(srq->context);
  int err = 0;
  Preload::Get().Run([&] {
    err = m->dev->DestroySrq(s->h);
    if (!err) m->srqs.erase(s->h.id);
  });
  if (!err) delete s;
  return err;
}

ibv_ah* ibv_create_ah(ibv_pd* pd, ibv_ah_attr* attr) {
  static auto real = Real(&ibv_create_ah, "ibv_create_ah");
  if (!IsModel(pd->context)) return real(pd, attr);
  auto* ah = new ModelAh();
  const qptwin::AhAttr a = qptwin::hw::FromIbvAhAttr(*attr);
  int err = 0;
  Preload::Get().Run([&] { err = Ctx(pd->context)->dev->CreateAh(Model<ModelPd>(pd)->h, a, &ah->h); });
  if (err) {
    delete ah;
    return Fail<ibv_ah>(err);
  }
  ah->ah.context = pd->context;
  ah->ah.pd = pd;
  ah->ah.handle = ah->h.id;
  return &ah->ah;
}

int ibv_destroy_ah(ibv_ah* ah) {
  static auto real = Real(&ibv_destroy_ah, "ibv_destroy_ah");
  if (!IsModel(ah->context)) return real(ah);
  int err = 0;
  Preload::Get().Run([&] { err = Ctx(ah->context)->dev->DestroyAh(Model<ModelAh>(ah)->h); });
  if (!err) delete Model<ModelAh>(ah);
  return err;
}

}  // extern "C"
