#include "spec/bring_up.h"

#include <cerrno>

#include "spec/qp_state_table.h"

namespace qptwin {
namespace {

// RESET -> INIT -> RTR -> RTS: the position of `s` on the bring-up path, -1 when off it.
int PathIndex(QpState s) {
  switch (s) {
    case QpState::kReset: return 0;
    case QpState::kInit: return 1;
    case QpState::kRtr: return 2;
    case QpState::kRts: return 3;
    default: return -1;
  }
}

constexpr QpState kPath[] = {QpState::kReset, QpState::kInit, QpState::kRtr, QpState::kRts};

}  // namespace

int BringUpAttr(Device& dev, const BringUpParams& p, const ConnectionInfo& peer, QpAttr* out) {
  if (out == nullptr) return EINVAL;
  int gid_index = 0;
  if (int err = dev.DefaultGidIndex(p.port_num, &gid_index)) return err;
  QpAttr a;
  a.port_num = p.port_num;
  a.pkey_index = p.pkey_index;
  a.qp_access_flags = p.access;
  a.qkey = p.qkey;
  a.path_mtu = p.path_mtu;
  a.ah_attr = AddressTo(peer, gid_index);
  a.ah_attr.port_num = p.port_num;
  a.dest_qp_num = peer.qp_num;
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

int ModifyOnMinimumMask(Device& dev, QpHandle qp, QpType type, QpState cur, QpState next,
                        QpAttr attr) {
  AttrMask mask = MinimumMask(type, cur, next);
  if (mask == 0) return EINVAL;  // not a transition of the table
  attr.qp_state = next;
  return dev.ModifyQp(qp, attr, mask);
}

int BringUpPlan(QpType type, QpState cur, QpState target, std::vector<BringUpStep>* out) {
  if (out == nullptr) return EINVAL;
  out->clear();
  int from = PathIndex(cur);
  int to = PathIndex(target);
  if (from < 0 || to < 0 || from > to) return EINVAL;
  for (int i = from; i < to; ++i) {
    AttrMask mask = MinimumMask(type, kPath[i], kPath[i + 1]);
    if (mask == 0) return EINVAL;  // a type the table does not list
    out->push_back({kPath[i], kPath[i + 1], mask});
  }
  return 0;
}

int BringUp(Device& dev, QpHandle qp, const QpAttr& attr, QpState target) {
  QpAttr now;
  QpInitAttr init;
  if (int err = dev.QueryQp(qp, &now, &init)) return err;
  std::vector<BringUpStep> steps;
  if (int err = BringUpPlan(init.qp_type, now.qp_state, target, &steps)) return err;
  for (const BringUpStep& step : steps) {
    QpAttr a = attr;
    a.qp_state = step.to;
    if (int err = dev.ModifyQp(qp, a, step.mask)) return err;
  }
  return 0;
}

int BringUpTo(Device& dev, QpHandle qp, const BringUpParams& params, const ConnectionInfo& peer,
              QpState target) {
  QpAttr a;
  if (int err = BringUpAttr(dev, params, peer, &a)) return err;
  return BringUp(dev, qp, a, target);
}

int ConnectPair(Device& dev_a, QpHandle a, Device& dev_b, QpHandle b,
                const BringUpParams& params) {
  ConnectionInfo info_a, info_b;
  if (int err = dev_a.LocalConnectionInfo(a, &info_a)) return err;
  if (int err = dev_b.LocalConnectionInfo(b, &info_b)) return err;
  if (int err = BringUpTo(dev_a, a, params, info_b)) return err;
  return BringUpTo(dev_b, b, params, info_a);
}

}  // namespace qptwin
