#include "examples/practice/qp_connect.h"

#include <cerrno>

namespace qptwin::practice {

int ConnectAttr(Device& dev, const StoredConnection& conn, QpAttr* out) {
  return BringUpAttr(dev, conn.params, conn.remote, out);
}

int ConnectQp(Device& dev, QpHandle qp, const StoredConnection& conn) {
  QpAttr a;
  if (int err = ConnectAttr(dev, conn, &a)) return err;
  QpState cur;
  if (int err = QueryState(dev, qp, &cur)) return err;
  if (cur != QpState::kReset) return EINVAL;  // as ibv_modify_qp would say for INIT from here
  return BringUp(dev, qp, a);
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
