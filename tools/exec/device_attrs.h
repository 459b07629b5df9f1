// What the preload reports for a model device in libibverbs structs beyond what
// spec/backend.h carries. The struct conversions both ways (GID, AH, QP cap and attributes,
// WC) are hw/convert.h's, shared with the hw backend.
#pragma once

#include <infiniband/verbs.h>

#include "spec/backend.h"

namespace qptwin::exec {

// The device attributes as rxe reports them: what spec/backend.h carries from the device,
// the rest (GUIDs, cap flags, counters) as rxe's ibv_devinfo -v shows them (rxe_param.h).
void FillDeviceAttr(const DeviceAttr& d, int index, ibv_device_attr* out);
void FillPortAttr(const PortAttr& p, ibv_port_attr* out);
// qptwin<index>'s node GUID (network order): the interface id of its GID 0, as on rxe.
__be64 NodeGuid(int index);

}  // namespace qptwin::exec
