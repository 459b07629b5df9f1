#include "tools/exec/device_attrs.h"

#include <endian.h>

#include <cstdio>
#include <cstring>

namespace qptwin::exec {

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
  out->max_mw = d.max_mw;
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
