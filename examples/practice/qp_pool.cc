#include "examples/practice/qp_pool.h"

#include <cerrno>

namespace qptwin::practice {

QpPool::QpPool(Backend* backend, Device* dev, PeerLink* peer, QpPoolOptions opts)
    : backend_(backend), dev_(dev), peer_(peer), opts_(std::move(opts)) {}

QpPool::~QpPool() {
  for (const PooledQp& q : idle_) Destroy(q);
  for (const auto& [id, q] : in_use_) Destroy(q);
}

int QpPool::Warm(size_t n) {
  while (idle_.size() < n && size() < opts_.capacity) {
    PooledQp q;
    if (int err = CreateConnected(&q)) return err;
    idle_.push_back(q);
  }
  return 0;
}

int QpPool::Acquire(PooledQp* out) {
  if (out == nullptr) return EINVAL;
  while (!idle_.empty()) {
    PooledQp q = idle_.front();
    idle_.pop_front();
    QpState s = QpState::kReset;
    int err = QueryState(*dev_, q.qp, &s);
    if (err) {
      Destroy(q);
    } else if (s != QpState::kRts) {
      err = RecoverOrDestroy(&q, Outstanding{}, nullptr);
    }
    if (err) continue;  // given up: try the next idle QP
    ++stats_.hits;
    in_use_[q.qp.id] = q;
    *out = q;
    return 0;
  }
  ++stats_.misses;
  if (size() >= opts_.capacity) return EAGAIN;
  PooledQp q;
  if (int err = CreateConnected(&q)) return err;
  in_use_[q.qp.id] = q;
  *out = q;
  return 0;
}

int QpPool::Release(const PooledQp& qp, const Outstanding& outstanding,
                    RecoveryResult* drained) {
  auto it = in_use_.find(qp.qp.id);
  if (it == in_use_.end()) return EINVAL;
  PooledQp q = it->second;
  in_use_.erase(it);
  QpState s = QpState::kReset;
  int err = QueryState(*dev_, q.qp, &s);
  if (err) {
    Destroy(q);
    return err;
  }
  if (s != QpState::kRts) {
    err = RecoverOrDestroy(&q, outstanding, drained);
    if (err == ENOENT) return 0;  // destroyed by policy (recover_errored == false)
    if (err) return err;
  }
  idle_.push_back(q);
  return 0;
}

int QpPool::CreateConnected(PooledQp* out) {
  PooledQp q;
  q.conn.params = opts_.params;
  if (int err = dev_->CreateQp(opts_.init, &q.qp, nullptr)) return err;
  ConnectionInfo local;
  int err = dev_->LocalConnectionInfo(q.qp, &local);
  q.qp_num = local.qp_num;
  if (err == 0) err = peer_->Connect(local, q.conn.params, &q.conn.remote);
  if (err == 0) err = ConnectQp(*dev_, q.qp, q.conn);
  if (err) {
    Destroy(q);
    return err;
  }
  ++stats_.creations;
  *out = q;
  return 0;
}

int QpPool::RecoverOrDestroy(PooledQp* q, const Outstanding& outstanding,
                             RecoveryResult* drained) {
  if (!opts_.recover_errored) {
    Destroy(*q);  // the configured policy, not a failure
    return ENOENT;
  }
  int err = 0;
  {
    RecoveryOptions ro;
    ro.mode = opts_.recovery;
    ro.drain_timeout_ns = opts_.drain_timeout_ns;
    ro.outstanding = outstanding;
    RecoveryResult local_result;
    RecoveryResult* r = drained ? drained : &local_result;
    err = RecoverQp(*backend_, *dev_, q->qp, &q->conn, peer_, ro, r);
    if (err == 0) {
      q->qp = r->qp;
      q->qp_num = r->qp_num;
      ++stats_.recoveries;
      return 0;
    }
    if (r->qp) q->qp = r->qp;  // recreate may have replaced the QP before failing
    if (r->qp_num) q->qp_num = r->qp_num;
  }
  Destroy(*q);
  return err;
}

void QpPool::Destroy(const PooledQp& q) {
  (void)dev_->DestroyQp(q.qp);
  if (q.qp_num) peer_->Disconnect(q.qp_num);
  ++stats_.destroyed;
}

}  // namespace qptwin::practice
