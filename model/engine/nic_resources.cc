// PDs, MRs, completion channels, CQs, SRQs and AHs.
#include <algorithm>
#include <cerrno>

#include "model/engine/nic.h"
#include "model/engine/world.h"

namespace qptwin::model::engine {

// Every create below refuses an object beyond the device's limit (DeviceAttr max_pd,
// max_mr, max_cq, max_srq, max_ah; max_qp in nic_qp.cc), counted over all contexts of the
// NIC as rxe counts its pools per device. The errno is the device's (Behaviour::
// over_limit_errno; rxe 6.1 __rxe_add_to_pool: EINVAL). Note: rxe 6.1 itself sizes its
// pools by their index ranges (PD and CQ: unlimited) rather than by the values it
// advertises; the model holds a program to the advertised ones, as a portable one must.
int Nic::AllocPd(uint32_t ctx, uint32_t* out) {
  if (static_cast<int>(pds_.size()) >= profile().device.max_pd) {
    return profile().behaviour.over_limit_errno;
  }
  uint32_t h = world_->NewHandle();
  pds_[h] = Pd{ctx, 0};
  *out = h;
  return 0;
}

int Nic::DeallocPd(uint32_t ctx, uint32_t pd) {
  auto it = pds_.find(pd);
  if (it == pds_.end() || it->second.ctx != ctx) return EINVAL;
  if (it->second.users > 0 || mrs_.CountForPd(pd) > 0 || mws_.CountForPd(pd) > 0) return EBUSY;
  pds_.erase(it);
  return 0;
}

int Nic::RegMr(uint32_t ctx, uint32_t pd, size_t length, AccessFlags access, Mr** out) {
  return RegisterMr(ctx, pd, nullptr, length, access, out);
}

int Nic::RegMrAt(uint32_t ctx, uint32_t pd, uint64_t addr, size_t length, AccessFlags access,
                 Mr** out) {
  if (length == 0 || addr > ~uint64_t{0} - length) return EINVAL;  // wraps the bus
  return RegisterMr(ctx, pd, &addr, length, access, out);
}

int Nic::RegisterMr(uint32_t ctx, uint32_t pd, const uint64_t* at, size_t length,
                    AccessFlags access, Mr** out) {
  auto it = pds_.find(pd);
  if (it == pds_.end() || it->second.ctx != ctx) return EINVAL;
  if (access & ~access::kKnownMask) return EINVAL;
  // ibv_reg_mr(3): REMOTE_WRITE or REMOTE_ATOMIC requires LOCAL_WRITE.
  if ((access & (access::kRemoteWrite | access::kRemoteAtomic)) &&
      !(access & access::kLocalWrite)) {
    return EINVAL;
  }
  // rxe 6.1 rxe_reg_user_mr: rxe_alloc(&rxe->mr_pool) NULL beyond the pool -> ENOMEM,
  // before the region itself is looked at.
  if (static_cast<int>(mrs_.size()) >= profile().device.max_mr) return ENOMEM;
  if (length > profile().device.max_mr_size) return EINVAL;
  // The model maps real memory; a bus region (memory.h 4) is held to the same size, its
  // translations (nic_cache.cc) and pinning cost counted alike.
  if (length > (size_t{1} << 36)) return ENOMEM;
  Mr* mr = at ? mrs_.RegisterAt(world_->NewHandle(), ctx, pd, *at, length, access)
              : mrs_.Register(world_->NewHandle(), ctx, pd, length, access);
  if (mr == nullptr) return ENOMEM;
  if (at) mr->bus_hold = bus_->HoldProgramRange(*at, length);  // host_bus.h contract 8
  *out = mr;
  InstallMrContexts(*mr);  // nic_cache.cc
  const ControlTiming& c = profile().timing.control;
  ChargeHost(c.reg_mr_ns + (length + 4095) / 4096 * c.reg_mr_page_ns);  // pin + map pages
  return 0;
}

bool Nic::QueueMemoryInUse(uint64_t addr, uint64_t length, bool other_device) const {
  // Another device's current window hands out blocks later: any overlap. This device's
  // windows only with blocks in use, and not the very range (SetQueueMemory takes it back).
  const auto overlaps = [&](const QueueArena& a, bool any) {  // inclusive ends: no wrap
    if (!other_device && a.base() == addr && a.length() == length) return false;
    return (any || a.bytes_used() > 0) && addr <= a.base() + (a.length() - 1) &&
           a.base() <= addr + (length - 1);
  };
  if (queue_arena_ && overlaps(*queue_arena_, other_device)) return true;
  for (const auto& w : old_arenas_) {
    if (auto a = w.lock(); a && overlaps(*a, false)) return true;
  }
  return false;
}

int Nic::SetQueueMemory(uint64_t addr, uint64_t length) {
  if (queue_arena_ && length && queue_arena_->base() == addr && queue_arena_->length() == length) {
    return 0;  // the same window: its blocks stay known
  }
  if (length) {
    for (int i = 0; i < world_->nic_count(); ++i) {
      if (world_->nic(i)->QueueMemoryInUse(addr, length, world_->nic(i) != this)) return EBUSY;
    }
  }
  // The window before stays alive while a queue holds a block of it (queue_memory.h 1);
  // going back to one still alive makes it current again, its blocks known.
  old_arenas_.erase(std::remove_if(old_arenas_.begin(), old_arenas_.end(),
                                   [](const auto& w) { return w.expired(); }),
                    old_arenas_.end());
  std::shared_ptr<QueueArena> next;
  for (auto& w : old_arenas_) {
    auto a = w.lock();
    if (a && length && a->base() == addr && a->length() == length) next = std::move(a);
  }
  if (queue_arena_) old_arenas_.push_back(queue_arena_);
  if (!next && length) {
    next = std::make_shared<QueueArena>(addr, length);
    next->bus_hold = bus_->HoldProgramRange(addr, length);
  }
  queue_arena_ = std::move(next);
  return 0;
}

int Nic::DeregMr(uint32_t ctx, uint32_t mr) {
  Mr* m = mrs_.ByHandle(mr);
  if (!m || m->ctx != ctx) return EINVAL;
  // IBTA 11.2.8.4 / rxe_dereg_mr (mr->num_mw): not while a window is bound to it.
  if (mws_.BoundTo(mr) > 0) return profile().behaviour.dereg_mr_bound_mw_errno;
  mrs_.Deregister(mr);
  return 0;
}

int Nic::CreateChannel(uint32_t ctx, uint32_t* out) {
  uint32_t h = world_->NewHandle();
  channels_[h].ctx = ctx;
  *out = h;
  return 0;
}

int Nic::DestroyChannel(uint32_t ctx, uint32_t ch) {
  Channel* c = FindChannel(ctx, ch);
  if (!c) return EINVAL;
  if (c->users > 0) return EBUSY;
  channels_.erase(ch);
  return 0;
}

int Nic::CreateCq(uint32_t ctx, int cqe, uint32_t channel, uint32_t* out, int* actual) {
  if (cqe < 1 || cqe > profile().device.max_cqe) return EINVAL;
  Channel* ch = nullptr;
  if (channel != 0 && !(ch = FindChannel(ctx, channel))) return EINVAL;
  if (static_cast<int>(cqs_.size()) >= profile().device.max_cq) {
    return profile().behaviour.over_limit_errno;
  }
  int depth = static_cast<int>(QueueSlots(profile().behaviour, static_cast<uint32_t>(cqe)));
  if (QueuesUnreachable()) return EINVAL;
  QueueBlock ring;  // queue_memory.h contract 2
  if (!QueueBlock::Take(queue_arena_, QueueBlockBytes(depth, Cq::kCqeBytes), &ring)) {
    return ENOMEM;
  }
  uint32_t h = world_->NewHandle();
  cqs_[h] = std::make_shared<Cq>(h, ctx, depth, channel, profile().behaviour.cq_overrun_is_sticky);
  if (ring) cqs_[h]->PlaceAt(std::move(ring), Cpu(DmaKind::kCqDbRec, 0));
  if (ch) ++ch->users;
  *out = h;
  if (actual) *actual = depth;
  ChargeHost(profile().timing.control.create_cq_ns);
  return 0;
}

int Nic::DestroyCq(uint32_t ctx, uint32_t cq) {
  Cq* c = FindCq(ctx, cq);
  if (!c) return EINVAL;
  // R23: a CQ still used by a QP cannot be destroyed (ib_destroy_cq: usecnt -> EBUSY).
  if (c->users > 0) return EBUSY;
  if (Channel* ch = FindChannel(ctx, c->channel())) {
    --ch->users;
    for (auto it = ch->events.begin(); it != ch->events.end();) {
      it = (*it == cq) ? ch->events.erase(it) : std::next(it);
    }
  }
  cqs_.erase(cq);
  return 0;
}

int Nic::PollCq(uint32_t ctx, uint32_t cq, int n, WorkCompletion* wc) {
  Cq* c = FindCq(ctx, cq);
  if (!c || n < 0 || (n > 0 && wc == nullptr)) return -EINVAL;
  int got = c->Poll(n, wc, world_->events().Now(), Cpu(DmaKind::kCqe, 0));
  if (got > 0) ChargeHost(got * profile().timing.host.poll_cqe_ns);
  return got;
}

int Nic::ReqNotifyCq(uint32_t ctx, uint32_t cq, bool solicited_only) {
  Cq* c = FindCq(ctx, cq);
  if (!c) return EINVAL;
  c->Arm(solicited_only);
  return 0;
}

int Nic::SetCqEvent(uint32_t ctx, uint32_t cq, uint64_t addr, uint32_t data) {
  Cq* c = FindCq(ctx, cq);
  if (!c || !c->placed()) return EINVAL;
  c->SetDriverEvent(Cq::DriverEvent{addr, data});
  return 0;
}

void Nic::OnCqArm(uint32_t cqn, uint32_t ci, bool solicited_only) {
  auto it = cqs_.find(cqn);
  bool due = false;
  if (it == cqs_.end() || !it->second->DriverArm(ci, solicited_only, &due)) {
    ++ignored_rings_;
    return;
  }
  if (due) WriteCqEvent(*it->second, 0);
}

void Nic::WriteCqEvent(const Cq& cq, uint32_t qpn) {
  // cq.h contract 8: 4 bytes, the event's value, little-endian; after the CQE's write on the
  // same bus (posted writes stay in order). A write that fails is lost, as an MSI-X write
  // the fabric drops.
  const Cq::DriverEvent* ev = cq.driver_event();
  if (ev == nullptr) return;
  uint8_t word[4];
  for (int i = 0; i < 4; ++i) word[i] = static_cast<uint8_t>(ev->data >> (8 * i));
  (void)Dma(DmaKind::kCqEvent, qpn).Write(ev->addr, word, sizeof word);
}

int Nic::AckCqEvents(uint32_t ctx, uint32_t cq, unsigned n) {
  Cq* c = FindCq(ctx, cq);
  if (!c) return EINVAL;
  c->events_unacked = n > c->events_unacked ? 0 : c->events_unacked - n;
  return 0;
}

int Nic::CreateSrq(uint32_t ctx, uint32_t pd, uint32_t max_wr, uint32_t max_sge,
                   uint32_t* out) {
  auto it = pds_.find(pd);
  if (it == pds_.end() || it->second.ctx != ctx) return EINVAL;
  const DeviceAttr& d = profile().device;
  if (max_wr < 1 || max_wr > static_cast<uint32_t>(d.max_srq_wr) || max_sge < 1 ||
      max_sge > static_cast<uint32_t>(d.max_srq_sge)) {
    return EINVAL;
  }
  if (static_cast<int>(srqs_.size()) >= d.max_srq) return profile().behaviour.over_limit_errno;
  const uint32_t slots = QueueSlots(profile().behaviour, max_wr);
  if (QueuesUnreachable()) return EINVAL;
  QueueBlock ring;  // queue_memory.h contract 2
  if (!QueueBlock::Take(queue_arena_, RecvQueue::PlacedBytes(slots, max_sge), &ring)) {
    return ENOMEM;
  }
  auto srq = std::make_shared<Srq>();
  if (ring) srq->rq.PlaceAt(std::move(ring), slots, RecvQueue::PlacedStride(max_sge), Cpu(DmaKind::kRecvDbRec, 0));
  srq->handle = world_->NewHandle();
  srq->ctx = ctx;
  srq->pd = pd;
  srq->max_wr = slots;
  srq->max_sge = max_sge;
  srq->srqn = next_srqn_++ & 0xffffff;
  ++it->second.users;
  *out = srq->handle;
  srqs_[srq->handle] = std::move(srq);
  return 0;
}

int Nic::CreateSrqEx(uint32_t ctx, const SrqInitAttr& init, uint32_t* out) {
  if (init.srq_type == SrqType::kBasic) {
    return CreateSrq(ctx, init.pd.id, init.max_wr, init.max_sge, out);
  }
  if (init.srq_type != SrqType::kXrc) return EINVAL;
  // ibv_create_srq_ex(3): an XRC SRQ needs IBV_SRQ_INIT_ATTR_{PD,XRCD,CQ}. Without XRC no
  // XRCD exists, so the XRCD handle is refused first (EINVAL, as hw/ does).
  auto x = xrcds_.find(init.xrcd.id);
  if (x == xrcds_.end() || x->second.ctx != ctx) return EINVAL;
  if (!profile().behaviour.supports_xrc) return EOPNOTSUPP;
  Cq* cq = FindCq(ctx, init.cq.id);
  if (!cq) return EINVAL;
  uint32_t h = 0;
  if (int err = CreateSrq(ctx, init.pd.id, init.max_wr, init.max_sge, &h)) return err;
  Srq& srq = *srqs_[h];
  srq.type = SrqType::kXrc;
  srq.xrcd = init.xrcd.id;
  srq.cq = cqs_[cq->handle()];
  ++cq->users;
  ++x->second.users;
  *out = h;
  return 0;
}

int Nic::SrqNum(uint32_t ctx, uint32_t srq, uint32_t* srqn) {
  Srq* s = FindSrq(ctx, srq);
  if (!s) return EINVAL;
  // libibverbs ibv_get_srq_num: EOPNOTSUPP when the provider has no get_srq_num (rxe).
  if (!profile().behaviour.supports_xrc) return EOPNOTSUPP;
  *srqn = s->srqn;
  return 0;
}

int Nic::OpenXrcd(uint32_t ctx, uint32_t* out) {
  // libibverbs ibv_open_xrcd: EOPNOTSUPP when the provider has no open_xrcd (rxe).
  if (!profile().behaviour.supports_xrc) return EOPNOTSUPP;
  uint32_t h = world_->NewHandle();
  xrcds_[h] = Xrcd{ctx, 0};
  *out = h;
  return 0;
}

int Nic::CloseXrcd(uint32_t ctx, uint32_t xrcd) {
  auto it = xrcds_.find(xrcd);
  if (it == xrcds_.end() || it->second.ctx != ctx) return EINVAL;
  if (it->second.users > 0) return EBUSY;  // ib_dealloc_xrcd_user: usecnt -> EBUSY
  xrcds_.erase(it);
  return 0;
}

int Nic::DestroySrq(uint32_t ctx, uint32_t srq) {
  Srq* s = FindSrq(ctx, srq);
  if (!s) return EINVAL;
  if (s->users > 0) return EBUSY;
  --pds_[s->pd].users;
  if (s->type == SrqType::kXrc) {
    --s->cq->users;
    --xrcds_[s->xrcd].users;
  }
  srqs_.erase(srq);
  return 0;
}

int Nic::PostSrqRecv(uint32_t ctx, uint32_t srq, const std::vector<RecvWr>& wrs,
                     size_t* bad) {
  Srq* s = FindSrq(ctx, srq);
  if (!s) {
    if (bad) *bad = 0;
    return EINVAL;
  }
  for (size_t i = 0; i < wrs.size(); ++i) {
    int err = 0;
    const bool full = s->rq.size() >= s->max_wr;
    if (full && profile().behaviour.recv_full_checked_first) {
      err = ENOMEM;
    } else if (wrs[i].sg_list.size() > s->max_sge) {
      err = EINVAL;
    } else if (full) {
      err = ENOMEM;
    }
    if (err) {
      if (bad) *bad = i;
      return err;
    }
    if (!s->rq.push_back(wrs[i], Cpu(DmaKind::kRecvWqe, 0))) {  // recv_queue.h contract 6
      if (bad) *bad = i;
      return ENOMEM;
    }
  }
  return 0;
}

int Nic::CreateAh(uint32_t ctx, uint32_t pd, const AhAttr& attr, uint32_t* out) {
  auto it = pds_.find(pd);
  if (it == pds_.end() || it->second.ctx != ctx) return EINVAL;
  const PortAttr port = port_attr();
  if (attr.port_num != 1) return EINVAL;
  if (port.link_layer == LinkLayer::kEthernet && !attr.is_global) return EINVAL;
  if (attr.is_global && attr.grh.sgid_index >= port.gid_tbl_len) return EINVAL;
  if (static_cast<int>(ahs_.size()) >= profile().device.max_ah) {
    return profile().behaviour.over_limit_errno;
  }
  uint32_t h = world_->NewHandle();
  ahs_[h] = Ah{ctx, pd, attr, world_->ResolveAddress(attr)};
  ++it->second.users;
  *out = h;
  return 0;
}

int Nic::DestroyAh(uint32_t ctx, uint32_t ah) {
  Ah* a = FindAh(ctx, ah);
  if (!a) return EINVAL;
  --pds_[a->pd].users;
  ahs_.erase(ah);
  return 0;
}

}  // namespace qptwin::model::engine
