// The support library on the model: Sides connect and move data, the backend choice names
// what it makes, an unknown profile is reported, hw without a device is skipped.
#include "tests/support/support.h"

#include <cerrno>

namespace qptwin::testing {
namespace {

TEST(Support, ModelChoiceMakesTheNamedProfile) {
  BackendChoice c = ModelChoice("ibta");
  EXPECT_EQ(c.name, "model_ibta");
  std::string why;
  auto be = MakeBackend(c, &why);
  ASSERT_NE(be, nullptr) << why;
  EXPECT_EQ(be->Kind(), "model");
}

TEST(Support, UnknownProfileIsReportedWithItsName) {
  std::string why;
  EXPECT_EQ(MakeBackend(ModelChoice("no-such-profile"), &why), nullptr);
  EXPECT_EQ(why, "unknown model profile no-such-profile");
}

TEST(Support, ConnectedSidesCarryAWriteAndASend) {
  auto [be, a, b] = ConnectedSides(RxeModel());
  EXPECT_EQ(StateOf(a), QpState::kRts);
  EXPECT_EQ(StateOf(b), QpState::kRts);
  a.buf[0] = 0x77;
  a.buf[8] = 0x66;
  size_t bad = 0;
  ASSERT_EQ(a.dev->PostSend(a.qp, {WriteWr(a, b, 1, 0, 1)}, &bad), 0);
  ASSERT_EQ(b.dev->PostRecv(b.qp, {Rwr(2, {b.At(16, 8)})}, &bad), 0);
  ASSERT_EQ(a.dev->PostSend(a.qp, {Wr(3, WrOpcode::kSend, {a.At(8, 1)})}, &bad), 0);
  auto swc = Wait(a, a.scq, 2);
  auto rwc = Wait(b, b.rcq, 1);
  ASSERT_EQ(swc.size(), 2u);
  EXPECT_EQ(swc[1].wr_id, 3u);
  EXPECT_EQ(b.buf[0], 0x77);
  EXPECT_EQ(b.buf[16], 0x66);
}

TEST(Support, StepsUseTheTablesMasksPerType) {
  auto be = RxeModel();
  for (QpType type : {QpType::kRc, QpType::kUc, QpType::kUd}) {
    SideOptions o;
    o.type = type;
    Side a = MakeSide(*be, "mdev0", o);
    Side b = MakeSide(*be, "mdev1", o);
    EXPECT_EQ(ToRtr(a, b), EINVAL) << ToName(type);  // from RESET: not a transition
    ASSERT_EQ(ToInit(a), 0) << ToName(type);
    ASSERT_EQ(ToRtr(a, b), 0) << ToName(type);
    ASSERT_EQ(ToRts(a), 0) << ToName(type);
    EXPECT_EQ(StateOf(a), QpState::kRts) << ToName(type);
  }
}

TEST(Support, OneCqSideWithoutQp) {
  auto be = RxeModel();
  SideOptions o;
  o.one_cq = true;
  o.create_qp = false;
  Side s = MakeSide(*be, "mdev0", o);
  EXPECT_EQ(s.scq, s.rcq);
  EXPECT_FALSE(s.qp);
  QpHandle qp;
  EXPECT_EQ(s.dev->CreateQp(s.Init(), &qp, nullptr), 0);
}

TEST(Support, HwWithoutDeviceIsSkippedWithTheReason) {
  std::string why;
  auto be = MakeBackend(HwChoice(), &why);
  if (be) GTEST_SKIP() << "this machine has an RDMA device";
  EXPECT_NE(why.find("no RDMA device"), std::string::npos);
}

}  // namespace
}  // namespace qptwin::testing
