#include "hw/convert.h"

#include <arpa/inet.h>

#include <cstring>

namespace qptwin::hw {
namespace {

// SrqType (spec/backend.h) is ibv_srq_type (abi_check.cc pins the vocabulary's enums).
static_assert(static_cast<int>(SrqType::kBasic) == IBV_SRQT_BASIC);
static_assert(static_cast<int>(SrqType::kXrc) == IBV_SRQT_XRC);

template <typename To, typename From>
To Cast(From v) {
  return static_cast<To>(v);
}

ibv_sge ToIbvSge(const Sge& s) {
  ibv_sge out{};
  out.addr = s.addr;
  out.length = s.length;
  out.lkey = s.lkey;
  return out;
}

bool IsAtomic(WrOpcode op) {
  return op == WrOpcode::kAtomicCmpAndSwp || op == WrOpcode::kAtomicFetchAndAdd;
}

// The fields ibv_wc and WorkCompletion share with the same name and meaning, copied either
// way (the enums are cast: their values are identical, abi_check.cc).
template <typename To, typename From>
void CopyWcFields(const From& wc, To* out) {
  out->wr_id = wc.wr_id;
  out->status = Cast<decltype(out->status)>(wc.status);
  out->opcode = Cast<decltype(out->opcode)>(wc.opcode);
  out->vendor_err = wc.vendor_err;
  out->byte_len = wc.byte_len;
  out->qp_num = wc.qp_num;
  out->src_qp = wc.src_qp;
  out->wc_flags = wc.wc_flags;
  out->pkey_index = wc.pkey_index;
  out->slid = wc.slid;
  out->sl = wc.sl;
  out->dlid_path_bits = wc.dlid_path_bits;
}

}  // namespace

Gid FromIbvGid(const ibv_gid& gid) {
  Gid out;
  std::memcpy(out.raw.data(), gid.raw, out.raw.size());
  return out;
}

ibv_gid ToIbvGid(const Gid& gid) {
  ibv_gid out{};
  std::memcpy(out.raw, gid.raw.data(), gid.raw.size());
  return out;
}

ibv_ah_attr ToIbvAhAttr(const AhAttr& ah) {
  ibv_ah_attr out{};
  out.grh.dgid = ToIbvGid(ah.grh.dgid);
  out.grh.flow_label = ah.grh.flow_label;
  out.grh.sgid_index = ah.grh.sgid_index;
  out.grh.hop_limit = ah.grh.hop_limit;
  out.grh.traffic_class = ah.grh.traffic_class;
  out.dlid = ah.dlid;
  out.sl = ah.sl;
  out.src_path_bits = ah.src_path_bits;
  out.static_rate = ah.static_rate;
  out.is_global = ah.is_global ? 1 : 0;
  out.port_num = ah.port_num;
  return out;
}

AhAttr FromIbvAhAttr(const ibv_ah_attr& ah) {
  AhAttr out;
  out.grh.dgid = FromIbvGid(ah.grh.dgid);
  out.grh.flow_label = ah.grh.flow_label;
  out.grh.sgid_index = ah.grh.sgid_index;
  out.grh.hop_limit = ah.grh.hop_limit;
  out.grh.traffic_class = ah.grh.traffic_class;
  out.dlid = ah.dlid;
  out.sl = ah.sl;
  out.src_path_bits = ah.src_path_bits;
  out.static_rate = ah.static_rate;
  out.is_global = ah.is_global != 0;
  out.port_num = ah.port_num;
  return out;
}

ibv_qp_cap ToIbvQpCap(const QpCap& cap) {
  ibv_qp_cap out{};
  out.max_send_wr = cap.max_send_wr;
  out.max_recv_wr = cap.max_recv_wr;
  out.max_send_sge = cap.max_send_sge;
  out.max_recv_sge = cap.max_recv_sge;
  out.max_inline_data = cap.max_inline_data;
  return out;
}

QpCap FromIbvQpCap(const ibv_qp_cap& cap) {
  QpCap out;
  out.max_send_wr = cap.max_send_wr;
  out.max_recv_wr = cap.max_recv_wr;
  out.max_send_sge = cap.max_send_sge;
  out.max_recv_sge = cap.max_recv_sge;
  out.max_inline_data = cap.max_inline_data;
  return out;
}

ibv_qp_attr ToIbvQpAttr(const QpAttr& a) {
  ibv_qp_attr out{};
  out.qp_state = Cast<ibv_qp_state>(a.qp_state);
  out.cur_qp_state = Cast<ibv_qp_state>(a.cur_qp_state);
  out.path_mtu = Cast<ibv_mtu>(a.path_mtu);
  out.qkey = a.qkey;
  out.rq_psn = a.rq_psn;
  out.sq_psn = a.sq_psn;
  out.dest_qp_num = a.dest_qp_num;
  out.qp_access_flags = Cast<unsigned int>(a.qp_access_flags);
  out.cap = ToIbvQpCap(a.cap);
  out.ah_attr = ToIbvAhAttr(a.ah_attr);
  out.alt_ah_attr = ToIbvAhAttr(a.alt_ah_attr);
  out.pkey_index = a.pkey_index;
  out.alt_pkey_index = a.alt_pkey_index;
  out.en_sqd_async_notify = a.en_sqd_async_notify ? 1 : 0;
  out.sq_draining = a.sq_draining ? 1 : 0;
  out.max_rd_atomic = a.max_rd_atomic;
  out.max_dest_rd_atomic = a.max_dest_rd_atomic;
  out.min_rnr_timer = a.min_rnr_timer;
  out.port_num = a.port_num;
  out.timeout = a.timeout;
  out.retry_cnt = a.retry_cnt;
  out.rnr_retry = a.rnr_retry;
  out.alt_port_num = a.alt_port_num;
  out.alt_timeout = a.alt_timeout;
  out.rate_limit = a.rate_limit;
  return out;
}

QpAttr FromIbvQpAttr(const ibv_qp_attr& a) {
  QpAttr out;
  out.qp_state = Cast<QpState>(a.qp_state);
  out.cur_qp_state = Cast<QpState>(a.cur_qp_state);
  out.path_mtu = Cast<Mtu>(a.path_mtu);
  out.qkey = a.qkey;
  out.rq_psn = a.rq_psn;
  out.sq_psn = a.sq_psn;
  out.dest_qp_num = a.dest_qp_num;
  out.qp_access_flags = a.qp_access_flags;
  out.cap = FromIbvQpCap(a.cap);
  out.ah_attr = FromIbvAhAttr(a.ah_attr);
  out.alt_ah_attr = FromIbvAhAttr(a.alt_ah_attr);
  out.pkey_index = a.pkey_index;
  out.alt_pkey_index = a.alt_pkey_index;
  out.en_sqd_async_notify = a.en_sqd_async_notify != 0;
  out.sq_draining = a.sq_draining != 0;
  out.max_rd_atomic = a.max_rd_atomic;
  out.max_dest_rd_atomic = a.max_dest_rd_atomic;
  out.min_rnr_timer = a.min_rnr_timer;
  out.port_num = a.port_num;
  out.timeout = a.timeout;
  out.retry_cnt = a.retry_cnt;
  out.rnr_retry = a.rnr_retry;
  out.alt_port_num = a.alt_port_num;
  out.alt_timeout = a.alt_timeout;
  out.rate_limit = a.rate_limit;
  return out;
}

DeviceAttr FromIbvDeviceAttr(const ibv_device_attr& a, const std::string& name) {
  DeviceAttr out;
  out.name = name;
  out.max_mr_size = a.max_mr_size;
  out.vendor_id = a.vendor_id;
  out.vendor_part_id = a.vendor_part_id;
  out.max_qp = a.max_qp;
  out.max_qp_wr = a.max_qp_wr;
  out.max_sge = a.max_sge;
  out.max_sge_rd = a.max_sge_rd;
  out.max_cq = a.max_cq;
  out.max_cqe = a.max_cqe;
  out.max_mr = a.max_mr;
  out.max_pd = a.max_pd;
  out.max_ah = a.max_ah;
  out.max_qp_rd_atom = a.max_qp_rd_atom;
  out.max_qp_init_rd_atom = a.max_qp_init_rd_atom;
  out.max_srq = a.max_srq;
  out.max_srq_wr = a.max_srq_wr;
  out.max_srq_sge = a.max_srq_sge;
  out.max_pkeys = a.max_pkeys;
  out.atomic_cap = Cast<AtomicCap>(a.atomic_cap);
  out.phys_port_cnt = a.phys_port_cnt;
  out.page_size_cap = a.page_size_cap;
  out.hw_ver = a.hw_ver;
  out.device_cap_flags = a.device_cap_flags;
  out.max_ee_rd_atom = a.max_ee_rd_atom;
  out.max_res_rd_atom = a.max_res_rd_atom;
  out.max_ee_init_rd_atom = a.max_ee_init_rd_atom;
  out.max_ee = a.max_ee;
  out.max_rdd = a.max_rdd;
  out.max_mw = a.max_mw;
  out.max_raw_ipv6_qp = a.max_raw_ipv6_qp;
  out.max_raw_ethy_qp = a.max_raw_ethy_qp;
  out.max_mcast_grp = a.max_mcast_grp;
  out.max_mcast_qp_attach = a.max_mcast_qp_attach;
  out.max_total_mcast_qp_attach = a.max_total_mcast_qp_attach;
  out.max_fmr = a.max_fmr;
  out.max_map_per_fmr = a.max_map_per_fmr;
  out.local_ca_ack_delay = a.local_ca_ack_delay;
  return out;
}

PortAttr FromIbvPortAttr(const ibv_port_attr& a) {
  PortAttr out;
  out.state = Cast<PortState>(a.state);
  out.max_mtu = Cast<Mtu>(a.max_mtu);
  out.active_mtu = Cast<Mtu>(a.active_mtu);
  out.gid_tbl_len = a.gid_tbl_len;
  out.max_msg_sz = a.max_msg_sz;
  out.pkey_tbl_len = a.pkey_tbl_len;
  out.lid = a.lid;
  out.lmc = a.lmc;
  out.active_width = a.active_width;
  out.active_speed = a.active_speed;
  out.link_layer = Cast<LinkLayer>(a.link_layer);
  out.port_cap_flags = a.port_cap_flags;
  out.port_cap_flags2 = a.port_cap_flags2;
  out.bad_pkey_cntr = a.bad_pkey_cntr;
  out.qkey_viol_cntr = a.qkey_viol_cntr;
  out.sm_lid = a.sm_lid;
  out.sm_sl = a.sm_sl;
  out.max_vl_num = a.max_vl_num;
  out.subnet_timeout = a.subnet_timeout;
  out.init_type_reply = a.init_type_reply;
  out.phys_state = a.phys_state;
  return out;
}

WorkCompletion FromIbvWc(const ibv_wc& wc) {
  WorkCompletion out;
  CopyWcFields(wc, &out);
  // imm_data is __be32 when IBV_WC_WITH_IMM; with IBV_WC_WITH_INV the same field holds the
  // invalidated rkey in host order (ibv_poll_cq(3)).
  if (wc.wc_flags & IBV_WC_WITH_IMM) {
    out.imm_data = ntohl(wc.imm_data);
  } else if (wc.wc_flags & IBV_WC_WITH_INV) {
    out.imm_data = wc.invalidated_rkey;
  }
  return out;
}

ibv_wc ToIbvWc(const WorkCompletion& wc) {
  ibv_wc out{};
  CopyWcFields(wc, &out);
  if (wc.wc_flags & IBV_WC_WITH_IMM) {
    out.imm_data = htonl(wc.imm_data);
  } else if (wc.wc_flags & IBV_WC_WITH_INV) {
    out.invalidated_rkey = wc.imm_data;
  }
  return out;
}

size_t SendChain::IndexOf(const ibv_send_wr* bad) const {
  for (size_t i = 0; i < wrs.size(); ++i) {
    if (&wrs[i] == bad) return i;
  }
  return 0;
}

size_t RecvChain::IndexOf(const ibv_recv_wr* bad) const {
  for (size_t i = 0; i < wrs.size(); ++i) {
    if (&wrs[i] == bad) return i;
  }
  return 0;
}

void BuildSendChain(const std::vector<SendWr>& wrs, QpType qp_type, const std::vector<ibv_ah*>& ahs,
                    SendChain* out, const std::vector<BindTarget>& binds) {
  size_t total_sges = 0;
  for (const SendWr& w : wrs) total_sges += w.sg_list.size();
  out->wrs.assign(wrs.size(), ibv_send_wr{});
  out->sges.clear();
  out->sges.reserve(total_sges);  // sg_list pointers below stay valid
  for (size_t i = 0; i < wrs.size(); ++i) {
    const SendWr& w = wrs[i];
    ibv_send_wr& o = out->wrs[i];
    o.wr_id = w.wr_id;
    o.next = i + 1 < wrs.size() ? &out->wrs[i + 1] : nullptr;
    o.sg_list = w.sg_list.empty() ? nullptr : out->sges.data() + out->sges.size();
    o.num_sge = static_cast<int>(w.sg_list.size());
    for (const Sge& s : w.sg_list) out->sges.push_back(ToIbvSge(s));
    o.opcode = Cast<ibv_wr_opcode>(w.opcode);
    o.send_flags = Cast<unsigned int>(w.send_flags);
    if (w.opcode == WrOpcode::kSendWithInv || w.opcode == WrOpcode::kLocalInv) {
      o.invalidate_rkey = w.imm_data;  // host order, as ibv_post_send(3) documents
    } else {
      o.imm_data = htonl(w.imm_data);
    }
    if (qp_type == QpType::kUd) {
      o.wr.ud.ah = i < ahs.size() ? ahs[i] : nullptr;
      o.wr.ud.remote_qpn = w.remote_qpn;
      o.wr.ud.remote_qkey = w.remote_qkey;
    } else if (IsAtomic(w.opcode)) {
      o.wr.atomic.remote_addr = w.remote_addr;
      o.wr.atomic.compare_add = w.compare_add;
      o.wr.atomic.swap = w.swap;
      o.wr.atomic.rkey = w.rkey;
    } else {
      o.wr.rdma.remote_addr = w.remote_addr;
      o.wr.rdma.rkey = w.rkey;
    }
    if (qp_type == QpType::kXrcSend) o.qp_type.xrc.remote_srqn = w.remote_srqn;
    if (w.opcode == WrOpcode::kBindMw) {
      o.imm_data = 0;  // providers/rxe validate_send_wr: a BIND_MW with imm_data is EINVAL
      o.bind_mw.mw = i < binds.size() ? binds[i].mw : nullptr;
      o.bind_mw.rkey = w.rkey;
      o.bind_mw.bind_info.mr = i < binds.size() ? binds[i].mr : nullptr;
      o.bind_mw.bind_info.addr = w.bind_info.addr;
      o.bind_mw.bind_info.length = w.bind_info.length;
      o.bind_mw.bind_info.mw_access_flags = static_cast<unsigned int>(w.bind_info.mw_access_flags);
    }
  }
}

void BuildRecvChain(const std::vector<RecvWr>& wrs, RecvChain* out) {
  size_t total_sges = 0;
  for (const RecvWr& w : wrs) total_sges += w.sg_list.size();
  out->wrs.assign(wrs.size(), ibv_recv_wr{});
  out->sges.clear();
  out->sges.reserve(total_sges);
  for (size_t i = 0; i < wrs.size(); ++i) {
    ibv_recv_wr& o = out->wrs[i];
    o.wr_id = wrs[i].wr_id;
    o.next = i + 1 < wrs.size() ? &out->wrs[i + 1] : nullptr;
    o.sg_list = wrs[i].sg_list.empty() ? nullptr : out->sges.data() + out->sges.size();
    o.num_sge = static_cast<int>(wrs[i].sg_list.size());
    for (const Sge& s : wrs[i].sg_list) out->sges.push_back(ToIbvSge(s));
  }
}

}  // namespace qptwin::hw
