// BringUp on the model (rxe profile): the model checks every modify with the legality table
// (IsModifyOk: a required attribute missing or a forbidden one present is EINVAL), so each
// type reaching RTS shows the masks sent are exactly legal ones.
#include "spec/bring_up.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <memory>
#include <vector>

#include "model/model_backend.h"

namespace qptwin {
namespace {

class BringUpTest : public ::testing::TestWithParam<QpType> {
 protected:
  void SetUp() override {
    backend_ = model::MakeModelBackend(model::ModelOptions{});
    ASSERT_NE(backend_, nullptr);
    ASSERT_EQ(backend_->OpenDevice("mdev0", &dev_), 0);
    ASSERT_EQ(dev_->AllocPd(&pd_), 0);
    ASSERT_EQ(dev_->CreateCq(64, ChannelHandle{}, &cq_, nullptr), 0);
  }
  QpHandle NewQp(QpType type) {
    QpInitAttr init;
    init.qp_type = type;
    init.pd = pd_;
    init.send_cq = cq_;
    init.recv_cq = cq_;
    init.cap = QpCap{8, 8, 1, 1, 0};
    QpHandle qp;
    EXPECT_EQ(dev_->CreateQp(init, &qp, nullptr), 0);
    return qp;
  }
  ConnectionInfo InfoOf(QpHandle qp) {
    ConnectionInfo info;
    EXPECT_EQ(dev_->LocalConnectionInfo(qp, &info), 0);
    return info;
  }
  QpState StateOf(QpHandle qp) {
    QpAttr a;
    EXPECT_EQ(dev_->QueryQp(qp, &a, nullptr), 0);
    return a.qp_state;
  }
  size_t Changes(QpHandle qp) {
    std::vector<StateChange> h;
    EXPECT_EQ(dev_->QpHistory(qp, &h), 0);
    return h.size();
  }
  std::unique_ptr<Backend> backend_;
  std::unique_ptr<Device> dev_;
  PdHandle pd_;
  CqHandle cq_;
};

TEST_P(BringUpTest, ReachesRtsInThreeModifies) {
  QpHandle a = NewQp(GetParam());
  QpHandle b = NewQp(GetParam());
  size_t before = Changes(a);
  ASSERT_EQ(BringUpTo(*dev_, a, BringUpParams{}, InfoOf(b)), 0);
  EXPECT_EQ(StateOf(a), QpState::kRts);
  EXPECT_EQ(Changes(a), before + 3);  // INIT, RTR, RTS
}

TEST_P(BringUpTest, StopsAtTargetAndContinuesFromWhereTheQpIs) {
  QpHandle a = NewQp(GetParam());
  QpHandle b = NewQp(GetParam());
  ASSERT_EQ(BringUpTo(*dev_, a, BringUpParams{}, InfoOf(b), QpState::kInit), 0);
  EXPECT_EQ(StateOf(a), QpState::kInit);
  ASSERT_EQ(BringUpTo(*dev_, a, BringUpParams{}, InfoOf(b), QpState::kRtr), 0);
  EXPECT_EQ(StateOf(a), QpState::kRtr);
  size_t before = Changes(a);
  EXPECT_EQ(BringUpTo(*dev_, a, BringUpParams{}, InfoOf(b), QpState::kRtr), 0);
  EXPECT_EQ(Changes(a), before);  // already there: no modify
  ASSERT_EQ(BringUpTo(*dev_, a, BringUpParams{}, InfoOf(b)), 0);
  EXPECT_EQ(StateOf(a), QpState::kRts);
}

INSTANTIATE_TEST_SUITE_P(Types, BringUpTest,
                         ::testing::Values(QpType::kRc, QpType::kUc, QpType::kUd),
                         [](const auto& info) { return std::string(ToName(info.param)); });

class BringUpRcTest : public BringUpTest {};

TEST_F(BringUpRcTest, QpPastTargetOrOffThePathIsEinvalAndUntouched) {
  QpHandle a = NewQp(QpType::kRc);
  QpHandle b = NewQp(QpType::kRc);
  ASSERT_EQ(BringUpTo(*dev_, a, BringUpParams{}, InfoOf(b)), 0);
  EXPECT_EQ(BringUpTo(*dev_, a, BringUpParams{}, InfoOf(b), QpState::kInit), EINVAL);
  EXPECT_EQ(BringUpTo(*dev_, b, BringUpParams{}, InfoOf(a), QpState::kSqd), EINVAL);
  EXPECT_EQ(StateOf(b), QpState::kReset);
  QpAttr err;
  err.qp_state = QpState::kErr;
  ASSERT_EQ(dev_->ModifyQp(a, err, attr::kState), 0);
  size_t before = Changes(a);
  EXPECT_EQ(BringUpTo(*dev_, a, BringUpParams{}, InfoOf(b)), EINVAL);
  EXPECT_EQ(Changes(a), before);
}

TEST_F(BringUpRcTest, FailingStepReturnsItsErrnoAndLeavesTheLastStateReached) {
  QpHandle a = NewQp(QpType::kRc);
  QpHandle b = NewQp(QpType::kRc);
  BringUpParams bad_mtu;
  bad_mtu.path_mtu = static_cast<Mtu>(6);  // not an ibv_mtu: RTR is refused
  EXPECT_EQ(BringUpTo(*dev_, a, bad_mtu, InfoOf(b)), EINVAL);
  EXPECT_EQ(StateOf(a), QpState::kInit);
  BringUpParams bad_port;
  bad_port.port_num = 2;  // the model's devices have one port
  EXPECT_EQ(BringUpTo(*dev_, b, bad_port, InfoOf(a)), EINVAL);
  EXPECT_EQ(StateOf(b), QpState::kReset);
  EXPECT_EQ(BringUpTo(*dev_, QpHandle{999}, BringUpParams{}, InfoOf(a)), EINVAL);
}

TEST(BringUpPlan, UdStepsAreIbvModifyQpsMinimumMasks) {
  std::vector<BringUpStep> steps;
  ASSERT_EQ(BringUpPlan(QpType::kUd, QpState::kReset, QpState::kRts, &steps), 0);
  ASSERT_EQ(steps.size(), 3u);  // ibv_modify_qp(3), the UD column
  EXPECT_EQ(steps[0].mask, attr::kState | attr::kPkeyIndex | attr::kPort | attr::kQkey);
  EXPECT_EQ(steps[1].mask, attr::kState);
  EXPECT_EQ(steps[2].mask, attr::kState | attr::kSqPsn);
  EXPECT_EQ(steps[2].from, QpState::kRtr);
  EXPECT_EQ(steps[2].to, QpState::kRts);
  ASSERT_EQ(BringUpPlan(QpType::kUc, QpState::kRtr, QpState::kRtr, &steps), 0);
  EXPECT_TRUE(steps.empty());
  EXPECT_EQ(BringUpPlan(QpType::kRc, QpState::kRts, QpState::kInit, &steps), EINVAL);
  EXPECT_EQ(BringUpPlan(QpType::kRc, QpState::kReset, QpState::kErr, &steps), EINVAL);
}

TEST_F(BringUpRcTest, ModifyOnMinimumMaskRefusesPairsOutsideTheTable) {
  QpHandle a = NewQp(QpType::kRc);
  QpAttr attr;
  ASSERT_EQ(BringUpAttr(*dev_, BringUpParams{}, InfoOf(a), &attr), 0);
  EXPECT_EQ(ModifyOnMinimumMask(*dev_, a, QpType::kRc, QpState::kReset, QpState::kRts, attr),
            EINVAL);
  EXPECT_EQ(StateOf(a), QpState::kReset);
  EXPECT_EQ(ModifyOnMinimumMask(*dev_, a, QpType::kRc, QpState::kReset, QpState::kInit, attr),
            0);
  EXPECT_EQ(StateOf(a), QpState::kInit);
}

TEST_F(BringUpRcTest, ConnectPairCarriesASendAcrossDevices) {
  std::unique_ptr<Device> dev_b;
  ASSERT_EQ(backend_->OpenDevice("mdev1", &dev_b), 0);
  PdHandle pd_b;
  CqHandle cq_b;
  ASSERT_EQ(dev_b->AllocPd(&pd_b), 0);
  ASSERT_EQ(dev_b->CreateCq(64, ChannelHandle{}, &cq_b, nullptr), 0);
  QpInitAttr init;
  init.pd = pd_b;
  init.send_cq = cq_b;
  init.recv_cq = cq_b;
  init.cap = QpCap{8, 8, 1, 1, 0};
  QpHandle b;
  ASSERT_EQ(dev_b->CreateQp(init, &b, nullptr), 0);
  QpHandle a = NewQp(QpType::kRc);
  ASSERT_EQ(ConnectPair(*dev_, a, *dev_b, b, BringUpParams{}), 0);

  MrHandle mr_a, mr_b;
  uint8_t *buf_a = nullptr, *buf_b = nullptr;
  uint32_t lkey_a = 0, lkey_b = 0, rkey = 0;
  ASSERT_EQ(dev_->RegMr(pd_, 64, access::kAll, &mr_a, &buf_a, &lkey_a, &rkey), 0);
  ASSERT_EQ(dev_b->RegMr(pd_b, 64, access::kAll, &mr_b, &buf_b, &lkey_b, &rkey), 0);
  buf_a[0] = 0x5a;
  size_t bad = 0;
  RecvWr r;
  r.wr_id = 2;
  r.sg_list = {Sge{reinterpret_cast<uint64_t>(buf_b), 64, lkey_b}};
  ASSERT_EQ(dev_b->PostRecv(b, {r}, &bad), 0);
  SendWr s;
  s.wr_id = 1;
  s.send_flags = send_flag::kSignaled;
  s.sg_list = {Sge{reinterpret_cast<uint64_t>(buf_a), 1, lkey_a}};
  ASSERT_EQ(dev_->PostSend(a, {s}, &bad), 0);
  std::vector<WorkCompletion> wc;
  ASSERT_EQ(dev_b->WaitForCompletions(cq_b, 1, 1'000'000'000, &wc), 0);
  EXPECT_EQ(wc[0].status, WcStatus::kSuccess);
  EXPECT_EQ(buf_b[0], 0x5a);
}

}  // namespace
}  // namespace qptwin
