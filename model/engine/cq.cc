#include "model/engine/cq.h"

namespace qptwin::model::engine {

bool Cq::Push(const WorkCompletion& wc) {
  if ((sticky_ && error_) || static_cast<int>(entries_.size()) >= depth_) {
    error_ = true;
    return false;
  }
  entries_.push_back(wc);
  return true;
}

int Cq::Poll(int max, WorkCompletion* out) {
  int n = 0;
  while (n < max && !entries_.empty()) {
    out[n++] = entries_.front();
    entries_.pop_front();
  }
  return n;
}

bool Cq::TakeNotify(bool solicited, bool error) {
  if (!armed_) return false;
  if (solicited_only_ && !solicited && !error) return false;
  armed_ = false;
  return true;
}

}  // namespace qptwin::model::engine
