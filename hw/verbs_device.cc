// VerbsDevice: construction, release, queries and the non-QP objects (control path).
#include "hw/verbs_device.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "hw/addressing.h"
#include "hw/convert.h"

namespace qptwin::hw {

int LastErrno() { return errno != 0 ? errno : EINVAL; }

VerbsDevice::VerbsDevice(ibv_context* context, const VerbsOptions& opts,
                         std::shared_ptr<IdSource> ids, MonotonicClock clock)
    : context_(context),
      name_(ibv_get_device_name(context->device)),
      opts_(opts),
      clock_(clock),
      pds_(ids),
      mrs_(ids),
      mws_(ids),
      channels_(ids),
      cqs_(ids),
      srqs_(ids),
      ahs_(ids),
      xrcds_(ids),
      qps_(ids) {
  // Async events are drained, never waited for in ibv_get_async_event (contract 4).
  int flags = fcntl(context_->async_fd, F_GETFL);
  if (flags >= 0) fcntl(context_->async_fd, F_SETFL, flags | O_NONBLOCK);
}

VerbsDevice::~VerbsDevice() {
  ReleaseAll();
  ibv_close_device(context_);
}

void VerbsDevice::ReleaseAll() {
  DrainAsyncEvents();
  // Destroy failures cannot be reported from a destructor; each object is still forgotten.
  for (MwHandle h : mws_.NewestFirst()) (void)ibv_dealloc_mw(mws_.Find(h)->mw);
  for (QpHandle h : qps_.NewestFirst()) (void)ibv_destroy_qp(qps_.Find(h)->qp);
  for (SrqHandle h : srqs_.NewestFirst()) (void)ibv_destroy_srq(srqs_.Find(h)->srq);
  for (XrcdHandle h : xrcds_.NewestFirst()) (void)ibv_close_xrcd(xrcds_.Find(h)->xrcd);
  for (AhHandle h : ahs_.NewestFirst()) (void)ibv_destroy_ah(ahs_.Find(h)->ah);
  for (CqHandle h : cqs_.NewestFirst()) {
    CqEntry* c = cqs_.Find(h);
    if (c->unacked_events > 0) ibv_ack_cq_events(c->cq, c->unacked_events);
    (void)ibv_destroy_cq(c->cq);
  }
  for (ChannelHandle h : channels_.NewestFirst()) {
    (void)ibv_destroy_comp_channel(channels_.Find(h)->channel);
  }
  for (MrHandle h : mrs_.NewestFirst()) {
    MrEntry* m = mrs_.Find(h);
    // Memory still registered must not be freed: a failed dereg leaks it on purpose.
    if (ibv_dereg_mr(m->mr) == 0) std::free(m->buf);
  }
  for (PdHandle h : pds_.NewestFirst()) (void)ibv_dealloc_pd(pds_.Find(h)->pd);
}

std::string VerbsDevice::Name() const { return name_; }

int VerbsDevice::QueryDevice(DeviceAttr* out) {
  if (out == nullptr) return EINVAL;
  ibv_device_attr attr{};
  int ret = ibv_query_device(context_, &attr);
  if (ret != 0) return ret;
  *out = FromIbvDeviceAttr(attr, name_);
  out->max_inline_data = ProbeMaxInlineData();
  return 0;
}

// ibv_device_attr has no inline limit: find the largest max_inline_data an RC QP accepts
// (binary search, once per Device; 0 when even that probe cannot run).
int VerbsDevice::ProbeMaxInlineData() {
  if (max_inline_data_ >= 0) return max_inline_data_;
  max_inline_data_ = 0;
  ibv_pd* pd = ibv_alloc_pd(context_);
  ibv_cq* cq = pd != nullptr ? ibv_create_cq(context_, 1, nullptr, nullptr, 0) : nullptr;
  if (cq != nullptr) {
    uint32_t lo = 0, hi = 1u << 16;  // lo is accepted (0 always is), hi is not assumed
    while (lo < hi) {
      uint32_t mid = lo + (hi - lo + 1) / 2;
      ibv_qp_init_attr init{};
      init.send_cq = cq;
      init.recv_cq = cq;
      init.qp_type = IBV_QPT_RC;
      init.cap.max_send_wr = 1;
      init.cap.max_recv_wr = 1;
      init.cap.max_send_sge = 1;
      init.cap.max_recv_sge = 1;
      init.cap.max_inline_data = mid;
      ibv_qp* qp = ibv_create_qp(pd, &init);
      if (qp != nullptr) {
        (void)ibv_destroy_qp(qp);
        lo = mid;
      } else {
        hi = mid - 1;
      }
    }
    max_inline_data_ = static_cast<int>(lo);
  }
  if (cq != nullptr) (void)ibv_destroy_cq(cq);
  if (pd != nullptr) (void)ibv_dealloc_pd(pd);
  return max_inline_data_;
}

int VerbsDevice::QueryPort(uint8_t port_num, PortAttr* out) {
  if (out == nullptr) return EINVAL;
  ibv_port_attr attr{};
  int ret = ibv_query_port(context_, port_num, &attr);
  if (ret != 0) return ret;
  *out = FromIbvPortAttr(attr);
  return 0;
}

int VerbsDevice::QueryGid(uint8_t port_num, int index, Gid* out) {
  if (out == nullptr) return EINVAL;
  ibv_gid gid{};
  errno = 0;
  if (ibv_query_gid(context_, port_num, index, &gid) != 0) return LastErrno();
  *out = FromIbvGid(gid);
  return 0;
}

int VerbsDevice::DefaultGidIndex(uint8_t port_num, int* index) {
  if (index == nullptr) return EINVAL;
  if (opts_.gid_index >= 0) {
    *index = opts_.gid_index;
    return 0;
  }
  auto cached = gid_index_cache_.find(port_num);
  if (cached != gid_index_cache_.end()) {
    *index = cached->second;
    return 0;
  }
  PortAttr port;
  int ret = QueryPort(port_num, &port);
  if (ret != 0) return ret;
  std::vector<GidEntry> entries;
  ret = ReadGidTable(context_, port_num, port.gid_tbl_len, &entries);
  if (ret != 0) return ret;
  int chosen = ChooseGidIndex(entries, port.link_layer);
  if (chosen < 0) return ENODATA;  // no valid GID on this port (no address on the netdev)
  gid_index_cache_[port_num] = chosen;
  *index = chosen;
  return 0;
}

int VerbsDevice::AllocPd(PdHandle* out) {
  if (out == nullptr) return EINVAL;
  errno = 0;
  ibv_pd* pd = ibv_alloc_pd(context_);
  if (pd == nullptr) return LastErrno();
  *out = pds_.Add(PdEntry{pd});
  return 0;
}

int VerbsDevice::DeallocPd(PdHandle h) {
  PdEntry* p = pds_.Find(h);
  if (p == nullptr) return EINVAL;
  int ret = ibv_dealloc_pd(p->pd);
  if (ret == 0) pds_.Remove(h);
  return ret;
}

int VerbsDevice::RegMr(PdHandle pd, size_t length, AccessFlags access, MrHandle* out, uint8_t** buf,
                       uint32_t* lkey, uint32_t* rkey) {
  PdEntry* p = pds_.Find(pd);
  if (p == nullptr || out == nullptr || buf == nullptr) return EINVAL;
  long page = sysconf(_SC_PAGESIZE);
  size_t alloc = length == 0 ? static_cast<size_t>(page) : length;
  void* mem = nullptr;
  int ret = posix_memalign(&mem, static_cast<size_t>(page), alloc);
  if (ret != 0) return ret;
  std::memset(mem, 0, alloc);
  errno = 0;
  ibv_mr* mr = ibv_reg_mr(p->pd, mem, length, static_cast<int>(access));
  if (mr == nullptr) {
    int err = LastErrno();
    std::free(mem);
    return err;
  }
  *out = mrs_.Add(MrEntry{mr, mem});
  *buf = static_cast<uint8_t*>(mem);
  if (lkey != nullptr) *lkey = mr->lkey;
  if (rkey != nullptr) *rkey = mr->rkey;
  return 0;
}

int VerbsDevice::DeregMr(MrHandle h) {
  MrEntry* m = mrs_.Find(h);
  if (m == nullptr) return EINVAL;
  int ret = ibv_dereg_mr(m->mr);
  if (ret != 0) return ret;
  std::free(m->buf);
  mrs_.Remove(h);
  return 0;
}

int VerbsDevice::CreateCompChannel(ChannelHandle* out) {
  if (out == nullptr) return EINVAL;
  errno = 0;
  ibv_comp_channel* ch = ibv_create_comp_channel(context_);
  if (ch == nullptr) return LastErrno();
  int flags = fcntl(ch->fd, F_GETFL);
  if (flags < 0 || fcntl(ch->fd, F_SETFL, flags | O_NONBLOCK) < 0) {
    int err = LastErrno();
    (void)ibv_destroy_comp_channel(ch);
    return err;
  }
  *out = channels_.Add(ChannelEntry{ch});
  return 0;
}

int VerbsDevice::DestroyCompChannel(ChannelHandle h) {
  ChannelEntry* c = channels_.Find(h);
  if (c == nullptr) return EINVAL;
  int ret = ibv_destroy_comp_channel(c->channel);  // EBUSY while CQs use it
  if (ret == 0) channels_.Remove(h);
  return ret;
}

int VerbsDevice::CreateCq(int cqe, ChannelHandle channel, CqHandle* out, int* actual_cqe) {
  if (out == nullptr) return EINVAL;
  ibv_comp_channel* ch = nullptr;
  if (channel) {
    ChannelEntry* c = channels_.Find(channel);
    if (c == nullptr) return EINVAL;
    ch = c->channel;
  }
  errno = 0;
  ibv_cq* cq = ibv_create_cq(context_, cqe, nullptr, ch, 0);
  if (cq == nullptr) return LastErrno();
  *out = cqs_.Add(CqEntry{cq, 0});
  if (actual_cqe != nullptr) *actual_cqe = cq->cqe;
  return 0;
}

int VerbsDevice::DestroyCq(CqHandle h) {
  CqEntry* c = cqs_.Find(h);
  if (c == nullptr) return EINVAL;
  DrainAsyncEvents();
  // ibv_destroy_cq waits until every event it reported was acknowledged (contract 3).
  if (c->unacked_events > 0) {
    ibv_ack_cq_events(c->cq, c->unacked_events);
    c->unacked_events = 0;
  }
  int ret = ibv_destroy_cq(c->cq);  // EBUSY while a QP or SRQ uses it
  if (ret == 0) cqs_.Remove(h);
  return ret;
}

int VerbsDevice::CreateSrq(PdHandle pd, uint32_t max_wr, uint32_t max_sge, SrqHandle* out) {
  PdEntry* p = pds_.Find(pd);
  if (p == nullptr || out == nullptr) return EINVAL;
  ibv_srq_init_attr init{};
  init.attr.max_wr = max_wr;
  init.attr.max_sge = max_sge;
  errno = 0;
  ibv_srq* srq = ibv_create_srq(p->pd, &init);
  if (srq == nullptr) return LastErrno();
  *out = srqs_.Add(SrqEntry{srq});
  return 0;
}

int VerbsDevice::DestroySrq(SrqHandle h) {
  SrqEntry* s = srqs_.Find(h);
  if (s == nullptr) return EINVAL;
  DrainAsyncEvents();
  int ret = ibv_destroy_srq(s->srq);
  if (ret == 0) srqs_.Remove(h);
  return ret;
}

int VerbsDevice::CreateSrqEx(const SrqInitAttr& init, SrqHandle* out) {
  if (init.srq_type == SrqType::kBasic) return CreateSrq(init.pd, init.max_wr, init.max_sge, out);
  PdEntry* p = pds_.Find(init.pd);
  XrcdEntry* x = xrcds_.Find(init.xrcd);
  CqEntry* c = cqs_.Find(init.cq);
  if (p == nullptr || x == nullptr || c == nullptr || out == nullptr) return EINVAL;
  if (init.srq_type != SrqType::kXrc) return EINVAL;
  ibv_srq_init_attr_ex ia{};
  ia.attr.max_wr = init.max_wr;
  ia.attr.max_sge = init.max_sge;
  // ibv_create_srq_ex(3): an XRC SRQ names its type, PD, XRCD and CQ.
  ia.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD | IBV_SRQ_INIT_ATTR_XRCD |
                 IBV_SRQ_INIT_ATTR_CQ;
  ia.srq_type = IBV_SRQT_XRC;
  ia.pd = p->pd;
  ia.xrcd = x->xrcd;
  ia.cq = c->cq;
  errno = 0;
  ibv_srq* srq = ibv_create_srq_ex(context_, &ia);
  if (srq == nullptr) return LastErrno();
  *out = srqs_.Add(SrqEntry{srq});
  return 0;
}

int VerbsDevice::SrqNum(SrqHandle h, uint32_t* srq_num) {
  SrqEntry* s = srqs_.Find(h);
  if (s == nullptr || srq_num == nullptr) return EINVAL;
  return ibv_get_srq_num(s->srq, srq_num);  // EOPNOTSUPP without the provider op
}

int VerbsDevice::OpenXrcd(XrcdHandle* out) {
  if (out == nullptr) return EINVAL;
  // ibv_open_xrcd(3): fd -1 associates no inode; O_CREAT asks for a new XRCD.
  ibv_xrcd_init_attr ia{};
  ia.comp_mask = IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS;
  ia.fd = -1;
  ia.oflags = O_CREAT;
  errno = 0;
  ibv_xrcd* xrcd = ibv_open_xrcd(context_, &ia);
  if (xrcd == nullptr) return LastErrno();  // rxe: EOPNOTSUPP (no open_xrcd op)
  *out = xrcds_.Add(XrcdEntry{xrcd});
  return 0;
}

int VerbsDevice::CloseXrcd(XrcdHandle h) {
  XrcdEntry* x = xrcds_.Find(h);
  if (x == nullptr) return EINVAL;
  int ret = ibv_close_xrcd(x->xrcd);  // EBUSY while an XRC SRQ or XRC_RECV QP uses it
  if (ret == 0) xrcds_.Remove(h);
  return ret;
}

int VerbsDevice::CreateAh(PdHandle pd, const AhAttr& attr, AhHandle* out) {
  PdEntry* p = pds_.Find(pd);
  if (p == nullptr || out == nullptr) return EINVAL;
  ibv_ah_attr ah_attr = ToIbvAhAttr(attr);
  errno = 0;
  ibv_ah* ah = ibv_create_ah(p->pd, &ah_attr);
  if (ah == nullptr) return LastErrno();
  *out = ahs_.Add(AhEntry{ah});
  return 0;
}

int VerbsDevice::DestroyAh(AhHandle h) {
  AhEntry* a = ahs_.Find(h);
  if (a == nullptr) return EINVAL;
  int ret = ibv_destroy_ah(a->ah);
  if (ret == 0) ahs_.Remove(h);
  return ret;
}

}  // namespace qptwin::hw
