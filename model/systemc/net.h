// The network of the SystemC NIC: what travels between a Nic's port and a Switch, and the
// Switch (a cut-through switch of n ports, which with two ports is a plain cable pair).
//
// Why sc_fifo channels and not TLM-2.0 sockets for the port: a packet is a message, not a
// memory-mapped read or write, so a tlm_generic_payload would carry it only in an extension
// with its address and data fields unused; a bounded sc_fifo gives the link's queue and
// back-pressure for free (num_available() is the queue occupancy to trace), and each
// NetPacket carries the absolute time its last byte arrives, so serialization and
// propagation are exact however far a sender runs ahead (temporal decoupling) and packets
// on one cable pipeline rather than wait for each other.
//
// Contract:
//  1. A Nic's tx thread stamps `ready` = the time its last byte leaves + propagation_ns;
//     every hop waits until `ready` before acting on the packet (so it never acts early).
//  2. The Switch routes on Packet::dst_nic (its port number), adds switch_ns and, when the
//     egress cable is still busy with an earlier packet, the queueing delay; it never
//     reorders the packets of one ingress port to one egress port. Unknown port: dropped,
//     counted in dropped().
//  3. Link parameters are model::LinkTiming (timing.h): gbps and propagation_ns per cable,
//     switch_ns per switch.
#pragma once

#include <systemc>

#include <memory>
#include <ostream>
#include <vector>

#include "model/engine/packet.h"
#include "model/timing.h"

namespace qptwin::sc {

namespace engine = model::engine;  // packet.h: the packet semantics shared with the engine

struct NetPacket {
  std::shared_ptr<engine::Packet> pkt;
  sc_core::sc_time ready;   // the last byte is at the receiving end of this hop
  sc_core::sc_time wire;    // serialization time on one cable
};
std::ostream& operator<<(std::ostream& os, const NetPacket& p);

using NetFifo = sc_core::sc_fifo<NetPacket>;

class Switch : public sc_core::sc_module {
 public:
  Switch(sc_core::sc_module_name name, int ports, const model::LinkTiming& link);

  // Bind a Nic's net_out to ingress(i) and its net_in to egress(i): the Nic is on port i.
  NetFifo& ingress(int i) { return ingress_[i]; }
  NetFifo& egress(int i) { return egress_[i]; }
  uint64_t dropped() const { return dropped_; }

 private:
  void Forward(int port);

  model::LinkTiming link_;
  sc_core::sc_vector<NetFifo> ingress_, egress_;
  std::vector<sc_core::sc_time> egress_free_;
  uint64_t dropped_ = 0;
};

// A delay of `ns` nanoseconds (the profile's unit) and of a rate in Gb/s for `bytes`.
inline sc_core::sc_time Ns(uint64_t ns) { return sc_core::sc_time(static_cast<double>(ns), sc_core::SC_NS); }
sc_core::sc_time BytesAt(double gbps, uint64_t bytes);

}  // namespace qptwin::sc
