// libibverbs structs <-> spec/backend.h structs. The enums share their values
// (spec/vocabulary.h, contract 1), so fields are copied; byte orders are converted where
// verbs uses network order (imm_data, pkeys).
#pragma once

#include <infiniband/verbs.h>

#include "spec/backend.h"

namespace qptwin::exec {

AhAttr ToAhAttr(const ibv_ah_attr& a);
ibv_ah_attr ToIbv(const AhAttr& a);
QpCap ToQpCap(const ibv_qp_cap& c);
ibv_qp_cap ToIbv(const QpCap& c);
QpAttr ToQpAttr(const ibv_qp_attr& a);
ibv_qp_attr ToIbv(const QpAttr& a);
ibv_wc ToIbv(const WorkCompletion& w);
Gid ToGid(const ibv_gid& g);
ibv_gid ToIbv(const Gid& g);

// The device attributes as rxe reports them: what spec/backend.h carries from the device,
// the rest (GUIDs, cap flags, counters) as rxe's ibv_devinfo -v shows them (rxe_param.h).
void FillDeviceAttr(const DeviceAttr& d, int index, ibv_device_attr* out);
void FillPortAttr(const PortAttr& p, ibv_port_attr* out);
// qptwin<index>'s node GUID (network order): the interface id of its GID 0, as on rxe.
__be64 NodeGuid(int index);

}  // namespace qptwin::exec
