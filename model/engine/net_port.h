// A NIC's network port: where a message leaves the NIC for the fabric, and how the fabric
// hands it to the far NIC (issue 12, "the network port ... to a link/switch module"). The
// engine keeps what happens inside a NIC (its send engine, its port's serialization:
// World::Transmit, wire.h); the fabric between two ports is the port's business. On the
// platform (model/sim/platform.h contract 9) the port is a NIC slot's and the fabric a
// SystemC module a program may replace; elsewhere it is DirectFabric.
//
// Contract:
//  1. World::Transmit works out when a message's last byte leaves its source NIC's port
//     (`leave_ns`, engine time, never before now) and, if the message is not lost (World's
//     loss draw) and goes to a NIC of the same World, calls that NIC's port's Send once, at
//     once. Messages to an external id (world.h contract 5) do not cross it.
//  2. The port carries the message to World::Arrive(std::move(pkt), at_ns), at_ns being when
//     its last byte reaches pkt.dst_nic's port; Arrive delivers it rx_latency_ns later
//     (Nic::Receive). Arrive is called inside Send (a message is handed over synchronously,
//     with its time, as TLM-2.0's loosely-timed transport is), per source NIC in Send
//     order; a link and a path through switches are FIFO, so at_ns never falls behind the
//     previous one from the same source: World::Arrive raises one that would to that one.
//     Nor is at_ns ever before leave_ns (the platform's slot takes a delay a module lowered
//     below the message's own as no time added).
//     A port may drop a message (it never calls Arrive): the far NIC never sees it, as a
//     lost packet's.
//  3. DirectFabric (the default: engine tests, and a World given no other port): at_ns =
//     leave_ns + PathNs(link), the profile's fabric (timing.h LinkTiming): switch_hops
//     switches, each switch_ns cut-through, and switch_hops + 1 cables of propagation_ns;
//     non-blocking (messages from different ports never wait for each other in a switch).
#pragma once

#include <algorithm>
#include <cstdint>

#include "model/timing.h"

namespace qptwin::model::engine {

class World;
struct Packet;

// Contract 3: from the last byte leaving a port to it reaching the far port.
inline uint64_t PathNs(const LinkTiming& l) {
  const uint64_t hops = static_cast<uint64_t>(std::max(0, l.switch_hops));
  return l.propagation_ns * (hops + 1) + l.switch_ns * hops;
}

class NetPort {
 public:
  virtual ~NetPort() = default;
  // Contract 1: `pkt` (of `world`, from pkt.src_nic) left the port at `leave_ns`, in
  // `wire_bytes` on the wire (every packet with its headers, wire.h).
  virtual void Send(World& world, Packet&& pkt, uint64_t leave_ns, uint64_t wire_bytes) = 0;
};

class DirectFabric final : public NetPort {
 public:
  void Send(World& world, Packet&& pkt, uint64_t leave_ns, uint64_t wire_bytes) override;
  static DirectFabric& Instance() {
    static DirectFabric port;
    return port;
  }
};

}  // namespace qptwin::model::engine
