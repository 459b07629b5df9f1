#include "model/engine/nic.h"

#include "model/engine/world.h"

#include <algorithm>

namespace qptwin::model::engine {

Nic::Nic(World* world, int index)
    : world_(world),
      index_(index),
      ready_(&world->events(), [this](std::weak_ptr<Qp>& qp) { RunReady(qp); },
             {index, EventQueue::Block::kSendEngine}),
      sent_(&world->events(), [this](SentWqe& s) { RunSent(s); },
            {index, EventQueue::Block::kCompleter}),
      timers_(&world->events(), [this](QpTimer& t) { RunTimer(t); },
              {index, EventQueue::Block::kTransportTimer}),
      rnr_waits_(&world->events(), [this](std::weak_ptr<Qp>& qp) { RunRnrWait(qp); },
                 {index, EventQueue::Block::kRnrTimer}),
      skip_loops_(&world->events(), [this](std::weak_ptr<Qp>& qp) { EndSkipLoop(qp); },
                  {index, EventQueue::Block::kRetryLoop}),
      answer_waits_(
          &world->events(),
          [this](std::weak_ptr<Qp>& qp) {
            if (auto q = qp.lock()) Kick(*q);
          },
          {index, EventQueue::Block::kAnswerWait}),
      cache_(world->profile().timing.cache) {}
Nic::~Nic() { doorbell_->Detach(this); }

void Nic::SetDoorbellPort(DoorbellPort* port) {
  doorbell_->Detach(this);
  doorbell_ = port;
  doorbell_->Attach(this);
}

const Profile& Nic::profile() const { return world_->profile(); }

uint16_t Nic::lid() const {
  // RoCE has no LIDs (rxe: RXE_PORT_LID = 0); on IB each port gets lid = index + 1, or
  // with an address of its own (World contract 5) the address's low 16 bits.
  if (profile().port.link_layer == LinkLayer::kEthernet) return 0;
  if (const uint32_t ip = world_->ipv4(index_); ip != 0) return static_cast<uint16_t>(ip);
  return static_cast<uint16_t>(index_ + 1);
}

DeviceAttr Nic::device_attr() const {
  DeviceAttr a = profile().device;
  a.name = name();
  return a;
}

PortAttr Nic::port_attr() const {
  PortAttr p = profile().port;
  p.lid = lid();
  return p;
}

bool Nic::GidAt(int index, Gid* out) const {
  if (index < 0 || index >= profile().port.gid_tbl_len) return false;
  Gid g;
  if (const uint32_t ip = world_->ipv4(index_); ip != 0 && index < 2) {
    // A port with an address of its own (World contract 5): 0 is ::ffff:<ip>, the RoCE v2
    // GID other processes reach it by; 1 is fe80::<ip>, a link-local GID as rxe has.
    if (index == 0) {
      g.raw[10] = 0xff;
      g.raw[11] = 0xff;
    } else {
      g.raw[0] = 0xfe;
      g.raw[1] = 0x80;
    }
    g.raw[12] = static_cast<uint8_t>(ip >> 24);
    g.raw[13] = static_cast<uint8_t>(ip >> 16);
    g.raw[14] = static_cast<uint8_t>(ip >> 8);
    g.raw[15] = static_cast<uint8_t>(ip);
  } else if (index == 0) {  // fe80::<interface id>
    g.raw[0] = 0xfe;
    g.raw[1] = 0x80;
    g.raw[8] = 0x02;
    g.raw[15] = static_cast<uint8_t>(index_ + 1);
  } else if (index == 1 && profile().port.link_layer == LinkLayer::kEthernet) {
    // RoCE v2: ::ffff:10.0.0.<index + 1>
    g.raw[10] = 0xff;
    g.raw[11] = 0xff;
    g.raw[12] = 10;
    g.raw[15] = static_cast<uint8_t>(index_ + 1);
  }
  *out = g;  // unpopulated entries read as zero
  return true;
}

int Nic::default_gid_index() const {
  if (world_->ipv4(index_) != 0) return 0;
  return profile().port.link_layer == LinkLayer::kEthernet ? 1 : 0;
}

int Nic::roce_gid_index() const { return world_->ipv4(index_) != 0 ? 0 : 1; }

bool Nic::ConnectedPeer(uint32_t qpn, uint32_t* dest_qpn) const {
  auto it = by_qpn_.find(qpn);
  if (it == by_qpn_.end()) return false;
  *dest_qpn = it->second->attr.dest_qp_num;
  return true;
}

void Nic::ReleaseContext(uint32_t ctx) {
  eqs_.erase(ctx);  // first: no event of the context is written while its objects go
  for (auto it = qps_.begin(); it != qps_.end();) {
    if (it->second->ctx == ctx) {
      by_qpn_.erase(it->second->qpn);
      it = qps_.erase(it);
    } else {
      ++it;
    }
  }
  for (auto it = srqs_.begin(); it != srqs_.end();) {
    it = it->second->ctx == ctx ? srqs_.erase(it) : std::next(it);
  }
  for (auto it = cqs_.begin(); it != cqs_.end();) {
    it = it->second->ctx() == ctx ? cqs_.erase(it) : std::next(it);
  }
  for (auto it = ahs_.begin(); it != ahs_.end();) it = it->second.ctx == ctx ? ahs_.erase(it) : std::next(it);
  for (auto it = channels_.begin(); it != channels_.end();) {
    it = it->second.ctx == ctx ? channels_.erase(it) : std::next(it);
  }
  for (auto it = pds_.begin(); it != pds_.end();) it = it->second.ctx == ctx ? pds_.erase(it) : std::next(it);
  for (auto it = xrcds_.begin(); it != xrcds_.end();) {
    it = it->second.ctx == ctx ? xrcds_.erase(it) : std::next(it);
  }
  mws_.DeallocContext(ctx);
  mrs_.DeregisterContext(ctx);
  events_.erase(ctx);
}

Qp* Nic::FindQp(uint32_t ctx, uint32_t qp) {
  auto it = qps_.find(qp);
  return (it == qps_.end() || it->second->ctx != ctx) ? nullptr : it->second.get();
}

Srq* Nic::FindSrq(uint32_t ctx, uint32_t srq) {
  auto it = srqs_.find(srq);
  return (it == srqs_.end() || it->second->ctx != ctx) ? nullptr : it->second.get();
}

Ah* Nic::FindAh(uint32_t ctx, uint32_t ah) {
  auto it = ahs_.find(ah);
  return (it == ahs_.end() || it->second.ctx != ctx) ? nullptr : &it->second;
}

Cq* Nic::FindCq(uint32_t ctx, uint32_t cq) {
  auto it = cqs_.find(cq);
  return (it == cqs_.end() || it->second->ctx() != ctx) ? nullptr : it->second.get();
}

Channel* Nic::FindChannel(uint32_t ctx, uint32_t ch) {
  auto it = channels_.find(ch);
  return (it == channels_.end() || it->second.ctx != ctx) ? nullptr : &it->second;
}

uint32_t Nic::PathMtuBytes(const Qp& qp) const {
  if (qp.type == QpType::kUd) return MtuBytes(profile().port.active_mtu);
  return MtuBytes(qp.attr.path_mtu);
}

void Nic::RaiseEvent(uint32_t ctx, AsyncEvent ev) {
  ev.time_ns = world_->events().Now();
  events_[ctx].push_back(ev);
  if (auto it = eqs_.find(ctx); it != eqs_.end()) DrainEq(ctx, it->second);  // nic_eq.cc
}

void Nic::RaiseQpEvent(const Qp& qp, EventType type) {
  AsyncEvent ev;
  ev.type = type;
  ev.qp = QpHandle{qp.handle};
  if (qp.srq) ev.srq = SrqHandle{qp.srq->handle};
  RaiseEvent(qp.ctx, ev);
}

std::vector<AsyncEvent> Nic::TakeEvents(uint32_t ctx) {
  std::vector<AsyncEvent> out;
  auto it = events_.find(ctx);
  if (it != events_.end()) out.swap(it->second);
  return out;
}

bool Nic::TakeOldestEvent(uint32_t ctx, AsyncEvent* out) {
  auto it = events_.find(ctx);
  if (it == events_.end() || it->second.empty()) return false;
  *out = it->second.front();
  it->second.erase(it->second.begin());
  return true;
}

void Nic::DropEvents(uint32_t ctx, const std::function<bool(const AsyncEvent&)>& of) {
  auto it = events_.find(ctx);
  if (it == events_.end()) return;
  std::vector<AsyncEvent>& evs = it->second;
  evs.erase(std::remove_if(evs.begin(), evs.end(), of), evs.end());
}

bool Nic::HasEvent(uint32_t ctx, EventType type, uint32_t qp) const {
  auto it = events_.find(ctx);
  if (it == events_.end()) return false;
  for (const AsyncEvent& ev : it->second) {
    if (ev.type == type && (qp == 0 || ev.qp.id == qp)) return true;
  }
  return false;
}

uint64_t Nic::ChargeHost(uint64_t ns) {
  uint64_t& free = host_free_ns_[host_thread_];
  free = std::max(free, world_->events().Now()) + ns;
  return free;
}

bool Nic::SelectHostThread(int thread) {
  if (thread < 0 || thread >= kMaxHostThreads) return false;
  const size_t k = static_cast<size_t>(thread);
  if (k >= host_free_ns_.size()) host_free_ns_.resize(k + 1, 0);
  host_thread_ = k;
  return true;
}

void Nic::Receive(Packet&& pkt) {
  // Behaviour::tick_timers_complete_before_flushes: rxe runs a READ request's responder as a
  // tasklet (rxe_resp_queue_pkt), queued behind the flush tasklets of the tick's completers
  // (measured: probe tick-read-retry, 2 of 2: a READ a timer of the tick resends completes
  // after the flush of a QP whose timer ran out before it); a request behind a held one to
  // the same QP waits too (req_pkts keeps PSN order).
  if (world_->has_held_work() && profile().behaviour.tick_timers_complete_before_flushes &&
      IsRequest(pkt.kind) &&
      (pkt.kind == PacketKind::kReadReq || world_->HasHeldPacketFor(this, pkt.dst_qpn))) {
    world_->HoldTickPacket(this, std::move(pkt));
    return;
  }
  const uint64_t sender_serial = pkt.sender_serial;
  const uint32_t sender_qpn = pkt.src_qpn;
  const bool responder_flush = pkt.responder_flush_after;
  // A requester this response fails flushes its send queue first unless the request left
  // from a post (FlushOnError): over loopback, and from another device where
  // Behaviour::retried_request_nak_flushes_sq_first says so.
  const bool error_nak = pkt.kind == PacketKind::kNak && pkt.nak != NakCode::kRnr &&
                         pkt.nak != NakCode::kPsnSeqErr && pkt.nak != NakCode::kNone;
  // An RNR NAK fails the requester when it is one past rnr_retry (RNR_RETRY_EXC_ERR); from
  // this device too (no responder flush then, which decides an error NAK's order here).
  const bool rnr_nak = pkt.kind == PacketKind::kNak && pkt.nak == NakCode::kRnr;
  // A device of this World, without loss (rxe's inline loopback): a datagram from another
  // process (RoCE) carries no sent_by_post, and there no inline loopback is possible.
  const bool in_world = !world_->IsExternal(pkt.src_nic) && world_->lossless();
  const bool retried_request_nak =
      in_world && ((error_nak && pkt.src_nic != index_) || rnr_nak);
  in_retry_response_ =
      (responder_flush ||
       (retried_request_nak && profile().behaviour.retried_request_nak_flushes_sq_first)) &&
      !pkt.sent_by_post;
  // Behaviour::loopback_read_nak_flushes_responder_first (a READ sent by a post): the
  // requester's flush, if this response starts one, waits for the responder's.
  Qp* requester = nullptr;
  if (pkt.responder_flush_first) {
    auto r = by_qpn_.find(pkt.dst_qpn);
    if (r != by_qpn_.end() && !r->second->flush_pending) requester = r->second;
  }
  defer_requester_flush_ = requester != nullptr;
  Deliver(std::move(pkt));
  in_retry_response_ = defer_requester_flush_ = false;
  if (responder_flush) {
    if (requester != nullptr && !requester->flush_pending) requester = nullptr;  // not failed
    if (requester != nullptr && requester->requester_busy_until_ns > world_->events().Now()) {
      requester->flush_after_skip_loop = true;  // EnterError's rule: all of it after the loop
      requester = nullptr;
    }
    // The CQE of the error that moved it, now, unless a finished WQE waits behind it (a
    // BIND_MW or LOCAL_INV run behind the READ: FlushOnError flushes it, and DrainSq here
    // would retire it with its own status; then the error comes with the flush).
    if (requester != nullptr && OnlyTheHeadIsDone(*requester)) DrainSq(*requester);
    // Behaviour::loopback_response_before_responder_flush: the failing responder (this
    // device) flushes now, unless a modify or a post has moved on since.
    auto it = by_qpn_.find(sender_qpn);
    const bool responder_flushes = it != by_qpn_.end() && it->second->flush_pending;
    // Behaviour::loopback_read_nak_flushes_responder_first: the requester's receive flush
    // comes before the responder's flush, its send flush after it (seed 20261259 sequence
    // 15300: the requester's flushed receive, then the responder's flushed SEND, CQ full;
    // row 132: the responder's flushed receive, then the READs behind the failed one).
    if (responder_flushes && requester != nullptr && requester->flush_pending) FlushRq(*requester);
    if (responder_flushes) FlushOnError(*it->second);
    if (requester != nullptr && requester->flush_pending) FlushOnError(*requester);
    return;
  }
  if (sender_serial == 0) return;
  // Behaviour::loopback_send_completes_after_receive: the sending WQE (same device) now.
  auto it = by_qpn_.find(sender_qpn);
  if (it == by_qpn_.end()) return;
  SentWqe sent{it->second->weak_from_this(), sender_serial};
  RunSent(sent);
}

bool Nic::OnlyTheHeadIsDone(const Qp& qp) const {
  for (size_t i = 1; i < qp.sq.size(); ++i) {
    if (qp.sq[i].done && !qp.sq[i].ghost) return false;
  }
  return true;
}

void Nic::Deliver(Packet&& pkt) {
  auto it = by_qpn_.find(pkt.dst_qpn);
  if (it == by_qpn_.end()) return;  // no such QP: silently dropped, as on the wire
  Qp& qp = *it->second;
  if (WireTransport(qp.type) != pkt.transport) return;
  // XRC: requests go to the target (XRC_RECV), responses to the initiator (XRC_SEND).
  if (qp.type == (IsRequest(pkt.kind) ? QpType::kXrcSend : QpType::kXrcRecv)) return;
  // A request to a QP in ERR is dropped before the responder (rxe_recv.c check_type_state:
  // resp.state is not READY), so it flushes nothing: a receive posted in ERR waits for the
  // next move to ERR (Behaviour::recv_in_err_waits; measured: examples/fidelity/18).
  if (IsRequest(pkt.kind) &&
      (qp.state == QpState::kErr ||
       (qp.responder_not_ready && profile().behaviour.responder_ready_only_from_rtr))) {
    return;
  }
  if (IsRequest(pkt.kind)) {
    HandleRequest(qp, pkt);
  } else {
    HandleResponse(qp, pkt);
  }
}

HostBus& Nic::Dma(DmaKind kind, uint32_t qpn) const {
  bus_->Tag(DmaTag{kind, qpn, world_->events().Now()});
  return *bus_;
}

HostBus& Nic::Cpu(DmaKind kind, uint32_t qpn) const {
  cpu_->Tag(DmaTag{kind, qpn, world_->events().Now(), true});
  return *cpu_;
}

}  // namespace qptwin::model::engine
