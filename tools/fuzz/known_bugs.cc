#include "tools/fuzz/known_bugs.h"

#include <string_view>

namespace qptwin::fuzz {
namespace {

bool MaskHasState(std::string_view mask) {
  for (size_t start = 0; start <= mask.size();) {
    size_t bar = mask.find('|', start);
    if (bar == std::string_view::npos) bar = mask.size();
    if (mask.substr(start, bar - start) == "STATE") return true;
    start = bar + 1;
  }
  return false;
}

// "modify b SQD->SQD mask <MASK>: got EINVAL, expected ok (...)" with STATE not in MASK.
bool IsSqdDrainingWithoutState(std::string_view f) {
  constexpr std::string_view kPair = " SQD->SQD mask ";
  constexpr std::string_view kVerdict = ": got EINVAL, expected ok";
  const size_t pair = f.find(kPair);
  if (f.rfind("modify ", 0) != 0 || pair == std::string_view::npos) return false;
  const size_t mask = pair + kPair.size();
  const size_t verdict = f.find(kVerdict, mask);
  return verdict != std::string_view::npos && !MaskHasState(f.substr(mask, verdict - mask));
}

}  // namespace

const char* KnownOpenBug(const std::string& failure) {
  if (IsSqdDrainingWithoutState(failure)) {
    return "model/engine/nic_qp.cc applies R12 (no leaving SQD while draining) to a modify "
           "without IBV_QP_STATE; rxe's __qp_chk_state checks `mask & IB_QP_STATE` first";
  }
  return nullptr;
}

}  // namespace qptwin::fuzz
