// The network of the SystemC NIC: what travels between a Nic's port and a Switch, and the
// Switch (a cut-through switch of n ports, which with two ports is a plain cable pair).
//
// Why interface method calls (an sc_port<NetIf> bound to an sc_export<NetIf>, as TLM-2.0
// sockets are) with a NetIf of our own and not TLM-2.0 sockets or sc_fifo for the port: a
// packet is a message, not a memory-mapped read or write, so a tlm_generic_payload would
// carry it only in an extension with its address and data fields unused; and a channel
// (sc_fifo) costs a process activation per hop and packet. Here a hop is a function call
// that carries the packet with the absolute time its last byte arrives (as LT's annotated
// delay does): serialization and propagation are exact however far a sender runs ahead, the
// packets on one cable pipeline, and only the receiving NIC's block wakes, once, when the
// packet is due.
//
// Contract:
//  1. Deliver(np) is called when np's first byte leaves the previous hop, with np.ready =
//     the time its last byte reaches the callee and np.wire its serialization time; it
//     never blocks. Per caller, calls come with non-decreasing np.ready.
//  2. The Switch routes on Packet::dst_nic (its port number): the last byte leaves switch_ns
//     after it came in (cut-through), or one serialization after the previous packet on the
//     same egress cable if that is later; contending packets are served in the order they
//     start (when a cut-through switch sees their headers). Unknown port: dropped, counted
//     in dropped().
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

// What a hop offers the previous one (contract 1).
class NetIf : public virtual sc_core::sc_interface {
 public:
  virtual void Deliver(const NetPacket& np) = 0;
};

class Switch : public sc_core::sc_module {
 public:
  Switch(sc_core::sc_module_name name, int ports, const model::LinkTiming& link);

  // The Nic on port i: nic.net_out.bind(sw.in(i)); sw.out(i).bind(nic.net_in).
  sc_core::sc_export<NetIf>& in(int i) { return in_[i]; }
  sc_core::sc_port<NetIf>& out(int i) { return out_[i]; }
  uint64_t dropped() const { return dropped_; }

 private:
  struct Ingress : NetIf {
    Switch* sw = nullptr;
    int port = 0;
    void Deliver(const NetPacket& np) override { sw->Forward(port, np); }
  };
  void Forward(int port, NetPacket np);

  sc_core::sc_vector<sc_core::sc_export<NetIf>> in_;
  sc_core::sc_vector<sc_core::sc_port<NetIf>> out_;
  std::unique_ptr<Ingress[]> ingress_;
  std::vector<sc_core::sc_time> egress_free_;
  sc_core::sc_time switch_, propagation_;
  uint64_t dropped_ = 0;
};

// A delay of `ps` picoseconds, `ns` nanoseconds (the profile's unit), and of `bytes` at a
// rate in Gb/s: integer arithmetic on the kernel's resolution (read once), rounded to the
// nearest tick (exact at SystemC's default 1 ps).
sc_core::sc_time Ps(uint64_t ps);
inline sc_core::sc_time Ns(uint64_t ns) { return Ps(ns * 1000); }
sc_core::sc_time BytesAt(double gbps, uint64_t bytes);

}  // namespace qptwin::sc
