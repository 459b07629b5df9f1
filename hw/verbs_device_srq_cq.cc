// ibv_modify_srq, ibv_query_srq and ibv_resize_cq: the device's answers, unchanged.
#include <cerrno>

#include "hw/verbs_device.h"

namespace qptwin::hw {

int VerbsDevice::ModifySrq(SrqHandle h, const SrqAttr& attr, uint32_t mask) {
  SrqEntry* s = srqs_.Find(h);
  if (s == nullptr) return EINVAL;
  ibv_srq_attr a{};
  a.max_wr = attr.max_wr;
  a.srq_limit = attr.srq_limit;
  int m = 0;
  if (mask & srq_attr::kMaxWr) m |= IBV_SRQ_MAX_WR;
  if (mask & srq_attr::kLimit) m |= IBV_SRQ_LIMIT;
  if (mask & ~(srq_attr::kMaxWr | srq_attr::kLimit)) return EINVAL;
  return ibv_modify_srq(s->srq, &a, m);
}

int VerbsDevice::QuerySrq(SrqHandle h, SrqAttr* out) {
  SrqEntry* s = srqs_.Find(h);
  if (s == nullptr || out == nullptr) return EINVAL;
  ibv_srq_attr a{};
  if (int ret = ibv_query_srq(s->srq, &a)) return ret;
  out->max_wr = a.max_wr;
  out->max_sge = a.max_sge;
  out->srq_limit = a.srq_limit;
  return 0;
}

int VerbsDevice::ResizeCq(CqHandle h, int cqe, int* actual_cqe) {
  CqEntry* c = cqs_.Find(h);
  if (c == nullptr) return EINVAL;
  if (int ret = ibv_resize_cq(c->cq, cqe)) return ret;
  if (actual_cqe != nullptr) *actual_cqe = c->cq->cqe;
  return 0;
}

}  // namespace qptwin::hw
