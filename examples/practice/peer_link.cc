#include "examples/practice/peer_link.h"

#include <cerrno>

namespace qptwin::practice {

LocalPeer::LocalPeer(Device* dev, const QpInitAttr& init,
                     std::function<void(Device&, QpHandle)> on_ready)
    : dev_(dev), init_(init), on_ready_(std::move(on_ready)) {}

LocalPeer::~LocalPeer() {
  for (const auto& [qpn, qp] : peers_) (void)dev_->DestroyQp(qp);
}

int LocalPeer::Connect(const ConnectionInfo& local, const ConnectParams& params,
                       ConnectionInfo* remote) {
  if (remote == nullptr) return EINVAL;
  QpHandle qp = PeerOf(local.qp_num);
  bool created = false;
  if (qp) {
    QpAttr reset;
    reset.qp_state = QpState::kReset;  // any state -> RESET is legal (qp_state_table)
    if (int err = dev_->ModifyQp(qp, reset, attr::kState)) return err;
  } else {
    if (int err = dev_->CreateQp(init_, &qp, nullptr)) return err;
    created = true;
  }
  StoredConnection conn;
  conn.params = params;
  conn.params.sq_psn = params.rq_psn;
  conn.params.rq_psn = params.sq_psn;
  conn.remote = local;
  int err = ConnectQp(*dev_, qp, conn);
  if (err == 0) err = dev_->LocalConnectionInfo(qp, remote);
  if (err) {
    if (created) (void)dev_->DestroyQp(qp);
    return err;
  }
  peers_[local.qp_num] = qp;
  ++connects_;
  if (on_ready_) on_ready_(*dev_, qp);
  return 0;
}

void LocalPeer::Disconnect(uint32_t local_qp_num) {
  auto it = peers_.find(local_qp_num);
  if (it == peers_.end()) return;
  (void)dev_->DestroyQp(it->second);
  peers_.erase(it);
}

QpHandle LocalPeer::PeerOf(uint32_t local_qp_num) const {
  auto it = peers_.find(local_qp_num);
  return it == peers_.end() ? QpHandle{} : it->second;
}

}  // namespace qptwin::practice
