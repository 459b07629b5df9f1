#include "tools/practice/qp_connect.h"

#include <cerrno>

#include "spec/qp_state_table.h"

namespace qptwin::practice {

int ConnectAttr(Device& dev, const StoredConnection& conn, QpAttr* out) {
  if (out == nullptr) return EINVAL;
  const ConnectParams& p = conn.params;
  int gid_index = 0;
  if (int err = dev.DefaultGidIndex(p.port_num, &gid_index)) return err;
  QpAttr a;
  a.port_num = p.port_num;
  a.pkey_index = p.pkey_index;
  a.qp_access_flags = p.access;
  a.path_mtu = p.path_mtu;
  a.ah_attr = AddressTo(conn.remote, gid_index);
  a.ah_attr.port_num = p.port_num;
  a.dest_qp_num = conn.remote.qp_num;
  a.rq_psn = p.rq_psn;
  a.sq_psn = p.sq_psn;
  a.timeout = p.timeout;
  a.retry_cnt = p.retry_cnt;
  a.rnr_retry = p.rnr_retry;
  a.min_rnr_timer = p.min_rnr_timer;
  a.max_rd_atomic = p.max_rd_atomic;
  a.max_dest_rd_atomic = p.max_dest_rd_atomic;
  *out = a;
  return 0;
}

int ConnectQp(Device& dev, QpHandle qp, const StoredConnection& conn) {
  QpAttr a;
  if (int err = ConnectAttr(dev, conn, &a)) return err;
  QpAttr cur_attr;
  QpInitAttr init;
  if (int err = dev.QueryQp(qp, &cur_attr, &init)) return err;
  QpState cur = cur_attr.qp_state;
  if (cur != QpState::kReset) return EINVAL;  // as ibv_modify_qp would say for INIT from here
  for (QpState next : {QpState::kInit, QpState::kRtr, QpState::kRts}) {
    a.qp_state = next;
    AttrMask mask = MinimumMask(init.qp_type, cur, next);
    if (mask == 0) return EINVAL;
    if (int err = dev.ModifyQp(qp, a, mask)) return err;
    cur = next;
  }
  return 0;
}

int QueryState(Device& dev, QpHandle qp, QpState* out) {
  if (out == nullptr) return EINVAL;
  QpAttr a;
  QpInitAttr init;
  if (int err = dev.QueryQp(qp, &a, &init)) return err;
  *out = a.qp_state;
  return 0;
}

}  // namespace qptwin::practice
