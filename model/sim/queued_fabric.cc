#include "model/sim/queued_fabric.h"

#include <algorithm>

#include "model/engine/net_port.h"
#include "model/engine/world.h"
#include "model/wire.h"

namespace qptwin::model::sim {

QueuedFabric::QueuedFabric(sc_core::sc_module_name name, int ports)
    : sc_module(name), in_("in", ports), out_("out", ports) {
  ingress_.fabric = this;
  for (int i = 0; i < ports; ++i) in_[i].bind(ingress_);
}

void QueuedFabric::Forward(NetMessage& msg) {
  if (msg.world == nullptr || msg.pkt == nullptr || msg.dst_slot < 0 ||
      msg.dst_slot >= static_cast<int>(out_.size())) {
    ++dropped_;
    return;
  }
  ++forwarded_;
  const LinkTiming& link = msg.world->profile().timing.link;
  const uint64_t path_ns = engine::PathNs(link);
  if (!queueing_) {  // contract 4
    msg.delay += NsToTime::Convert(path_ns);
    out_[msg.dst_slot]->Transport(msg);
    return;
  }
  const sc_core::sc_time now = sc_core::sc_time_stamp();
  const sc_core::sc_time at_egress =
      now + msg.delay + NsToTime::Convert(path_ns - link.propagation_ns);
  sc_core::sc_time& free = egress_free_[{msg.world, msg.dst_slot}];
  sc_core::sc_time leave = at_egress;
  // The serialization in whole ns, rounded up, as the engine's own times are (the kernel
  // may run at 1 ns resolution: kernel.cc).
  const uint64_t wire_ns = (SerializationPs(link.gbps, msg.wire_bytes) + 999) / 1000;
  const sc_core::sc_time after_previous = free + NsToTime::Convert(wire_ns);
  if (free > sc_core::SC_ZERO_TIME && after_previous > leave) {
    ++queued_;
    waited_ += after_previous - at_egress;
    leave = after_previous;
  }
  free = leave;
  msg.delay = leave + NsToTime::Convert(link.propagation_ns) - now;
  out_[msg.dst_slot]->Transport(msg);
}

}  // namespace qptwin::model::sim
