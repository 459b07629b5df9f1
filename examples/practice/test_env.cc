#include "examples/practice/test_env.h"

#include <cerrno>

namespace qptwin::practice {
namespace {

int OpenSide(Backend& be, const std::string& name, int cq_depth, size_t buf_len, Side* s) {
  std::unique_ptr<Device> dev;
  if (int err = be.OpenDevice(name, &dev)) return err;
  testing::SideOptions o;
  o.cq_depth = cq_depth;
  o.buf_len = buf_len;
  o.one_cq = true;
  o.create_qp = false;
  return testing::CreateSide(std::move(dev), o, PdHandle{}, s);
}

}  // namespace

int MakeModelEnv(TestEnv* env, int cq_depth, size_t buf_len, int devices,
                 const std::string& profile) {
  testing::BackendChoice choice = testing::ModelChoice(profile);
  choice.model.devices = devices;
  std::unique_ptr<Backend> backend = testing::MakeBackend(choice, nullptr);
  if (!backend) return ENODEV;
  return OpenEnv(std::move(backend), "mdev0", devices > 1 ? "mdev1" : "mdev0", env, cq_depth,
                 buf_len);
}

int OpenEnv(std::unique_ptr<Backend> backend, const std::string& local_dev,
            const std::string& peer_dev, TestEnv* env, int cq_depth, size_t buf_len) {
  if (!backend || env == nullptr) return EINVAL;
  env->backend = std::move(backend);
  if (int err = OpenSide(*env->backend, local_dev, cq_depth, buf_len, &env->local)) return err;
  return OpenSide(*env->backend, peer_dev, cq_depth, buf_len, &env->peer);
}

int PeerConnection(Device& dev, QpHandle qp, PeerLink& peer, StoredConnection* conn) {
  ConnectionInfo local;
  if (int err = dev.LocalConnectionInfo(qp, &local)) return err;
  return peer.Connect(local, conn->params, &conn->remote);
}

int ConnectThroughPeer(Device& dev, QpHandle qp, PeerLink& peer, StoredConnection* conn) {
  if (int err = PeerConnection(dev, qp, peer, conn)) return err;
  return ConnectQp(dev, qp, *conn);
}

void EnvTest::SetUp() {
  ASSERT_EQ(MakeModelEnv(&env_, 4096, 1 << 16, 2, profile_), 0);
  peer_ = std::make_unique<LocalPeer>(env_.peer.dev.get(), env_.peer.Init(peer_send_wr_, peer_recv_wr_));
}

QpState EnvTest::StateOf(QpHandle qp) {
  QpState s = QpState::kReset;
  EXPECT_EQ(QueryState(dev(), qp, &s), 0);
  return s;
}

QpHandle EnvTest::ConnectedQp(StoredConnection* conn) {
  QpHandle qp;
  EXPECT_EQ(dev().CreateQp(env_.local.Init(), &qp, nullptr), 0);
  EXPECT_EQ(ConnectThroughPeer(dev(), qp, *peer_, conn), 0);
  return qp;
}

}  // namespace qptwin::practice
