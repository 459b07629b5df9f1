#include "examples/practice/qp_connect.h"

#include <gtest/gtest.h>

#include <cerrno>

#include "examples/practice/peer_link.h"
#include "examples/practice/test_env.h"

namespace qptwin::practice {
namespace {

class QpConnectTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_EQ(MakeModelEnv(&env_), 0); }
  TestEnv env_;
};

TEST_F(QpConnectTest, ConnectQpReachesRtsAndCarriesData) {
  QpHandle qp;
  ASSERT_EQ(env_.local.dev->CreateQp(env_.local.Init(), &qp, nullptr), 0);
  LocalPeer peer(env_.peer.dev.get(), env_.peer.Init());
  StoredConnection conn;
  ConnectionInfo local;
  ASSERT_EQ(env_.local.dev->LocalConnectionInfo(qp, &local), 0);
  ASSERT_EQ(peer.Connect(local, conn.params, &conn.remote), 0);
  ASSERT_EQ(ConnectQp(*env_.local.dev, qp, conn), 0);
  QpState s;
  ASSERT_EQ(QueryState(*env_.local.dev, qp, &s), 0);
  EXPECT_EQ(s, QpState::kRts);
  ASSERT_EQ(QueryState(*env_.peer.dev, peer.PeerOf(local.qp_num), &s), 0);
  EXPECT_EQ(s, QpState::kRts);

  env_.local.buf[0] = 0x5a;
  size_t bad = 0;
  ASSERT_EQ(env_.local.dev->PostSend(qp, {WriteWr(env_.local, env_.peer, 7, 0, 64, true)}, &bad),
            0);
  std::vector<WorkCompletion> wcs;
  ASSERT_EQ(env_.local.dev->WaitForCompletions(env_.local.scq, 1, 100 * kMs, &wcs), 0);
  EXPECT_EQ(wcs[0].status, WcStatus::kSuccess);
  EXPECT_EQ(wcs[0].wr_id, 7u);
  EXPECT_EQ(env_.peer.buf[0], 0x5a);
}

TEST_F(QpConnectTest, ConnectQpFromNonResetIsEinvalAndChangesNothing) {
  QpHandle qp;
  ASSERT_EQ(env_.local.dev->CreateQp(env_.local.Init(), &qp, nullptr), 0);
  StoredConnection conn;
  QpAttr a;
  ASSERT_EQ(ConnectAttr(*env_.local.dev, conn, &a), 0);
  a.qp_state = QpState::kInit;  // RESET->ERR is not in the table: go through INIT
  ASSERT_EQ(env_.local.dev->ModifyQp(
                qp, a, attr::kState | attr::kPkeyIndex | attr::kPort | attr::kAccessFlags),
            0);
  a.qp_state = QpState::kErr;
  ASSERT_EQ(env_.local.dev->ModifyQp(qp, a, attr::kState), 0);
  EXPECT_EQ(ConnectQp(*env_.local.dev, qp, conn), EINVAL);
  QpState s;
  ASSERT_EQ(QueryState(*env_.local.dev, qp, &s), 0);
  EXPECT_EQ(s, QpState::kErr);
}

TEST_F(QpConnectTest, BadHandleIsEinval) {
  StoredConnection conn;
  EXPECT_EQ(ConnectQp(*env_.local.dev, QpHandle{9999}, conn), EINVAL);
  QpState s;
  EXPECT_EQ(QueryState(*env_.local.dev, QpHandle{}, &s), EINVAL);
  EXPECT_EQ(QueryState(*env_.local.dev, QpHandle{}, nullptr), EINVAL);
}

TEST_F(QpConnectTest, PeerReconnectResetsTheSamePeerQp) {
  QpHandle qp;
  ASSERT_EQ(env_.local.dev->CreateQp(env_.local.Init(), &qp, nullptr), 0);
  int ready_calls = 0;
  LocalPeer peer(env_.peer.dev.get(), env_.peer.Init(),
                 [&](Device&, QpHandle) { ++ready_calls; });
  ConnectionInfo local, r1, r2;
  ASSERT_EQ(env_.local.dev->LocalConnectionInfo(qp, &local), 0);
  ASSERT_EQ(peer.Connect(local, ConnectParams{}, &r1), 0);
  ASSERT_EQ(peer.Connect(local, ConnectParams{}, &r2), 0);
  EXPECT_EQ(r1.qp_num, r2.qp_num);
  EXPECT_EQ(peer.size(), 1u);
  EXPECT_EQ(ready_calls, 2);
  peer.Disconnect(local.qp_num);
  EXPECT_FALSE(peer.PeerOf(local.qp_num));
  EXPECT_EQ(peer.size(), 0u);
}

}  // namespace
}  // namespace qptwin::practice
