#include "model/systemc/net.h"

#include <string>

#include "model/wire.h"

namespace qptwin::sc {

using sc_core::sc_time;

std::ostream& operator<<(std::ostream& os, const NetPacket& p) {
  return os << (p.pkt ? engine::Describe(*p.pkt) : std::string("(none)")) << " @" << p.ready;
}

sc_time Ps(uint64_t ps) {
  static const double ps_per_tick = sc_core::sc_get_time_resolution().to_seconds() * 1e12;
  static const uint64_t tick_ps = static_cast<uint64_t>(ps_per_tick + 0.5);
  if (tick_ps == 1) return sc_time::from_value(ps);
  if (tick_ps > 1) return sc_time::from_value((ps + tick_ps / 2) / tick_ps);
  return sc_time::from_value(static_cast<uint64_t>(static_cast<double>(ps) / ps_per_tick + 0.5));
}

sc_time BytesAt(double gbps, uint64_t bytes) {
  if (gbps <= 0 || bytes == 0) return sc_core::SC_ZERO_TIME;
  return Ps(model::SerializationPs(gbps, bytes));
}

Switch::Switch(sc_core::sc_module_name name, int ports, const model::LinkTiming& link)
    : sc_module(name),
      in_("in", ports),
      out_("out", ports),
      ingress_(new Ingress[ports]),
      egress_free_(ports),
      switch_(Ns(link.switch_ns)),
      propagation_(Ns(link.propagation_ns)) {
  for (int i = 0; i < ports; ++i) {
    ingress_[i].sw = this;
    ingress_[i].port = i;
    in_[i].bind(ingress_[i]);
  }
}

void Switch::Forward(int /*port*/, NetPacket np) {
  const int out = np.pkt->dst_nic;
  if (out < 0 || out >= static_cast<int>(out_.size())) {
    ++dropped_;
    return;
  }
  sc_time leave = np.ready + switch_;
  if (leave < egress_free_[out] + np.wire) leave = egress_free_[out] + np.wire;
  egress_free_[out] = leave;
  np.ready = leave + propagation_;
  out_[out]->Deliver(np);
}

}  // namespace qptwin::sc
