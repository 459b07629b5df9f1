#include "tools/exec/convert.h"

#include <arpa/inet.h>
#include <endian.h>

#include <cstdio>
#include <cstring>

namespace qptwin::exec {

Gid ToGid(const ibv_gid& g) {
  Gid out;
  std::memcpy(out.raw.data(), g.raw, 16);
  return out;
}

ibv_gid ToIbv(const Gid& g) {
  ibv_gid out;
  std::memcpy(out.raw, g.raw.data(), 16);
  return out;
}

AhAttr ToAhAttr(const ibv_ah_attr& a) {
  AhAttr o;
  o.grh.dgid = ToGid(a.grh.dgid);
  o.grh.flow_label = a.grh.flow_label;
  o.grh.sgid_index = a.grh.sgid_index;
  o.grh.hop_limit = a.grh.hop_limit;
  o.grh.traffic_class = a.grh.traffic_class;
  o.dlid = a.dlid;
  o.sl = a.sl;
  o.src_path_bits = a.src_path_bits;
  o.static_rate = a.static_rate;
  o.is_global = a.is_global != 0;
  o.port_num = a.port_num;
  return o;
}

ibv_ah_attr ToIbv(const AhAttr& a) {
  ibv_ah_attr o{};
  o.grh.dgid = ToIbv(a.grh.dgid);
  o.grh.flow_label = a.grh.flow_label;
  o.grh.sgid_index = a.grh.sgid_index;
  o.grh.hop_limit = a.grh.hop_limit;
  o.grh.traffic_class = a.grh.traffic_class;
  o.dlid = a.dlid;
  o.sl = a.sl;
  o.src_path_bits = a.src_path_bits;
  o.static_rate = a.static_rate;
  o.is_global = a.is_global ? 1 : 0;
  o.port_num = a.port_num;
  return o;
}

QpCap ToQpCap(const ibv_qp_cap& c) {
  return QpCap{c.max_send_wr, c.max_recv_wr, c.max_send_sge, c.max_recv_sge, c.max_inline_data};
}

ibv_qp_cap ToIbv(const QpCap& c) {
  return ibv_qp_cap{c.max_send_wr, c.max_recv_wr, c.max_send_sge, c.max_recv_sge,
                    c.max_inline_data};
}

QpAttr ToQpAttr(const ibv_qp_attr& a) {
  QpAttr o;
  o.qp_state = static_cast<QpState>(a.qp_state);
  o.cur_qp_state = static_cast<QpState>(a.cur_qp_state);
  o.path_mtu = static_cast<Mtu>(a.path_mtu);
  o.qkey = a.qkey;
  o.rq_psn = a.rq_psn;
  o.sq_psn = a.sq_psn;
  o.dest_qp_num = a.dest_qp_num;
  o.qp_access_flags = static_cast<AccessFlags>(a.qp_access_flags);
  o.cap = ToQpCap(a.cap);
  o.ah_attr = ToAhAttr(a.ah_attr);
  o.alt_ah_attr = ToAhAttr(a.alt_ah_attr);
  o.pkey_index = a.pkey_index;
  o.alt_pkey_index = a.alt_pkey_index;
  o.en_sqd_async_notify = a.en_sqd_async_notify != 0;
  o.sq_draining = a.sq_draining != 0;
  o.max_rd_atomic = a.max_rd_atomic;
  o.max_dest_rd_atomic = a.max_dest_rd_atomic;
  o.min_rnr_timer = a.min_rnr_timer;
  o.port_num = a.port_num;
  o.timeout = a.timeout;
  o.retry_cnt = a.retry_cnt;
  o.rnr_retry = a.rnr_retry;
  o.alt_port_num = a.alt_port_num;
  o.alt_timeout = a.alt_timeout;
  o.rate_limit = a.rate_limit;
  return o;
}

ibv_qp_attr ToIbv(const QpAttr& a) {
  ibv_qp_attr o{};
  o.qp_state = static_cast<ibv_qp_state>(a.qp_state);
  o.cur_qp_state = static_cast<ibv_qp_state>(a.cur_qp_state);
  o.path_mtu = static_cast<ibv_mtu>(a.path_mtu);
  o.path_mig_state = IBV_MIG_MIGRATED;
  o.qkey = a.qkey;
  o.rq_psn = a.rq_psn;
  o.sq_psn = a.sq_psn;
  o.dest_qp_num = a.dest_qp_num;
  o.qp_access_flags = static_cast<unsigned>(a.qp_access_flags);
  o.cap = ToIbv(a.cap);
  o.ah_attr = ToIbv(a.ah_attr);
  o.alt_ah_attr = ToIbv(a.alt_ah_attr);
  o.pkey_index = a.pkey_index;
  o.alt_pkey_index = a.alt_pkey_index;
  o.en_sqd_async_notify = a.en_sqd_async_notify;
  o.sq_draining = a.sq_draining;
  o.max_rd_atomic = a.max_rd_atomic;
  o.max_dest_rd_atomic = a.max_dest_rd_atomic;
  o.min_rnr_timer = a.min_rnr_timer;
  o.port_num = a.port_num;
  o.timeout = a.timeout;
  o.retry_cnt = a.retry_cnt;
  o.rnr_retry = a.rnr_retry;
  o.alt_port_num = a.alt_port_num;
  o.alt_timeout = a.alt_timeout;
  o.rate_limit = a.rate_limit;
  return o;
}

ibv_wc ToIbv(const WorkCompletion& w) {
  ibv_wc o{};
  o.wr_id = w.wr_id;
  o.status = static_cast<ibv_wc_status>(w.status);
  o.opcode = static_cast<ibv_wc_opcode>(w.opcode);
  o.vendor_err = w.vendor_err;
  o.byte_len = w.byte_len;
  o.imm_data = htonl(w.imm_data);
  o.qp_num = w.qp_num;
  o.src_qp = w.src_qp;
  o.wc_flags = w.wc_flags;
  o.pkey_index = w.pkey_index;
  o.slid = w.slid;
  o.sl = w.sl;
  o.dlid_path_bits = w.dlid_path_bits;
  return o;
}

__be64 NodeGuid(int index) {
  // The interface id of the model's GID 0 (fe80::200:0:0:<index+1>, model/engine/nic.cc).
  const uint64_t guid = 0x0200000000000000ull | uint64_t(index + 1);
  return htobe64(guid);
}

void FillDeviceAttr(const DeviceAttr& d, int index, ibv_device_attr* out) {
  std::memset(out, 0, sizeof(*out));
  std::snprintf(out->fw_ver, sizeof(out->fw_ver), "0.0.0");
  out->node_guid = NodeGuid(index);
  out->sys_image_guid = NodeGuid(index);
  out->max_mr_size = d.max_mr_size;
  out->page_size_cap = 0xfffff000;  // rxe_param.h RXE_PAGE_SIZE_CAP
  out->vendor_id = d.vendor_id;
  out->vendor_part_id = d.vendor_part_id;
  out->hw_ver = 0;
  out->max_qp = d.max_qp;
  out->max_qp_wr = d.max_qp_wr;
  // rxe_param.h RXE_DEVICE_CAP_FLAGS as rxe0 reports them (ibv_devinfo -v: 0x01223c76).
  out->device_cap_flags = 0x01223c76;
  out->max_sge = d.max_sge;
  out->max_sge_rd = d.max_sge_rd;
  out->max_cq = d.max_cq;
  out->max_cqe = d.max_cqe;
  out->max_mr = d.max_mr;
  out->max_pd = d.max_pd;
  out->max_qp_rd_atom = d.max_qp_rd_atom;
  out->max_res_rd_atom = 258048;  // rxe_param.h RXE_MAX_RES_RD_ATOM (0x3f000)
  out->max_qp_init_rd_atom = d.max_qp_init_rd_atom;
  out->atomic_cap = static_cast<ibv_atomic_cap>(d.atomic_cap);
  out->max_mw = d.max_mr;
  out->max_mcast_grp = 8192;
  out->max_mcast_qp_attach = 56;
  out->max_total_mcast_qp_attach = 458752;
  out->max_ah = d.max_ah;
  out->max_srq = d.max_srq;
  out->max_srq_wr = d.max_srq_wr;
  out->max_srq_sge = d.max_srq_sge;
  out->max_pkeys = d.max_pkeys;
  out->local_ca_ack_delay = 15;
  out->phys_port_cnt = d.phys_port_cnt;
}

void FillPortAttr(const PortAttr& p, ibv_port_attr* out) {
  std::memset(out, 0, sizeof(*out));
  out->state = static_cast<ibv_port_state>(p.state);
  out->max_mtu = static_cast<ibv_mtu>(p.max_mtu);
  out->active_mtu = static_cast<ibv_mtu>(p.active_mtu);
  out->gid_tbl_len = p.gid_tbl_len;
  out->port_cap_flags = IBV_PORT_CM_SUP;  // rxe: 0x00010000
  out->max_msg_sz = p.max_msg_sz;
  out->pkey_tbl_len = p.pkey_tbl_len;
  out->lid = p.lid;
  out->lmc = p.lmc;
  out->max_vl_num = 1;
  out->active_width = p.active_width;
  out->active_speed = p.active_speed;
  out->phys_state = p.state == PortState::kActive ? 5 : 3;  // LINK_UP / DISABLED
  out->link_layer = static_cast<uint8_t>(p.link_layer);
}

}  // namespace qptwin::exec
