// The runner's queries: every attribute ibv_query_qp, ibv_query_device, ibv_query_port and
// ibv_query_srq return, as canonical lines (FORMAT.md "Queries"). A value that differs
// between devices by nature (a QP number, a GID, a key, a handle) is printed as the name
// of the scenario object it refers to; nothing is left out.
#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>

#include "spec/scenario/runner.h"

namespace qptwin::scenario {
namespace {

// One attributes line, " key=value" appended per attribute in place (a query prints some
// 60 of them: temporaries per attribute were most of its cost).
class Attrs {
 public:
  // The text is written into s_'s own bytes (n_ of them used) and cut to size once at the
  // end: an append per piece was a library call each.
  explicit Attrs(std::string_view head) : s_(std::max<size_t>(384, head.size()), '\0') {
    Put(head);
  }
  Attrs& Kv(std::string_view key, uint64_t v) {
    Key(key);
    char buf[24];
    auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
    Put(std::string_view(buf, static_cast<size_t>(end - buf)));
    return *this;
  }
  Attrs& Kv(std::string_view key, std::string_view v) {
    Key(key);
    Put(v);
    return *this;
  }
  Attrs& Add(std::string_view text) {
    Put(text);
    return *this;
  }
  Attrs& Caps(const QpCap& cap) {
    return Kv("max_send_wr", cap.max_send_wr)
        .Kv("max_recv_wr", cap.max_recv_wr)
        .Kv("max_send_sge", cap.max_send_sge)
        .Kv("max_recv_sge", cap.max_recv_sge)
        .Kv("max_inline", cap.max_inline_data);
  }
  std::string str() {
    s_.resize(n_);
    return std::move(s_);
  }
  operator std::string() { return str(); }  // NOLINT: AddAttrs(Attrs(...)...)

 private:
  void Key(std::string_view key) {
    Room(key.size() + 2);
    s_[n_++] = ' ';
    Copy(key);
    s_[n_++] = '=';
  }
  void Put(std::string_view text) {
    Room(text.size());
    Copy(text);
  }
  void Room(size_t more) {
    if (n_ + more > s_.size()) s_.resize(std::max(2 * s_.size(), n_ + more));
  }
  void Copy(std::string_view text) {  // after Room
    if (text.empty()) return;  // its data() may be null
    std::memcpy(&s_[n_], text.data(), text.size());
    n_ += text.size();
  }
  std::string s_;
  size_t n_ = 0;
};

std::string GidHex(const Gid& gid) {
  std::string out = "gid:";
  char b[4];
  for (uint8_t x : gid.raw) {
    std::snprintf(b, sizeof b, "%02x", x);
    out += b;
  }
  return out;
}

}  // namespace

void Runner::AddAttrs(std::string text, Step* step) {
  Outcome& o = step->outcomes.emplace_back();
  o.kind = Outcome::Kind::kAttrs;
  o.text = std::move(text);
}

std::string Runner::HandleName(ObjectKind kind, int device, uint32_t handle) const {
  if (handle == 0) return "none";
  for (const auto& [name, o] : objects_) {
    if (o.kind == kind && o.device == device && o.handle == handle) return name;
  }
  return "#" + std::to_string(handle);
}

std::string Runner::QpNumName(const Object& local, uint32_t qp_num) const {
  if (qp_num == 0) return "0";
  auto is = [&](const std::string& name) {
    auto it = qps_.find(name);
    return it != qps_.end() && it->second->handle && it->second->qp_num == qp_num;
  };
  if (!local.peer.empty() && is(local.peer)) return local.peer;
  for (const std::string& s : local.ud_senders) {
    if (is(s)) return s;
  }
  for (bool destroyed : {false, true}) {
    for (const auto& [name, qp] : qps_) {
      if (qp->handle && qp->qp_num == qp_num && qp->destroyed == destroyed) return name;
    }
  }
  return "qpn:" + std::to_string(qp_num);
}

std::string Runner::GidName(const Object& local, const Gid& gid) {
  if (gid == Gid{}) return "0";
  auto device_gid = [&](int d, Gid* out) {
    if (d < 0 || d >= static_cast<int>(devices_.size()) || !devices_[d]) return false;
    int index = 0;
    return devices_[d]->DefaultGidIndex(1, &index) == 0 &&
           devices_[d]->QueryGid(1, index, out) == 0;
  };
  auto name_of = [&](int d) -> std::string {
    for (const auto& [name, o] : objects_) {
      if (o.kind == ObjectKind::kDevice && o.device == d) return name;
    }
    return "dev" + std::to_string(d);
  };
  std::vector<int> order;
  auto peer = qps_.find(local.peer);
  if (peer != qps_.end()) order.push_back(peer->second->device);
  for (int d = 0; d < static_cast<int>(devices_.size()); ++d) order.push_back(d);
  for (int d : order) {
    Gid g;
    if (device_gid(d, &g) && g == gid) return name_of(d);
  }
  return GidHex(gid);
}

std::string Runner::KeyName(int device, uint32_t rkey) const {
  for (const auto& [name, o] : objects_) {
    const bool keyed = o.kind == ObjectKind::kMr || o.kind == ObjectKind::kMw;
    if (keyed && o.device == device && o.handle && o.rkey == rkey) {
      return name;
    }
  }
  return "key:" + std::to_string(rkey);
}

int Runner::Query(const Command& c, Step* step) {
  const Object& o = Obj(c.name);
  Device* dev = DeviceOf(o);
  if (!dev) return ENODEV;
  QpAttr a;
  QpInitAttr init;
  int ret = dev->QueryQp(QpHandle{o.handle}, &a, &init);
  if (ret != 0) return ret;
  Outcome state;
  state.kind = Outcome::Kind::kState;
  state.state = a.qp_state;
  step->outcomes.push_back(std::move(state));
  AddAttrs(Attrs("qp_attr").Kv("cur_state", ToName(a.cur_qp_state))
      .Kv("path_mtu", MtuBytes(a.path_mtu)).Kv("qkey", a.qkey).Kv("rq_psn", a.rq_psn)
      .Kv("sq_psn", a.sq_psn).Kv("dest_qp", QpNumName(o, a.dest_qp_num))
      .Kv("access", FormatAccessFlags(a.qp_access_flags)).Kv("pkey_index", a.pkey_index)
      .Kv("port", a.port_num).Kv("timeout", a.timeout).Kv("retry_cnt", a.retry_cnt)
      .Kv("rnr_retry", a.rnr_retry).Kv("min_rnr_timer", a.min_rnr_timer)
      .Kv("max_rd_atomic", a.max_rd_atomic).Kv("max_dest_rd_atomic", a.max_dest_rd_atomic)
      .Kv("sq_draining", a.sq_draining).Kv("en_sqd_async_notify", a.en_sqd_async_notify)
      .Kv("rate_limit", a.rate_limit),
      step);
  auto ah = [&](const AhAttr& h) {
    return Attrs("").Kv("is_global", h.is_global).Kv("dgid", GidName(o, h.grh.dgid))
        .Kv("sgid_index", h.grh.sgid_index).Kv("hop_limit", h.grh.hop_limit)
        .Kv("traffic_class", h.grh.traffic_class).Kv("flow_label", h.grh.flow_label)
        .Kv("dlid", h.dlid).Kv("sl", h.sl).Kv("src_path_bits", h.src_path_bits)
        .Kv("static_rate", h.static_rate).Kv("port", h.port_num).str();
  };
  AddAttrs(Attrs("qp_ah").Add(ah(a.ah_attr)), step);
  AddAttrs(Attrs("qp_alt").Kv("alt_pkey_index", a.alt_pkey_index).Kv("alt_port", a.alt_port_num)
      .Kv("alt_timeout", a.alt_timeout).Add(ah(a.alt_ah_attr)),
      step);
  AddAttrs(Attrs("qp_cap").Caps(a.cap), step);
  AddAttrs(Attrs("qp_init").Kv("type", ToName(init.qp_type)).Kv("sq_sig_all", init.sq_sig_all)
      .Kv("send_cq", HandleName(ObjectKind::kCq, o.device, init.send_cq.id))
      .Kv("recv_cq", HandleName(ObjectKind::kCq, o.device, init.recv_cq.id))
      .Kv("srq", HandleName(ObjectKind::kSrq, o.device, init.srq.id)).Caps(init.cap),
      step);
  return 0;
}

int Runner::QueryDevice(const Command& c, Step* step) {
  const Object& o = Obj(c.device);
  Device* dev = DeviceOf(o);
  if (!dev) return ENODEV;
  DeviceAttr d;
  if (int ret = dev->QueryDevice(&d)) return ret;
  AddAttrs(Attrs("device_attr").Kv("dev", c.device).Kv("max_mr_size", d.max_mr_size)
      .Kv("vendor_id", d.vendor_id).Kv("vendor_part_id", d.vendor_part_id).Kv("max_qp", d.max_qp)
      .Kv("max_qp_wr", d.max_qp_wr).Kv("max_sge", d.max_sge).Kv("max_sge_rd", d.max_sge_rd)
      .Kv("max_cq", d.max_cq).Kv("max_cqe", d.max_cqe).Kv("max_mr", d.max_mr).Kv("max_pd", d.max_pd)
      .Kv("max_ah", d.max_ah).Kv("max_qp_rd_atom", d.max_qp_rd_atom)
      .Kv("max_qp_init_rd_atom", d.max_qp_init_rd_atom).Kv("max_srq", d.max_srq)
      .Kv("max_srq_wr", d.max_srq_wr).Kv("max_srq_sge", d.max_srq_sge)
      .Kv("max_inline_data", d.max_inline_data).Kv("max_pkeys", d.max_pkeys)
      .Kv("atomic_cap", static_cast<uint64_t>(d.atomic_cap)).Kv("phys_port_cnt", d.phys_port_cnt)
      .Kv("page_size_cap", d.page_size_cap).Kv("hw_ver", d.hw_ver)
      .Kv("device_cap_flags", d.device_cap_flags).Kv("max_ee_rd_atom", d.max_ee_rd_atom)
      .Kv("max_res_rd_atom", d.max_res_rd_atom).Kv("max_ee_init_rd_atom", d.max_ee_init_rd_atom)
      .Kv("max_ee", d.max_ee).Kv("max_rdd", d.max_rdd).Kv("max_mw", d.max_mw)
      .Kv("max_raw_ipv6_qp", d.max_raw_ipv6_qp).Kv("max_raw_ethy_qp", d.max_raw_ethy_qp)
      .Kv("max_mcast_grp", d.max_mcast_grp).Kv("max_mcast_qp_attach", d.max_mcast_qp_attach)
      .Kv("max_total_mcast_qp_attach", d.max_total_mcast_qp_attach).Kv("max_fmr", d.max_fmr)
      .Kv("max_map_per_fmr", d.max_map_per_fmr).Kv("local_ca_ack_delay", d.local_ca_ack_delay),
      step);
  return 0;
}

int Runner::QueryPort(const Command& c, Step* step) {
  const Object& o = Obj(c.device);
  Device* dev = DeviceOf(o);
  if (!dev) return ENODEV;
  PortAttr p;
  if (int ret = dev->QueryPort(c.port, &p)) return ret;
  // The violation counters count over the device's life: printed as what this scenario
  // added since its first query of the port.
  const auto key = std::make_pair(o.device, c.port);
  auto at = port_counters_.find(key);
  if (at == port_counters_.end()) {
    at = port_counters_.emplace(key, std::make_pair(p.bad_pkey_cntr, p.qkey_viol_cntr)).first;
  }
  const std::pair<uint32_t, uint32_t> base = at->second;
  AddAttrs(Attrs("port_attr").Kv("dev", c.device).Kv("port", c.port).Kv("state", ToName(p.state))
      .Kv("max_mtu", MtuBytes(p.max_mtu)).Kv("active_mtu", MtuBytes(p.active_mtu))
      .Kv("gid_tbl_len", p.gid_tbl_len).Kv("max_msg_sz", p.max_msg_sz)
      .Kv("pkey_tbl_len", p.pkey_tbl_len).Kv("lid", p.lid).Kv("lmc", p.lmc)
      .Kv("active_width", p.active_width).Kv("active_speed", p.active_speed)
      .Kv("link_layer", ToName(p.link_layer)).Kv("port_cap_flags", p.port_cap_flags)
      .Kv("port_cap_flags2", p.port_cap_flags2)
      .Kv("bad_pkey_cntr", "+" + std::to_string(p.bad_pkey_cntr - base.first))
      .Kv("qkey_viol_cntr", "+" + std::to_string(p.qkey_viol_cntr - base.second))
      .Kv("sm_lid", p.sm_lid).Kv("sm_sl", p.sm_sl).Kv("max_vl_num", p.max_vl_num)
      .Kv("subnet_timeout", p.subnet_timeout).Kv("init_type_reply", p.init_type_reply)
      .Kv("phys_state", p.phys_state),
      step);
  return 0;
}

int Runner::QuerySrq(const Command& c, Step* step) {
  const Object& o = Obj(c.name);
  Device* dev = DeviceOf(o);
  if (!dev) return ENODEV;
  SrqAttr a;
  if (int ret = dev->QuerySrq(SrqHandle{o.handle}, &a)) return ret;
  AddAttrs(Attrs("srq_attr").Kv("max_wr", a.max_wr).Kv("max_sge", a.max_sge)
      .Kv("srq_limit", a.srq_limit),
      step);
  return 0;
}

}  // namespace qptwin::scenario
