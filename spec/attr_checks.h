// Attribute VALUE checks for ibv_modify_qp, against the device's capabilities, so that the
// model and real devices reject the same values with EINVAL for the same reasons.
// Legality of the mask itself is qp_state_table.h's business.
//
// Sources: drivers/infiniband/sw/rxe/rxe_qp.c rxe_qp_chk_attr(); drivers/infiniband/core/
// verbs.c _ib_modify_qp() (ALT_PATH banned on RoCE, PSNs masked to 24 bits); IBTA 9.7.5.2.8
// (timeout, 5 bits), 9.7.5.2.10 (retry_cnt, 3 bits), 9.7.5.2.8 (rnr_retry), 9.7.5.2.9.
#pragma once

#include <string>
#include <vector>

#include "spec/backend.h"
#include "spec/vocabulary.h"

namespace qptwin {

struct ValueProblem {
  AttrMask bit;        // the attribute that is wrong
  std::string reason;  // e.g. "path_mtu 4096 exceeds the port's max MTU 2048"
};

// `ports[i]` describes port i+1. `current_port` is the QP's port (0 before RESET->INIT);
// PORT in the mask overrides it for the checks that depend on the port.
// With lax (Behaviour::lax_attr_checks, rxe) pkey_index, max_dest_rd_atomic, min_rnr_timer,
// retry_cnt and rnr_retry are not checked.
std::vector<ValueProblem> CheckAttrValues(const QpAttr& attr, AttrMask mask, QpType type,
                                          const DeviceAttr& dev,
                                          const std::vector<PortAttr>& ports,
                                          uint8_t current_port, bool lax = false);

// Create-time checks of ibv_qp_init_attr caps against the device (rxe_qp_chk_init /
// rxe_qp_chk_cap). Empty when fine; each problem maps to EINVAL.
std::vector<std::string> CheckQpCaps(const QpInitAttr& init, const DeviceAttr& dev);

// "reason1; reason2"
std::string JoinProblems(const std::vector<ValueProblem>& problems);

}  // namespace qptwin
