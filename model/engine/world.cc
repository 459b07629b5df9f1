#include "model/engine/world.h"

#include <algorithm>

#include "model/engine/nic.h"

namespace qptwin::model::engine {

World::World(const Profile& profile, int devices, double loss_rate, uint64_t seed,
             std::unique_ptr<EventQueue> clock)
    : profile_(profile),
      clock_(std::move(clock)),
      marks_(clock_.get(), [](char&) {}, EventQueue::Where{-1, EventQueue::Block::kCqeVisible}),
      inbound_(
          clock_.get(), [this](Delivery& d) { nics_[d.pkt.dst_nic]->Receive(std::move(d.pkt)); },
          EventQueue::Where{-1, EventQueue::Block::kRoceIn}),
      loss_rate_(loss_rate),
      seed_(seed) {
  for (int i = 0; i < devices; ++i) {
    nics_.push_back(std::make_unique<Nic>(this, i));
    ports_.push_back(Port{});
    links_.push_back(std::make_unique<EventFifo<Delivery>>(
        clock_.get(), [this](Delivery& d) { nics_[d.pkt.dst_nic]->Receive(std::move(d.pkt)); },
        EventQueue::Where{i, EventQueue::Block::kPort}));
    outgoing_.push_back(std::make_unique<EventFifo<Outgoing>>(
        clock_.get(),
        [this](Outgoing& o) {
          if (external_) external_->Send(o.pkt, ExternalGid(o.pkt.dst_nic), o.mtu);
        },
        EventQueue::Where{i, EventQueue::Block::kRoceOut}));
  }
}

World::~World() = default;

int World::ResolveAddress(const AhAttr& ah) const {
  for (const auto& n : nics_) {
    if (ah.is_global) {
      Gid g;
      for (int idx = 0; idx < Nic::kPopulatedGids; ++idx) {
        if (n->GidAt(idx, &g) && g == ah.grh.dgid) return n->index();
      }
    } else if (profile_.port.link_layer != LinkLayer::kEthernet && ah.dlid == n->lid()) {
      return n->index();
    }
  }
  if (external_ && ah.is_global) return ExternalId(ah.grh.dgid);
  // IB without a GRH: a LID no local port has is the port at that LID in our addresses'
  // /16 (Nic::lid(): the low 16 bits), as an IPv4-mapped GID.
  if (external_ && profile_.port.link_layer != LinkLayer::kEthernet && ah.dlid != 0 &&
      ipv4(0) != 0) {
    const uint32_t ip = (ipv4(0) & 0xffff0000u) | ah.dlid;
    Gid g;
    g.raw[10] = g.raw[11] = 0xff;
    for (int i = 0; i < 4; ++i) g.raw[12 + i] = static_cast<uint8_t>(ip >> (24 - 8 * i));
    return ExternalId(g);
  }
  return -1;
}

int World::ExternalId(const Gid& gid) const {
  for (size_t i = 0; i < externals_.size(); ++i) {
    if (externals_[i] == gid) return nic_count() + static_cast<int>(i);
  }
  externals_.push_back(gid);
  if (externals_.size() == 1 && external_) external_->Activate();
  return nic_count() + static_cast<int>(externals_.size() - 1);
}

size_t World::outgoing() const {
  size_t n = 0;
  for (const auto& l : outgoing_) n += l->size();
  return n;
}

bool World::Inject(Packet pkt) {
  if (pkt.dst_nic < 0 || pkt.dst_nic >= nic_count()) return false;
  inbound_.Push(clock_->Now() + FabricLatencyNs(), Delivery{std::move(pkt)});
  return true;
}

void World::WakeAt(uint64_t t) {
  if (!marks_.empty() && marks_.back_time() == t) return;  // contract: one mark per time
  marks_.Push(t, 0);
}

size_t World::in_flight() const {
  size_t n = marks_.size() + inbound_.size();
  for (const auto& l : links_) n += l->size();
  for (const auto& l : outgoing_) n += l->size();
  for (const HeldWork& w : held_work_) n += w.pkt != nullptr;  // a held request
  return n;
}

bool World::HasHeldPacketFor(const Nic* nic, uint32_t qpn) const {
  for (const HeldWork& w : held_work_) {
    if (w.pkt != nullptr && w.nic == nic && w.pkt->dst_qpn == qpn) return true;
  }
  return false;
}

uint32_t World::ArmTimerAtTick(uint64_t tick) {
  // Ticks that have passed hold no timer any more: forget them now and then.
  if (timers_per_tick_.size() > 256) {
    const uint64_t tick_ns = profile_.timing.nic.timer_tick_ns;
    const uint64_t now_tick =
        tick_ns == 0 ? 0 : (clock_->Now() + profile_.timing.nic.timer_tick_phase_ns) / tick_ns;
    for (auto it = timers_per_tick_.begin(); it != timers_per_tick_.end();) {
      it = it->first < now_tick ? timers_per_tick_.erase(it) : std::next(it);
    }
  }
  return timers_per_tick_[tick]++;
}

void World::RunHeldWork() {
  std::vector<HeldWork> held;
  held.swap(held_work_);
  for (HeldWork& w : held) {
    if (w.pkt) {
      w.nic->Receive(std::move(*w.pkt));
    } else if (auto qp = w.qp.lock()) {
      w.nic->RunHeldFlush(*qp);
    }
  }
}

void World::WaitOutHostStall() {
  // A loop that starts meanwhile may move the end on.
  while (host_stall_end_ns_ > events().Now()) {
    const uint64_t before = events().Now();
    events().RunUntil([] { return false; }, host_stall_end_ns_);
    if (events().Now() == before) break;  // no time can pass here (sc_clock.h contract 8)
  }
}

void World::StallHostAtWake(uint64_t until_ns, int wakes) {
  if (pending_stall_end_ns_ <= events().Now()) pending_stall_wakes_ = std::max(1, wakes);
  pending_stall_end_ns_ = std::max(pending_stall_end_ns_, until_ns);
}

void World::HostWakes() {
  if (pending_stall_end_ns_ == 0) return;
  if (pending_stall_end_ns_ > events().Now() && --pending_stall_wakes_ > 0) return;
  if (pending_stall_end_ns_ > events().Now()) StallHost(pending_stall_end_ns_);
  pending_stall_end_ns_ = 0;
  pending_stall_wakes_ = 0;
}

bool World::ExchangesSettled() const {
  if (in_flight() != 0) return false;
  for (const auto& n : nics_) {
    if (n->SendEngineBusy()) return false;
  }
  return true;
}

bool World::Lose() {
  if (loss_rate_ <= 0) return false;
  if (!rng_) rng_.emplace(seed_);
  double u = static_cast<double>((*rng_)() >> 11) * (1.0 / 9007199254740992.0);
  return u < loss_rate_;
}

namespace {

constexpr uint64_t kPsPerNs = 1000;

WireOp WireOpOf(PacketKind k) {
  switch (k) {
    case PacketKind::kSend: return WireOp::kSend;
    case PacketKind::kWrite: return WireOp::kWrite;
    case PacketKind::kReadReq: return WireOp::kReadReq;
    case PacketKind::kAtomic: return WireOp::kAtomic;
    case PacketKind::kReadResp: return WireOp::kReadResp;
    case PacketKind::kAtomicResp: return WireOp::kAtomicResp;
    default: return WireOp::kAck;  // ACK and NAK: BTH + AETH
  }
}

uint64_t CeilNs(uint64_t ps) { return (ps + kPsPerNs - 1) / kPsPerNs; }

}  // namespace

uint64_t World::FabricLatencyNs() const {
  return PathNs(profile_.timing.link) + profile_.timing.nic.rx_latency_ns;
}

void World::Arrive(Packet&& pkt, uint64_t at_ns) {
  const int src = pkt.src_nic;
  if (src < 0 || src >= nic_count() || pkt.dst_nic < 0 || pkt.dst_nic >= nic_count()) return;
  EventFifo<Delivery>& link = *links_[src];
  uint64_t t = at_ns + profile_.timing.nic.rx_latency_ns;  // at_ns >= leave_ns >= now
  if (!link.empty() && link.back_time() > t) t = link.back_time();  // net_port.h contract 2
  link.PushFilled(t, [&pkt](Delivery& d) { d.pkt = std::move(pkt); });
}

void DirectFabric::Send(World& world, Packet&& pkt, uint64_t leave_ns, uint64_t) {
  world.Arrive(std::move(pkt), leave_ns + PathNs(world.profile().timing.link));  // contract 3
}

uint64_t World::OccupyDmaRead(int nic, uint64_t at_ns, uint64_t bytes) {
  Port& port = ports_[nic];
  const double gbps = profile_.timing.nic.pcie_gbps;
  if (bytes == 0 || gbps <= 0) return at_ns;
  uint64_t start = std::max(at_ns * kPsPerNs, port.dma_free_ps);
  port.dma_free_ps = start + serialization_.Ps(gbps, bytes);
  return CeilNs(port.dma_free_ps);
}

const MessageWire& World::WireOfCached(WireOp op, uint64_t payload, uint32_t mtu, bool ext,
                                       bool ud) {
  WireMemo& m = wire_memo_[static_cast<int>(op)];
  if (!m.valid || m.payload != payload || m.mtu != mtu || m.ext != ext || m.ud != ud) {
    m.wire = WireOf(profile_.timing.link, op, payload, mtu, ext, ud);
    m.payload = payload;
    m.mtu = mtu;
    m.ext = ext;
    m.ud = ud;
    m.valid = true;
  }
  return m.wire;
}

uint64_t World::Transmit(Packet&& pkt, uint64_t ready_ns, uint64_t proc_ns, uint64_t dma_bytes,
                         uint32_t mtu_bytes) {
  const NicTiming& nic = profile_.timing.nic;
  const LinkTiming& link = profile_.timing.link;
  Port& port = ports_[pkt.src_nic];
  const uint64_t ready = std::max(clock_->Now(), ready_ns);

  // Payload DMA read: latency, then the bytes at the PCIe rate (the channel is shared).
  uint64_t first_ps = ready * kPsPerNs;
  uint64_t all_ps = first_ps;
  if (dma_bytes > 0 && nic.pcie_gbps > 0) {
    uint64_t start = std::max(ready * kPsPerNs, port.dma_free_ps);
    uint64_t first = std::min<uint64_t>(dma_bytes, mtu_bytes ? mtu_bytes : dma_bytes);
    port.dma_free_ps = start + serialization_.Ps(nic.pcie_gbps, dma_bytes);
    first_ps = start + nic.pcie_read_ns * kPsPerNs + serialization_.Ps(nic.pcie_gbps, first);
    all_ps = port.dma_free_ps + nic.pcie_read_ns * kPsPerNs;
  }

  // The pipeline: on a serial device every cost queues on the one engine.
  const bool ud = pkt.transport == QpType::kUd;
  const bool ext = pkt.has_imm || pkt.has_inv;  // ImmDt or IETH: 4 bytes
  const MessageWire& w = WireOfCached(WireOpOf(pkt.kind), pkt.data.size(), mtu_bytes, ext, ud);
  uint64_t first_ns = CeilNs(first_ps);
  uint64_t leave_ns;
  if (nic.serial_processing) {
    leave_ns = std::max(first_ns, port.engine_free_ns) + proc_ns;
    port.engine_free_ns = leave_ns;
  } else {
    leave_ns = std::max(first_ns + proc_ns, port.engine_free_ns);
    port.engine_free_ns = leave_ns + uint64_t{w.packets} * nic.tx_pkt_ns;
  }

  // The wire: one packet at a time per port; the last packet not before its data.
  uint64_t start_ps = std::max(leave_ns * kPsPerNs, port.tx_free_ps);
  uint64_t end_ps = start_ps + w.wire_ps;
  if (w.packets > 1 && all_ps > first_ps) {
    uint64_t last = serialization_.Ps(link.gbps, w.wire_bytes / w.packets);
    end_ps = std::max(end_ps, all_ps + proc_ns * kPsPerNs + last);
  }
  port.tx_free_ps = end_ps;
  if (TracePort* t = nics_[pkt.src_nic]->tracing()) {  // trace_port.h contract 3
    t->LinkBusy(clock_->Now(), start_ps / kPsPerNs, CeilNs(end_ps));
  }

  bool lost = false;
  for (uint32_t i = 0; i < w.packets; ++i) {
    if (Lose()) {
      lost = true;
      ++packets_lost_;
    }
  }
  packets_sent_ += w.packets;
  ++messages_sent_;
  wire_bytes_ += w.wire_bytes;
  uint64_t end = CeilNs(end_ps);
  int dst = pkt.dst_nic;
  if (!lost && dst >= 0 && dst < nic_count()) {
    // net_port.h contract 1: the fabric is the port's; it calls Arrive.
    nics_[pkt.src_nic]->net_port().Send(*this, std::move(pkt), end, w.wire_bytes);
  } else if (!lost && external_ && IsExternal(dst) &&
             dst - nic_count() < static_cast<int>(externals_.size())) {
    const int src = pkt.src_nic;
    outgoing_[src]->Push(end, Outgoing{std::move(pkt), mtu_bytes});
  }
  return end;
}

}  // namespace qptwin::model::engine
