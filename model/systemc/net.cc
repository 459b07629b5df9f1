#include "model/systemc/net.h"

#include <string>

#include "model/wire.h"

namespace qptwin::sc {

using sc_core::sc_time;

std::ostream& operator<<(std::ostream& os, const NetPacket& p) {
  return os << (p.pkt ? engine::Describe(*p.pkt) : std::string("(none)")) << " @" << p.ready;
}

sc_time BytesAt(double gbps, uint64_t bytes) {
  if (gbps <= 0 || bytes == 0) return sc_core::SC_ZERO_TIME;
  return sc_time(static_cast<double>(model::SerializationPs(gbps, bytes)), sc_core::SC_PS);
}

Switch::Switch(sc_core::sc_module_name name, int ports, const model::LinkTiming& link)
    : sc_module(name),
      link_(link),
      ingress_("ingress", ports),
      egress_("egress", ports),
      egress_free_(ports) {
  for (int i = 0; i < ports; ++i) {
    sc_core::sc_spawn_options opt;
    sc_core::sc_spawn([this, i] { Forward(i); }, sc_core::sc_gen_unique_name("forward"), &opt);
  }
}

// One thread per ingress port: cut-through, so the last byte leaves switch_ns after it came
// in, or one serialization after the previous packet on a busy egress cable.
void Switch::Forward(int port) {
  for (;;) {
    NetPacket np = ingress_[port].read();
    if (np.ready > sc_core::sc_time_stamp()) wait(np.ready - sc_core::sc_time_stamp());
    const int out = static_cast<int>(np.pkt->dst_nic);
    if (out < 0 || out >= static_cast<int>(egress_.size())) {
      ++dropped_;
      continue;
    }
    sc_time leave = sc_core::sc_time_stamp() + Ns(link_.switch_ns);
    if (leave - np.wire < egress_free_[out]) leave = egress_free_[out] + np.wire;
    egress_free_[out] = leave;
    if (leave > sc_core::sc_time_stamp()) wait(leave - sc_core::sc_time_stamp());
    np.ready = leave + Ns(link_.propagation_ns);
    egress_[out].write(np);
  }
}

}  // namespace qptwin::sc
