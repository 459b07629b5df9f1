#include "examples/practice/safe_qp.h"

#include <cerrno>
#include <chrono>

#include "spec/bring_up.h"

namespace qptwin::practice {

void DeviceLock::ServePending() {
  for (;;) {
    std::function<void()> call;
    {
      std::lock_guard<std::mutex> q(queue_mu_);
      if (queue_.empty()) return;
      call = std::move(queue_.front());
      queue_.pop_front();
    }
    std::lock_guard<std::mutex> hold(mu_);
    call();
  }
}

void DeviceLock::ServeUntil(const std::function<bool()>& done) {
  while (!done()) {
    ServePending();
    std::unique_lock<std::mutex> q(queue_mu_);
    queue_cv_.wait_for(q, std::chrono::milliseconds(1), [&] { return !queue_.empty(); });
  }
  ServePending();
}

SafeQp::SafeQp(Device* dev, std::shared_ptr<DeviceLock> lock, QpHandle qp,
               StateHistory* history)
    : dev_(dev), lock_(std::move(lock)), qp_(qp), history_(history), state_(QpState::kReset) {
  (void)lock_->Run([&] { return ReadStateLocked(); });
}

int SafeQp::ReadStateLocked() {
  QpState s = QpState::kReset;
  int err = QueryState(*dev_, qp_, &s);
  if (err == 0) state_.store(s, std::memory_order_release);
  return err;
}

int SafeQp::ModifyLocked(const QpAttr& attr, AttrMask mask) {
  int err = history_ ? history_->Modify(qp_, attr, mask) : dev_->ModifyQp(qp_, attr, mask);
  if (err) return err;
  return ReadStateLocked();
}

int SafeQp::Modify(const QpAttr& attr, AttrMask mask) {
  std::lock_guard<std::mutex> state(state_mu_);
  return lock_->Run([&] { return ModifyLocked(attr, mask); });
}

int SafeQp::ModifySequence(const std::vector<std::pair<QpAttr, AttrMask>>& steps) {
  std::lock_guard<std::mutex> state(state_mu_);
  for (const auto& [attr, mask] : steps) {
    // The device lock is dropped between steps: other QPs' work goes on meanwhile.
    if (int err = lock_->Run([&] { return ModifyLocked(attr, mask); })) return err;
  }
  return 0;
}

int SafeQp::Connect(const StoredConnection& conn) {
  std::lock_guard<std::mutex> state(state_mu_);
  QpAttr a;
  QpAttr cur_attr;
  QpInitAttr init;
  int err = lock_->Run([&] {
    if (int e = ConnectAttr(*dev_, conn, &a)) return e;
    return dev_->QueryQp(qp_, &cur_attr, &init);
  });
  if (err) return err;
  if (cur_attr.qp_state != QpState::kReset) return EINVAL;
  std::vector<BringUpStep> steps;
  if (int e = BringUpPlan(init.qp_type, QpState::kReset, QpState::kRts, &steps)) return e;
  for (const BringUpStep& step : steps) {
    a.qp_state = step.to;
    if (int e = lock_->Run([&] { return ModifyLocked(a, step.mask); })) return e;
  }
  return 0;
}

int SafeQp::Query(QpAttr* attr, QpInitAttr* init) {
  std::lock_guard<std::mutex> state(state_mu_);
  return lock_->Run([&] { return dev_->QueryQp(qp_, attr, init); });
}

int SafeQp::Refresh() {
  std::lock_guard<std::mutex> state(state_mu_);
  return lock_->Run([&] { return ReadStateLocked(); });
}

int SafeQp::PostSend(const std::vector<SendWr>& wrs, size_t* bad_wr) {
  return lock_->Run([&] { return dev_->PostSend(qp_, wrs, bad_wr); });
}

int SafeQp::PostRecv(const std::vector<RecvWr>& wrs, size_t* bad_wr) {
  return lock_->Run([&] { return dev_->PostRecv(qp_, wrs, bad_wr); });
}

}  // namespace qptwin::practice
