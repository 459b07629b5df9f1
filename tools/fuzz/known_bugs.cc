#include "tools/fuzz/known_bugs.h"

namespace qptwin::fuzz {

// No open bugs. Fixed ones, for the record:
//  - model/engine/nic_qp.cc applied R12 (no leaving SQD while draining) to a modify without
//    IBV_QP_STATE; rxe's __qp_chk_state checks `mask & IB_QP_STATE` first
//    (regression: FuzzFindings.ModifyWithoutStateWhileSqdDrainingSucceeds).
const char* KnownOpenBug(const std::string& failure) {
  (void)failure;
  return nullptr;
}

}  // namespace qptwin::fuzz
