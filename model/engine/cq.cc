#include "model/engine/cq.h"

namespace qptwin::model::engine {

bool Cq::Push(const WorkCompletion& wc, uint64_t visible_at) {
  if ((sticky_ && error_) || static_cast<int>(entries_.size()) >= depth_) {
    error_ = true;
    return false;
  }
  if (visible_at < last_visible_) visible_at = last_visible_;
  last_visible_ = visible_at;
  entries_.push_back(Entry{wc, visible_at});
  return true;
}

int Cq::Poll(int max, WorkCompletion* out, uint64_t now) {
  int n = 0;
  while (n < max && !entries_.empty() && entries_.front().visible_at <= now) {
    out[n++] = entries_.front().wc;
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
