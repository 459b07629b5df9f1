// VerbsDevice: QPs (control path) and their recorded state history.
#include <algorithm>
#include <cerrno>

#include "hw/convert.h"
#include "hw/verbs_device.h"

namespace qptwin::hw {
namespace {

// Every standard attribute: what QueryQp asks for (providers fill what they know).
constexpr int kQueryAllMask = static_cast<int>(attr::kStandardBits);

// The caps a new QP really has. libibverbs writes back what the kernel returned, but rxe
// (kernel 6.1) returns the requested max_send_wr/max_recv_wr while its rings hold
// roundup_pow_of_two(n + 1) - 1 entries (rxe_queue_init), and the provider accepts WRs
// until the ring is full; ibv_query_qp reports the ring sizes (rxe_qp_to_attr). So the
// granted caps are the larger of both answers, field by field.
QpCap GrantedCaps(ibv_qp* qp, const ibv_qp_cap& written_back) {
  QpCap cap = FromIbvQpCap(written_back);
  ibv_qp_attr qa{};
  ibv_qp_init_attr qi{};
  if (ibv_query_qp(qp, &qa, IBV_QP_CAP, &qi) != 0) return cap;
  const QpCap queried = FromIbvQpCap(qi.cap);
  cap.max_send_wr = std::max(cap.max_send_wr, queried.max_send_wr);
  cap.max_recv_wr = std::max(cap.max_recv_wr, queried.max_recv_wr);
  cap.max_send_sge = std::max(cap.max_send_sge, queried.max_send_sge);
  cap.max_recv_sge = std::max(cap.max_recv_sge, queried.max_recv_sge);
  cap.max_inline_data = std::max(cap.max_inline_data, queried.max_inline_data);
  return cap;
}

}  // namespace

int VerbsDevice::CreateXrcQp(const QpInitAttr& init, QpHandle* out, QpCap* actual) {
  ibv_qp_init_attr_ex ia{};
  ia.qp_type = static_cast<ibv_qp_type>(init.qp_type);
  ia.sq_sig_all = init.sq_sig_all ? 1 : 0;
  if (init.qp_type == QpType::kXrcRecv) {
    // ibv_create_qp_ex(3): an XRC_RECV QP belongs to an XRCD and has no PD, CQs or queues.
    XrcdEntry* x = xrcds_.Find(init.xrcd);
    if (x == nullptr) return EINVAL;
    ia.comp_mask = IBV_QP_INIT_ATTR_XRCD;
    ia.xrcd = x->xrcd;
  } else {
    // XRC_SEND: PD and send CQ; libibverbs cmd.c create_qp_ex_common passes no recv_cq or
    // srq for it, so they are not looked up here either.
    PdEntry* pd = pds_.Find(init.pd);
    CqEntry* send_cq = cqs_.Find(init.send_cq);
    if (pd == nullptr || send_cq == nullptr) return EINVAL;
    ia.comp_mask = IBV_QP_INIT_ATTR_PD;
    ia.pd = pd->pd;
    ia.send_cq = send_cq->cq;
    ia.cap = ToIbvQpCap(init.cap);
    ia.cap.max_recv_wr = ia.cap.max_recv_sge = 0;
  }
  errno = 0;
  ibv_qp* qp = ibv_create_qp_ex(context_, &ia);
  if (qp == nullptr) return LastErrno();
  QpEntry entry;
  entry.qp = qp;
  entry.init = init;
  if (init.qp_type == QpType::kXrcRecv) {
    entry.init.pd = PdHandle{};
    entry.init.send_cq = CqHandle{};
    entry.init.cap = QpCap{};
  } else {
    entry.init.xrcd = XrcdHandle{};
    entry.init.cap = GrantedCaps(qp, ia.cap);
  }
  entry.init.recv_cq = CqHandle{};
  entry.init.srq = SrqHandle{};
  if (actual != nullptr) *actual = entry.init.cap;
  *out = qps_.Add(std::move(entry));
  return 0;
}

int VerbsDevice::CreateQp(const QpInitAttr& init, QpHandle* out, QpCap* actual) {
  if (out == nullptr) return EINVAL;
  if (init.qp_type == QpType::kXrcSend || init.qp_type == QpType::kXrcRecv) {
    return CreateXrcQp(init, out, actual);
  }
  PdEntry* pd = pds_.Find(init.pd);
  CqEntry* send_cq = cqs_.Find(init.send_cq);
  CqEntry* recv_cq = cqs_.Find(init.recv_cq);
  if (pd == nullptr || send_cq == nullptr || recv_cq == nullptr) return EINVAL;
  ibv_srq* srq = nullptr;
  if (init.srq) {
    SrqEntry* s = srqs_.Find(init.srq);
    if (s == nullptr) return EINVAL;
    srq = s->srq;
  }
  ibv_qp_init_attr ia{};
  ia.send_cq = send_cq->cq;
  ia.recv_cq = recv_cq->cq;
  ia.srq = srq;
  ia.cap = ToIbvQpCap(init.cap);
  ia.qp_type = static_cast<ibv_qp_type>(init.qp_type);
  ia.sq_sig_all = init.sq_sig_all ? 1 : 0;
  errno = 0;
  ibv_qp* qp = ibv_create_qp(pd->pd, &ia);
  if (qp == nullptr) return LastErrno();
  QpEntry entry;
  entry.qp = qp;
  entry.init = init;
  entry.init.cap = GrantedCaps(qp, ia.cap);
  if (actual != nullptr) *actual = entry.init.cap;
  *out = qps_.Add(std::move(entry));
  return 0;
}

int VerbsDevice::DestroyQp(QpHandle h) {
  QpEntry* q = qps_.Find(h);
  if (q == nullptr) return EINVAL;
  DrainAsyncEvents();  // map this QP's pending events while its pointer is still valid
  int ret = ibv_destroy_qp(q->qp);
  if (ret == 0) qps_.Remove(h);
  return ret;
}

int VerbsDevice::QpNum(QpHandle h, uint32_t* qp_num) {
  QpEntry* q = qps_.Find(h);
  if (q == nullptr || qp_num == nullptr) return EINVAL;
  *qp_num = q->qp->qp_num;
  return 0;
}

void VerbsDevice::RecordState(QpEntry* q, QpState to, const std::string& cause) {
  StateChange change;
  change.time_ns = clock_.NowNs();
  change.from = q->last_state;
  change.to = to;
  change.cause = cause;
  q->history.push_back(std::move(change));
  q->last_state = to;
}

QpState VerbsDevice::ObserveState(QpEntry* q, const std::string& cause) {
  ibv_qp_attr attr{};
  ibv_qp_init_attr init{};
  if (ibv_query_qp(q->qp, &attr, IBV_QP_STATE, &init) != 0) return q->last_state;
  QpState now = static_cast<QpState>(attr.qp_state);
  if (now != q->last_state) RecordState(q, now, cause);
  return now;
}

void VerbsDevice::ObserveAfterErrorCompletion(uint32_t qp_num, WcStatus status) {
  qps_.ForEach([&](QpHandle, QpEntry& q) {
    // A QP already recorded in ERR cannot move on its own; flushes need no query.
    if (q.qp->qp_num == qp_num && q.last_state != QpState::kErr) {
      ObserveState(&q, "device: " + std::string(ToName(status)) + " completion");
    }
  });
}

int VerbsDevice::ModifyQp(QpHandle h, const QpAttr& attr, AttrMask mask) {
  QpEntry* q = qps_.Find(h);
  if (q == nullptr) return EINVAL;
  ObserveState(q, "device");
  ibv_qp_attr ia = ToIbvQpAttr(attr);
  int ret = ibv_modify_qp(q->qp, &ia, static_cast<int>(mask));
  if (ret != 0) return ret;
  if (mask & attr::kPort) q->port_num = attr.port_num;
  if (mask & attr::kState) RecordState(q, attr.qp_state, "modify");
  return 0;
}

int VerbsDevice::QueryQp(QpHandle h, QpAttr* attr, QpInitAttr* init) {
  QpEntry* q = qps_.Find(h);
  if (q == nullptr || attr == nullptr) return EINVAL;
  ibv_qp_attr ia{};
  ibv_qp_init_attr ii{};
  int ret = ibv_query_qp(q->qp, &ia, kQueryAllMask, &ii);
  if (ret != 0) return ret;
  *attr = FromIbvQpAttr(ia);
  if (attr->qp_state != q->last_state) RecordState(q, attr->qp_state, "device");
  if (init != nullptr) {
    *init = q->init;
    init->cap = FromIbvQpCap(ii.cap);
    init->sq_sig_all = ii.sq_sig_all != 0;
  }
  return 0;
}

int VerbsDevice::QpHistory(QpHandle h, std::vector<StateChange>* out) {
  QpEntry* q = qps_.Find(h);
  if (q == nullptr || out == nullptr) return EINVAL;
  DrainAsyncEvents();
  ObserveState(q, "device");
  *out = q->history;
  return 0;
}

int VerbsDevice::LocalConnectionInfo(QpHandle h, ConnectionInfo* out) {
  QpEntry* q = qps_.Find(h);
  if (q == nullptr || out == nullptr) return EINVAL;
  PortAttr port;
  int ret = QueryPort(q->port_num, &port);
  if (ret != 0) return ret;
  ConnectionInfo info;
  info.qp_num = q->qp->qp_num;
  info.lid = port.lid;
  info.port_num = q->port_num;
  info.link_layer = port.link_layer;
  int gid_index = 0;
  ret = DefaultGidIndex(q->port_num, &gid_index);
  if (ret == 0) ret = QueryGid(q->port_num, gid_index, &info.gid);
  // On InfiniBand the LID suffices; a missing GID only matters on RoCE.
  if (ret != 0 && port.link_layer == LinkLayer::kEthernet) return ret;
  *out = info;
  return 0;
}

}  // namespace qptwin::hw
