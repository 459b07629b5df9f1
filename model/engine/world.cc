#include "model/engine/world.h"

#include <algorithm>

#include "model/engine/nic.h"

namespace qptwin::model::engine {

World::World(const Profile& profile, int devices, double loss_rate, uint64_t seed)
    : profile_(profile), loss_rate_(loss_rate), rng_(seed) {
  for (int i = 0; i < devices; ++i) {
    nics_.push_back(std::make_unique<Nic>(this, i));
    tx_free_at_.push_back(0);
    engine_free_at_.push_back(0);
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
  return -1;
}

bool World::Lose() {
  if (loss_rate_ <= 0) return false;
  double u = static_cast<double>(rng_() >> 11) * (1.0 / 9007199254740992.0);
  return u < loss_rate_;
}

uint64_t World::Transmit(Packet pkt, uint64_t delay_ns, uint32_t mtu_bytes) {
  const Timing& t = profile_.timing;
  uint64_t ready = events_.Now() + delay_ns;
  if (t.serial_processing) {
    ready = std::max(events_.Now(), engine_free_at_[pkt.src_nic]) + delay_ns;
    engine_free_at_[pkt.src_nic] = ready;
  }
  uint64_t start = std::max(ready, tx_free_at_[pkt.src_nic]);
  uint64_t bytes = pkt.data.size();
  uint64_t dur = 0;
  bool lost = false;
  for (uint32_t i = 0; i < pkt.npkts; ++i) {
    uint32_t payload = static_cast<uint32_t>(std::min<uint64_t>(bytes, mtu_bytes));
    bytes -= payload;
    dur += PacketWireNs(t, payload);
    ++packets_sent_;
    if (Lose()) {
      lost = true;
      ++packets_lost_;
    }
  }
  uint64_t end = start + dur;
  tx_free_at_[pkt.src_nic] = end;
  int dst = pkt.dst_nic;
  if (!lost && dst >= 0 && dst < nic_count()) {
    Nic* target = nics_[dst].get();
    events_.At(end + t.wire_latency_ns,
               [target, p = std::move(pkt)]() mutable { target->Receive(std::move(p)); });
  }
  return end;
}

}  // namespace qptwin::model::engine
