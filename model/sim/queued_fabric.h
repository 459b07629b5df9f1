// A network with contention for the verbs-level model's platform (model/sim/platform.h
// contract 9), for programs that bind their own network between the NIC slots
// (Platform::SetNetBinder): the profile's path, as the platform's Fabric adds it, but the
// last switch before a destination has an egress queue per port, as qptwin::sc::Switch
// (model/systemc/net.h) has. Several NICs sending to one (incast) then share that NIC's
// cable: a message leaves the switch one serialization after the one before it on the same
// cable, as on a real switch. The platform's own Fabric is non-blocking, as the profiles'
// calibrated fabric is (model/timing.h), so the default figures stay what they are.
//
// Contract:
//  1. in(i) / out(i): slot i's way in and out (nicK.net_out -> in(K), out(K) -> nicK.net_in).
//     A message for a slot outside [0, ports) or without a World is dropped and counted.
//  2. Timing, with L = the message's World's profile.timing.link and the message's absolute
//     time T = sc_time_stamp() + delay (its last byte leaving the sender's port): the last
//     byte reaches the last switch's egress, cut-through, at E = T + engine::PathNs(L) -
//     L.propagation_ns, and leaves at max(E, the previous message's leave time on that
//     egress + this one's serialization), where the serialization is the message's
//     wire_bytes at L.gbps (model/wire.h) in whole ns, rounded up; it reaches the NIC
//     L.propagation_ns later. With L.switch_hops 0 (the profile's NICs cabled back to back)
//     the egress is the switch of 0 ns a program with more than two NICs implies: a NIC has
//     one port. One sender alone gets the Fabric's times exactly (its own port spaced its
//     messages already). A message that waited is counted (queued(), waited()).
//  3. Egress queues are per (World, destination slot): two Backends alive side by side are
//     two scenarios and share no cable. Messages are served in the order they reach the
//     switch's call, which is the order of their times up to the engine's run-ahead (the
//     global quantum, sc_clock.h contract 7).
//  4. SetQueueing(false) makes it the Fabric (no egress queues) at run time, to compare.
#pragma once

#include <systemc>

#include <cstdint>
#include <map>
#include <utility>

#include "model/sim/platform.h"

namespace qptwin::model::sim {

class QueuedFabric : public sc_core::sc_module {
 public:
  QueuedFabric(sc_core::sc_module_name name, int ports);
  sc_core::sc_export<NetLinkIf>& in(int i) { return in_[i]; }
  sc_core::sc_port<NetLinkIf>& out(int i) { return out_[i]; }

  void SetQueueing(bool on) { queueing_ = on; }
  uint64_t forwarded() const { return forwarded_; }
  uint64_t dropped() const { return dropped_; }
  uint64_t queued() const { return queued_; }  // messages that waited at an egress
  sc_core::sc_time waited() const { return waited_; }  // their waits, summed

 private:
  struct Ingress : NetLinkIf {
    QueuedFabric* fabric = nullptr;
    void Transport(NetMessage& msg) override { fabric->Forward(msg); }
  };
  void Forward(NetMessage& msg);

  sc_core::sc_vector<sc_core::sc_export<NetLinkIf>> in_;
  sc_core::sc_vector<sc_core::sc_port<NetLinkIf>> out_;
  Ingress ingress_;
  bool queueing_ = true;
  // When each egress's last message left: absolute SystemC time, per (World, slot).
  std::map<std::pair<const engine::World*, int>, sc_core::sc_time> egress_free_;
  uint64_t forwarded_ = 0;
  uint64_t dropped_ = 0;
  uint64_t queued_ = 0;
  sc_core::sc_time waited_ = sc_core::SC_ZERO_TIME;
};

}  // namespace qptwin::model::sim
