#include "model/driver_commands.h"

#include <cerrno>

#include "model/model_backend.h"
#include "model/model_device.h"

namespace qptwin::model {
namespace {

using engine::command::Op;

// Whether event e is one of the object's (DriverCommands::Destroy).
bool IsOf(const AsyncEvent& e, QpHandle h) { return e.qp == h; }
bool IsOf(const AsyncEvent& e, CqHandle h) { return e.cq == h; }
bool IsOf(const AsyncEvent& e, SrqHandle h) { return e.srq == h; }
bool IsOf(const AsyncEvent&, PdHandle) { return false; }
bool IsOf(const AsyncEvent&, MrHandle) { return false; }
bool IsOf(const AsyncEvent&, AhHandle) { return false; }
bool IsOf(const AsyncEvent&, MwHandle) { return false; }
bool IsOf(const AsyncEvent&, XrcdHandle) { return false; }

uint64_t Bits(uint64_t word, int first, int width) {
  return width == 64 ? word >> first : (word >> first) & ((uint64_t{1} << width) - 1);
}

uint64_t GidWord(const Gid& g, int half) {
  uint64_t w = 0;
  for (int i = 0; i < 8; ++i) w |= uint64_t{g.raw[8 * half + i]} << (8 * i);
  return w;
}

}  // namespace

DriverCommands::DriverCommands(std::shared_ptr<engine::World> world, int nic_index)
    : world_(std::move(world)), nic_index_(nic_index) {}

// The context goes with its objects (ModelDevice's close), its event queue first: the queue
// names objects by this object's maps.
DriverCommands::~DriverCommands() {
  if (dev_ && eqn_ != 0) (void)dev_->engine_nic()->DestroyEq(dev_->context(), eqn_);
  dev_.reset();
}

template <typename H>
int DriverCommands::Destroy(std::map<uint64_t, H>& m, uint64_t n, int (ModelDevice::*destroy)(H)) {
  H h;
  if (!Find(m, n, &h)) return EINVAL;
  if (int rc = (dev_.get()->*destroy)(h); rc != 0) return rc;
  m.erase(n);
  // kGetEvent: the object's events not taken go with it (uverbs' release of its events).
  dev_->engine_nic()->DropEvents(dev_->context(), [h](const AsyncEvent& e) { return IsOf(e, h); });
  return 0;
}

template <typename H>
bool DriverCommands::Find(const std::map<uint64_t, H>& m, uint64_t n, H* h) {
  auto it = m.find(n);
  if (it == m.end()) return false;
  *h = it->second;
  return true;
}

int DriverCommands::Command(uint32_t op, const uint64_t in[engine::command::kWords],
                            uint64_t out[engine::command::kWords]) {
  for (int i = 0; i < engine::command::kWords; ++i) out[i] = 0;
  if (op > static_cast<uint32_t>(Op::kCreateXrcSrq)) return EOPNOTSUPP;
  if (!dev_) dev_ = std::make_unique<ModelDevice>(world_, nic_index_);
  const int rc = Run(static_cast<Op>(op), in, out);
  if (rc != 0) {
    for (int i = 0; i < engine::command::kWords; ++i) out[i] = 0;
  }
  return rc;
}

int DriverCommands::Run(Op op, const uint64_t* in, uint64_t* out) {
  switch (op) {
    case Op::kNop:
      return 0;
    case Op::kQueueMemory:
      return dev_->SetQueueMemory(in[0], in[1]);
    case Op::kQueryPort: {
      if (in[0] > 0xff) return EINVAL;
      const auto port = static_cast<uint8_t>(in[0]);
      PortAttr pa;
      int index = 0;
      Gid gid;
      if (int rc = dev_->QueryPort(port, &pa); rc != 0) return rc;
      if (int rc = dev_->DefaultGidIndex(port, &index); rc != 0) return rc;
      if (int rc = dev_->QueryGid(port, index, &gid); rc != 0) return rc;
      out[0] = GidWord(gid, 0);
      out[1] = GidWord(gid, 1);
      out[2] = static_cast<uint64_t>(index);
      out[3] = static_cast<uint64_t>(pa.state) | static_cast<uint64_t>(pa.active_mtu) << 8 |
               uint64_t{pa.lid} << 16;
      return 0;
    }
    case Op::kAllocPd: {
      PdHandle pd;
      if (int rc = dev_->AllocPd(&pd); rc != 0) return rc;
      out[0] = next_pd_;
      pds_[next_pd_++] = pd;
      return 0;
    }
    case Op::kDeallocPd:
      return Destroy(pds_, in[0], &ModelDevice::DeallocPd);
    case Op::kRegMr: {
      PdHandle pd;
      if (!Find(pds_, in[0], &pd) || in[3] > 0xffffffffu) return EINVAL;
      MrHandle mr;
      uint32_t lkey = 0, rkey = 0;
      if (int rc = dev_->RegMrAt(pd, in[1], static_cast<size_t>(in[2]),
                                 static_cast<AccessFlags>(in[3]), &mr, &lkey, &rkey);
          rc != 0) {
        return rc;
      }
      mrs_[lkey] = mr;
      out[0] = lkey;
      out[1] = rkey;
      out[2] = mr.id;  // the number a BIND_MW WQE names (send_wqe_image.h header byte 84)
      return 0;
    }
    case Op::kDeregMr:
      return Destroy(mrs_, in[0], &ModelDevice::DeregMr);
    case Op::kCreateCq:
      return CreateCq(in, out);
    case Op::kDestroyCq:
      return Destroy(cqs_, in[0], &ModelDevice::DestroyCq);
    case Op::kCreateQp:
      return CreateQp(in, out);
    case Op::kModifyQp:
      return ModifyQp(in);
    case Op::kQueryQp: {
      QpHandle qp;
      if (!Find(qps_, in[0], &qp)) return EINVAL;
      QpAttr attr;
      QpInitAttr init;
      if (int rc = dev_->QueryQp(qp, &attr, &init); rc != 0) return rc;
      out[0] = static_cast<uint64_t>(attr.qp_state);
      out[1] = attr.sq_psn;
      out[2] = attr.rq_psn;
      out[3] = attr.dest_qp_num;
      return 0;
    }
    case Op::kDestroyQp:
      return Destroy(qps_, in[0], &ModelDevice::DestroyQp);
    case Op::kCreateSrq:
    case Op::kCreateXrcSrq: {
      SrqInitAttr init;
      if (!Find(pds_, in[0], &init.pd) || in[1] > 0xffffffffu || in[2] > 0xffffffffu ||
          !dev_->HasQueueMemory()) {
        return EINVAL;  // contract 3
      }
      init.max_wr = static_cast<uint32_t>(in[1]);
      init.max_sge = static_cast<uint32_t>(in[2]);
      const bool xrc = op == Op::kCreateXrcSrq;
      if (xrc) {
        init.srq_type = SrqType::kXrc;
        if (!Find(xrcds_, in[3], &init.xrcd) || !Find(cqs_, in[4], &init.cq)) return EINVAL;
      }
      SrqHandle srq;
      if (int rc = dev_->CreateSrqEx(init, &srq); rc != 0) return rc;
      uint32_t srq_num = 0;
      int rc = SrqAnswer(srq, out);  // contract 3: its ring in queue memory
      if (rc == 0 && xrc) rc = dev_->SrqNum(srq, &srq_num);
      if (rc != 0) {
        (void)dev_->DestroySrq(srq);
        return rc;
      }
      out[5] = srq_num;
      out[0] = next_srq_;
      srqs_[next_srq_++] = srq;
      return 0;
    }
    case Op::kModifySrq: {
      SrqHandle srq;
      if (!Find(srqs_, in[0], &srq) || in[1] > 0xffffffffu || in[2] > 0xffffffffu ||
          in[3] > 0xffffffffu) {
        return EINVAL;
      }
      SrqAttr attr;
      attr.max_wr = static_cast<uint32_t>(in[2]);
      attr.srq_limit = static_cast<uint32_t>(in[3]);
      if (int rc = dev_->ModifySrq(srq, attr, static_cast<uint32_t>(in[1])); rc != 0) return rc;
      out[0] = in[0];
      return SrqAnswer(srq, out);
    }
    case Op::kDestroySrq:
      return Destroy(srqs_, in[0], &ModelDevice::DestroySrq);
    case Op::kGetEvent:
      return GetEvent(out);
    case Op::kCreateEq:
      return CreateEq(in, out);
    case Op::kCreateAh: {
      PdHandle pd;
      AhAttr av;
      if (!Find(pds_, in[0], &pd)) return EINVAL;
      if (int rc = RoceAddress(in[1], in[2], &av); rc != 0) return rc;
      AhHandle ah;
      if (int rc = dev_->CreateAh(pd, av, &ah); rc != 0) return rc;
      out[0] = ah.id;  // the number a UD WQE names (send_wqe_image.h header byte 64)
      ahs_[ah.id] = ah;
      return 0;
    }
    case Op::kDestroyAh:
      return Destroy(ahs_, in[0], &ModelDevice::DestroyAh);
    case Op::kAllocMw: {
      PdHandle pd;
      if (!Find(pds_, in[0], &pd) || (in[1] != 1 && in[1] != 2)) return EINVAL;
      MwHandle mw;
      uint32_t rkey = 0;
      if (int rc = dev_->AllocMw(pd, in[1] == 1 ? MwType::kType1 : MwType::kType2, &mw, &rkey);
          rc != 0) {
        return rc;
      }
      out[0] = mw.id;
      out[1] = rkey;
      mws_[mw.id] = mw;
      return 0;
    }
    case Op::kDeallocMw:
      return Destroy(mws_, in[0], &ModelDevice::DeallocMw);
    case Op::kOpenXrcd: {
      XrcdHandle xrcd;
      if (int rc = dev_->OpenXrcd(&xrcd); rc != 0) return rc;
      out[0] = next_xrcd_;
      xrcds_[next_xrcd_++] = xrcd;
      return 0;
    }
    case Op::kCloseXrcd:
      return Destroy(xrcds_, in[0], &ModelDevice::CloseXrcd);
    case Op::kDestroyEq: {
      if (in[0] > 0xffffffffu) return EINVAL;
      const int rc = dev_->engine_nic()->DestroyEq(dev_->context(), static_cast<uint32_t>(in[0]));
      if (rc == 0) eqn_ = 0;
      return rc;
    }
    case Op::kResizeCq: {
      CqHandle cq;
      int actual = 0;
      if (!Find(cqs_, in[0], &cq) || in[1] > 0x7fffffff) return EINVAL;
      if (int rc = dev_->ResizeCq(cq, static_cast<int>(in[1]), &actual); rc != 0) return rc;
      return CqAnswer(cq, out);
    }
  }
  return EOPNOTSUPP;
}

int DriverCommands::CreateCq(const uint64_t* in, uint64_t* out) {
  // Contract 3: a driver's queues are rings in queue memory (checked first: a failed
  // command makes nothing).
  if (in[0] > 0x7fffffff || in[2] > 0xffffffffu || !dev_->HasQueueMemory()) return EINVAL;
  CqHandle cq;
  int actual = 0;
  if (int rc = dev_->CreateCq(static_cast<int>(in[0]), ChannelHandle{}, &cq, &actual); rc != 0) {
    return rc;
  }
  int rc = CqAnswer(cq, out);
  if (rc == 0 && (in[3] & 1) != 0) rc = dev_->SetCqEvent(cq, in[1], static_cast<uint32_t>(in[2]));
  if (rc != 0) {
    (void)dev_->DestroyCq(cq);
    return rc;
  }
  cqs_[out[0]] = cq;
  return 0;
}

int DriverCommands::GetEvent(uint64_t* out) {
  AsyncEvent e;
  if (!dev_->engine_nic()->TakeOldestEvent(dev_->context(), &e)) return EAGAIN;
  out[0] = static_cast<uint64_t>(e.type);
  out[1] = NumberOf(e);
  out[2] = e.time_ns;
  return 0;
}

uint64_t DriverCommands::NumberOf(const AsyncEvent& e) const {
  // The driver's number for the object (a number it no longer has: 0).
  auto number_of = [](const auto& m, auto h) -> uint64_t {
    for (const auto& [n, mine] : m) {
      if (mine.id == h.id) return n;
    }
    return 0;
  };
  switch (e.type) {
    case EventType::kCqErr:
      return number_of(cqs_, e.cq);
    case EventType::kSrqErr:
    case EventType::kSrqLimitReached:
      return number_of(srqs_, e.srq);
    case EventType::kDeviceFatal:
    case EventType::kPortActive:
    case EventType::kPortErr:
    case EventType::kLidChange:
    case EventType::kPkeyChange:
    case EventType::kSmChange:
    case EventType::kClientReregister:
    case EventType::kGidChange:
      return e.port_num;
    default:  // a QP's
      return number_of(qps_, e.qp);
  }
}

int DriverCommands::CreateEq(const uint64_t* in, uint64_t* out) {
  if (in[0] > 0xffffffffu || in[2] > 0xffffffffu) return EINVAL;
  engine::Nic::EqSpec spec;
  spec.entries = static_cast<uint32_t>(in[0]);
  spec.has_irq = (in[3] & 1) != 0;
  spec.irq_addr = in[1];
  spec.irq_value = static_cast<uint32_t>(in[2]);
  spec.number = [this](const AsyncEvent& e) { return NumberOf(e); };
  uint32_t eqn = 0, slots = 0;
  uint64_t addr = 0;
  if (int rc = dev_->engine_nic()->CreateEq(dev_->context(), std::move(spec), &eqn, &addr, &slots);
      rc != 0) {
    return rc;
  }
  eqn_ = eqn;
  out[0] = eqn;
  out[1] = addr;
  out[2] = slots;
  return 0;
}

int DriverCommands::CqAnswer(CqHandle cq, uint64_t* out) {
  CqRing ring;
  if (int rc = dev_->CqRingOf(cq, &ring); rc != 0) return rc;
  out[0] = ring.cqn;
  out[1] = ring.addr;
  out[2] = ring.record;
  out[3] = ring.slots;
  return 0;
}

int DriverCommands::SrqAnswer(SrqHandle srq, uint64_t* out) {
  RecvRing ring;
  SrqAttr attr;
  if (int rc = dev_->SrqRingOf(srq, &ring); rc != 0) return rc;
  if (int rc = dev_->QuerySrq(srq, &attr); rc != 0) return rc;
  out[1] = ring.addr;
  out[2] = ring.record;
  out[3] = uint64_t{ring.slots} | uint64_t{ring.stride} << 32;
  out[4] = attr.max_wr;
  return 0;
}

int DriverCommands::CreateQp(const uint64_t* in, uint64_t* out) {
  QpInitAttr init;
  if (in[0] == static_cast<uint64_t>(QpType::kXrcRecv)) return CreateXrcRecvQp(in, out);
  CqHandle scq, rcq;
  const bool xrc_send = in[0] == static_cast<uint64_t>(QpType::kXrcSend);
  if (in[0] > 0xff || !dev_->HasQueueMemory() || !Find(pds_, in[1], &init.pd) ||
      !Find(cqs_, Bits(in[2], 0, 32), &scq)) {
    return EINVAL;
  }
  if (!Find(cqs_, Bits(in[2], 32, 32), &rcq)) {
    if (!xrc_send || Bits(in[2], 32, 32) != 0) return EINVAL;
    rcq = scq;  // ignored for XRC_SEND (backend.h QpInitAttr)
  }
  init.qp_type = static_cast<QpType>(in[0]);
  init.send_cq = scq;
  init.recv_cq = rcq;
  init.cap.max_send_wr = static_cast<uint32_t>(Bits(in[3], 0, 32));
  init.cap.max_recv_wr = static_cast<uint32_t>(Bits(in[3], 32, 32));
  init.cap.max_send_sge = static_cast<uint32_t>(Bits(in[4], 0, 16));
  init.cap.max_recv_sge = static_cast<uint32_t>(Bits(in[4], 16, 16));
  init.cap.max_inline_data = static_cast<uint32_t>(Bits(in[4], 32, 32));
  const bool on_srq = !xrc_send && Bits(in[5], 32, 1) != 0;  // XRC_SEND takes no SRQ
  if (on_srq && !Find(srqs_, Bits(in[5], 0, 32), &init.srq)) return EINVAL;
  QpHandle qp;
  QpCap cap;
  if (int rc = dev_->CreateQp(init, &qp, &cap); rc != 0) return rc;
  // Contract 3: its rings in queue memory. A QP with no receive queue of its own (on an
  // SRQ, max_recv_wr 0, XRC_SEND) answers none.
  SendRing sq;
  RecvRing rq;
  if (int rc = dev_->SendRingOf(qp, &sq); rc != 0) {
    (void)dev_->DestroyQp(qp);
    return rc;
  }
  if (!on_srq && dev_->RecvRingOf(qp, &rq) != 0) rq = RecvRing{};
  qps_[sq.qpn] = qp;
  out[0] = sq.qpn;
  out[1] = sq.addr;
  out[2] = uint64_t{sq.slots} | uint64_t{sq.stride} << 32;
  out[3] = rq.addr;
  out[4] = rq.record;
  out[5] = uint64_t{rq.slots} | uint64_t{rq.stride} << 32;
  out[6] = uint64_t{cap.max_send_wr} | uint64_t{cap.max_recv_wr} << 32;
  out[7] = cap.max_inline_data;
  return 0;
}

int DriverCommands::CreateXrcRecvQp(const uint64_t* in, uint64_t* out) {
  QpInitAttr init;
  init.qp_type = QpType::kXrcRecv;
  if (!Find(xrcds_, in[6], &init.xrcd)) return EINVAL;
  QpHandle qp;
  QpCap cap;
  if (int rc = dev_->CreateQp(init, &qp, &cap); rc != 0) return rc;
  uint32_t qpn = 0;
  if (int rc = dev_->QpNum(qp, &qpn); rc != 0) {
    (void)dev_->DestroyQp(qp);
    return rc;
  }
  qps_[qpn] = qp;
  out[0] = qpn;
  return 0;
}

int DriverCommands::ModifyQp(const uint64_t* in) {
  QpHandle qp;
  if (!Find(qps_, in[0], &qp) || in[1] > 0xffffffffu) return EINVAL;
  const auto mask = static_cast<AttrMask>(in[1]);
  QpAttr a;
  a.qp_state = static_cast<QpState>(Bits(in[2], 0, 8));
  a.cur_qp_state = static_cast<QpState>(Bits(in[2], 8, 8));
  a.path_mtu = static_cast<Mtu>(Bits(in[2], 16, 8));
  a.port_num = static_cast<uint8_t>(Bits(in[2], 24, 8));
  a.pkey_index = static_cast<uint16_t>(Bits(in[2], 32, 16));
  a.timeout = static_cast<uint8_t>(Bits(in[2], 48, 8));
  a.min_rnr_timer = static_cast<uint8_t>(Bits(in[2], 56, 8));
  a.dest_qp_num = static_cast<uint32_t>(Bits(in[3], 0, 32));
  a.qkey = static_cast<uint32_t>(Bits(in[3], 32, 32));
  a.rq_psn = static_cast<uint32_t>(Bits(in[4], 0, 32));
  a.sq_psn = static_cast<uint32_t>(Bits(in[4], 32, 32));
  a.qp_access_flags = static_cast<AccessFlags>(Bits(in[5], 0, 32));
  a.retry_cnt = static_cast<uint8_t>(Bits(in[5], 32, 8));
  a.rnr_retry = static_cast<uint8_t>(Bits(in[5], 40, 8));
  a.max_rd_atomic = static_cast<uint8_t>(Bits(in[5], 48, 8));
  a.max_dest_rd_atomic = static_cast<uint8_t>(Bits(in[5], 56, 8));
  if ((mask & attr::kAv) != 0) {
    if (int rc = RoceAddress(in[6], in[7], &a.ah_attr); rc != 0) return rc;
  }
  return dev_->ModifyQp(qp, a, mask);
}

int DriverCommands::RoceAddress(uint64_t gid_lo, uint64_t gid_hi, AhAttr* out) {
  // Contract 4: RoCE's address vector to the peer's GID.
  ConnectionInfo peer;
  peer.link_layer = LinkLayer::kEthernet;
  for (int i = 0; i < 8; ++i) {
    peer.gid.raw[i] = static_cast<uint8_t>(gid_lo >> (8 * i));
    peer.gid.raw[8 + i] = static_cast<uint8_t>(gid_hi >> (8 * i));
  }
  int index = 0;
  if (int rc = dev_->DefaultGidIndex(1, &index); rc != 0) return rc;
  *out = AddressTo(peer, index);
  return 0;
}

}  // namespace qptwin::model
