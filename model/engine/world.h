// A world: the NICs of one Backend, the fabric that connects their ports, and one clock.
//
// Contract:
//  1. Handles are unique across the world (so a handle of another device is never found).
//  2. Transmit() models the wire: serialization per port (link rate, header bytes per
//     packet), propagation latency and loss (deterministic from the seed). A lost message
//     is simply never delivered.
//  3. Everything is single-threaded; callbacks run only inside EventQueue::AdvanceBy/RunUntil.
#pragma once

#include <cstdint>
#include <memory>
#include <random>
#include <vector>

#include "model/engine/event_queue.h"
#include "model/engine/packet.h"
#include "model/profile.h"

namespace qptwin::model::engine {

class Nic;

class World {
 public:
  World(const Profile& profile, int devices, double loss_rate, uint64_t seed);
  ~World();

  EventQueue& events() { return events_; }
  const Profile& profile() const { return profile_; }
  int nic_count() const { return static_cast<int>(nics_.size()); }
  Nic* nic(int i) { return nics_[i].get(); }
  uint32_t NewHandle() { return next_handle_++; }

  // The device whose port has this address (GID on RoCE, LID on IB), or -1.
  int ResolveAddress(const AhAttr& ah) const;

  // Sends `pkt` from its src_nic after `delay_ns` of processing; returns the time its last
  // byte leaves the port. Delivery (if not lost) calls Nic::Receive at the far end.
  uint64_t Transmit(Packet pkt, uint64_t delay_ns, uint32_t mtu_bytes);

  uint64_t packets_sent() const { return packets_sent_; }
  uint64_t packets_lost() const { return packets_lost_; }

 private:
  bool Lose();

  const Profile& profile_;
  EventQueue events_;
  std::vector<std::unique_ptr<Nic>> nics_;
  std::vector<uint64_t> tx_free_at_;
  std::vector<uint64_t> engine_free_at_;  // serial_processing: when each NIC's engine is idle
  double loss_rate_;
  std::mt19937_64 rng_;
  uint32_t next_handle_ = 1;
  uint64_t packets_sent_ = 0;
  uint64_t packets_lost_ = 0;
};

}  // namespace qptwin::model::engine
