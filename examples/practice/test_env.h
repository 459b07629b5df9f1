// Test and bench support: a Backend with a "local" and a "peer" side (two Device objects,
// of two devices or of the same one), each a tests/support Side without a QP: a PD, one CQ
// (Side::scq == Side::rcq) and one registered buffer. Testonly; not part of the library.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "spec/backend.h"
#include "tests/support/support.h"
#include "examples/practice/peer_link.h"
#include "examples/practice/qp_connect.h"

namespace qptwin::practice {

using ::qptwin::testing::kMs;
using ::qptwin::testing::Rwr;
using ::qptwin::testing::Side;
using ::qptwin::testing::Wr;
using ::qptwin::testing::WriteWr;

struct TestEnv {
  std::unique_ptr<Backend> backend;
  Side local;
  Side peer;
};

// Takes `backend` and opens `local_dev` and `peer_dev` ("" = the first device; the same
// name twice gives two Device objects of one device). 0 or errno.
[[nodiscard]] int OpenEnv(std::unique_ptr<Backend> backend, const std::string& local_dev,
                          const std::string& peer_dev, TestEnv* env, int cq_depth = 4096,
                          size_t buf_len = 1 << 16);

// A model Backend. 0 or errno. With devices == 1 both sides open mdev0.
[[nodiscard]] int MakeModelEnv(TestEnv* env, int cq_depth = 4096, size_t buf_len = 1 << 16,
                               int devices = 2, const std::string& profile = "rxe");

// The connection of `qp` through `peer` (its LocalConnectionInfo, then peer.Connect with
// conn->params): fills conn->remote. 0 or errno.
[[nodiscard]] int PeerConnection(Device& dev, QpHandle qp, PeerLink& peer,
                                 StoredConnection* conn);
// PeerConnection, then ConnectQp: `qp` in RTS towards its peer QP. 0 or errno.
[[nodiscard]] int ConnectThroughPeer(Device& dev, QpHandle qp, PeerLink& peer,
                                     StoredConnection* conn);

// A fixture over MakeModelEnv(): env_, a LocalPeer peer_ serving env_.peer (peer QPs from
// env_.peer.Init(peer_send_wr_, peer_recv_wr_)), and the helpers the practice tests share.
class EnvTest : public ::testing::Test {
 protected:
  void SetUp() override;
  Device& dev() { return *env_.local.dev; }
  QpState StateOf(QpHandle qp);
  // A new RC QP on env_.local (Side::Init()) connected through peer_ into *conn.
  QpHandle ConnectedQp(StoredConnection* conn);

  uint32_t peer_send_wr_ = 64;  // set before EnvTest::SetUp() to change
  uint32_t peer_recv_wr_ = 64;
  std::string profile_ = "rxe";  // the model profile; set before EnvTest::SetUp() to change
  TestEnv env_;
  std::unique_ptr<LocalPeer> peer_;
};

}  // namespace qptwin::practice
