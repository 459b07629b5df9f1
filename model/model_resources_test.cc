// Resources through the public interface: devices, ports, GIDs, PDs, MRs, CQs, channels,
// AHs, QP creation limits, and bad handles (never a crash, always the verbs errno).
#include "tests/support/support.h"

namespace qptwin::model::testing {
namespace {

using namespace ::qptwin::testing;  // tests/support/support.h

TEST(Resources, BackendListsAndOpensDevices) {
  ModelOptions o;
  o.devices = 3;
  auto be = MakeModelBackend(o);
  ASSERT_NE(be, nullptr);
  EXPECT_EQ(be->Kind(), "model");
  EXPECT_EQ(be->ListDevices(), (std::vector<std::string>{"mdev0", "mdev1", "mdev2"}));
  std::unique_ptr<Device> d;
  EXPECT_EQ(be->OpenDevice("nope", &d), ENODEV);
  ASSERT_EQ(be->OpenDevice("", &d), 0);
  EXPECT_EQ(d->Name(), "mdev0");
  ModelOptions bad;
  bad.profile = "no-such-profile";
  EXPECT_EQ(MakeModelBackend(bad), nullptr);
  EXPECT_EQ(ProfileNames(), (std::vector<std::string>{"rxe", "ibta", "cx6-100g", "cx6-dc"}));
}

TEST(Resources, QueriesReturnTheProfile) {
  auto be = RxeModel();
  std::unique_ptr<Device> d;
  ASSERT_EQ(be->OpenDevice("mdev1", &d), 0);
  DeviceAttr da;
  ASSERT_EQ(d->QueryDevice(&da), 0);
  EXPECT_EQ(da.name, "mdev1");
  EXPECT_EQ(da.max_qp_wr, 1 << 20);  // rxe 6.1: RXE_MAX_QP_WR
  PortAttr pa;
  EXPECT_EQ(d->QueryPort(2, &pa), EINVAL);
  ASSERT_EQ(d->QueryPort(1, &pa), 0);
  EXPECT_EQ(pa.state, PortState::kActive);
  EXPECT_EQ(pa.link_layer, LinkLayer::kEthernet);
  int idx = -1;
  ASSERT_EQ(d->DefaultGidIndex(1, &idx), 0);
  Gid g;
  ASSERT_EQ(d->QueryGid(1, idx, &g), 0);
  EXPECT_EQ(g.raw[10], 0xff);  // ::ffff:10.0.0.2
  EXPECT_EQ(g.raw[15], 2);
  EXPECT_EQ(d->QueryGid(1, pa.gid_tbl_len, &g), EINVAL);
}

TEST(Resources, BadAndForeignHandlesAreEinval) {
  auto be = RxeModel();
  Side a = MakeSide(*be, "mdev0");
  Side b = MakeSide(*be, "mdev1");
  EXPECT_EQ(a.dev->DeallocPd(PdHandle{}), EINVAL);
  EXPECT_EQ(a.dev->DeallocPd(b.pd), EINVAL);
  EXPECT_EQ(a.dev->DestroyCq(b.scq), EINVAL);
  EXPECT_EQ(a.dev->DestroyQp(b.qp), EINVAL);
  EXPECT_EQ(a.dev->DeregMr(b.mr), EINVAL);
  WorkCompletion wc;
  EXPECT_EQ(a.dev->PollCq(b.scq, 1, &wc), -EINVAL);
  QpAttr at;
  EXPECT_EQ(a.dev->ModifyQp(QpHandle{12345}, at, attr::kState), EINVAL);
  size_t bad = 7;
  EXPECT_EQ(a.dev->PostSend(b.qp, {SendWr{}}, &bad), EINVAL);
  EXPECT_EQ(a.dev->PostRecv(QpHandle{}, {RecvWr{}}, &bad), EINVAL);
  std::vector<StateChange> h;
  EXPECT_EQ(a.dev->QpHistory(b.qp, &h), EINVAL);
  ASSERT_EQ(a.dev->DestroyQp(a.qp), 0);
  EXPECT_EQ(a.dev->DestroyQp(a.qp), EINVAL);  // destroyed
  EXPECT_EQ(a.dev->WaitForAsyncEvent(EventType::kQpFatal, a.qp, 10), EINVAL);
}

TEST(Resources, InUseObjectsAreEbusy) {
  auto be = RxeModel();
  Side a = MakeSide(*be, "mdev0");
  EXPECT_EQ(a.dev->DeallocPd(a.pd), EBUSY);
  EXPECT_EQ(a.dev->DestroyCq(a.scq), EBUSY);  // R23
  ASSERT_EQ(a.dev->DestroyQp(a.qp), 0);
  EXPECT_EQ(a.dev->DeallocPd(a.pd), EBUSY);  // the MR still uses it
  ASSERT_EQ(a.dev->DeregMr(a.mr), 0);
  EXPECT_EQ(a.dev->DestroyCq(a.scq), 0);
  EXPECT_EQ(a.dev->DeallocPd(a.pd), 0);
}

TEST(Resources, RegMrChecksAccessFlags) {
  auto be = RxeModel();
  std::unique_ptr<Device> d;
  ASSERT_EQ(be->OpenDevice("", &d), 0);
  PdHandle pd;
  ASSERT_EQ(d->AllocPd(&pd), 0);
  MrHandle mr;
  uint8_t* buf = nullptr;
  uint32_t lkey = 0, rkey = 0;
  EXPECT_EQ(d->RegMr(pd, 64, access::kRemoteWrite, &mr, &buf, &lkey, &rkey), EINVAL);
  EXPECT_EQ(d->RegMr(pd, 64, access::kRemoteAtomic, &mr, &buf, &lkey, &rkey), EINVAL);
  ASSERT_EQ(d->RegMr(pd, 64, access::kRemoteRead, &mr, &buf, &lkey, &rkey), 0);
  EXPECT_NE(buf, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(buf) % 4096, 0u);
}

TEST(Resources, CqDepthAndQpLimits) {
  auto be = RxeModel();
  std::unique_ptr<Device> d;
  ASSERT_EQ(be->OpenDevice("", &d), 0);
  CqHandle cq;
  EXPECT_EQ(d->CreateCq(0, ChannelHandle{}, &cq, nullptr), EINVAL);
  EXPECT_EQ(d->CreateCq(32768, ChannelHandle{}, &cq, nullptr), EINVAL);
  int actual = 0;
  ASSERT_EQ(d->CreateCq(10, ChannelHandle{}, &cq, &actual), 0);
  EXPECT_GE(actual, 10);
  PdHandle pd;
  ASSERT_EQ(d->AllocPd(&pd), 0);
  QpInitAttr init;
  init.pd = pd;
  init.send_cq = init.recv_cq = cq;
  init.cap = QpCap{1, 1, 1, 1, 0};
  QpHandle qp;
  for (QpType t : {QpType::kXrcSend, QpType::kXrcRecv, QpType::kRawPacket, QpType::kSmi}) {
    init.qp_type = t;
    EXPECT_EQ(d->CreateQp(init, &qp, nullptr), EOPNOTSUPP) << ToName(t);  // R1
  }
  init.qp_type = QpType::kRc;
  init.cap.max_send_wr = (1 << 20) + 1;
  EXPECT_EQ(d->CreateQp(init, &qp, nullptr), EINVAL);
  init.cap.max_send_wr = 1;
  init.cap.max_inline_data = 513;
  EXPECT_EQ(d->CreateQp(init, &qp, nullptr), EINVAL);
  init.cap.max_inline_data = 0;
  init.send_cq = CqHandle{999};
  EXPECT_EQ(d->CreateQp(init, &qp, nullptr), EINVAL);
}

TEST(Resources, CompletionChannelWakesOnArmedCq) {
  auto be = RxeModel();
  Side a = MakeSide(*be, "mdev0");
  ChannelHandle ch;
  ASSERT_EQ(a.dev->CreateCompChannel(&ch), 0);
  CqHandle cq;
  ASSERT_EQ(a.dev->CreateCq(8, ch, &cq, nullptr), 0);
  QpInitAttr init;
  init.pd = a.pd;
  init.send_cq = init.recv_cq = cq;
  init.cap = QpCap{4, 4, 1, 1, 0};
  Side s = SiblingQp(a, init);
  ASSERT_EQ(ToInit(s), 0);
  ASSERT_EQ(s.dev->ReqNotifyCq(cq, false), 0);
  QpAttr err;
  err.qp_state = QpState::kErr;
  ASSERT_EQ(s.dev->PostRecv(s.qp, {Rwr(1, {s.At(0, 8)})}, nullptr), 0);
  ASSERT_EQ(s.dev->ModifyQp(s.qp, err, attr::kState), 0);  // the flush CQE wakes us
  CqHandle got;
  ASSERT_EQ(s.dev->GetCqEvent(ch, 1000, &got), 0);
  EXPECT_EQ(got, cq);
  EXPECT_EQ(s.dev->GetCqEvent(ch, 1000, &got), ETIMEDOUT);  // one event per arm
  s.dev->AckCqEvents(cq, 1);
  ASSERT_EQ(s.dev->PostRecv(s.qp, {Rwr(2, {s.At(0, 8)})}, nullptr), 0);
  EXPECT_EQ(s.dev->GetCqEvent(ch, 1000, &got), ETIMEDOUT);  // not re-armed
}

TEST(Resources, HugeWaitsAndRegionsDoNotBreakTheModel) {
  auto be = RxeModel();
  Side a = MakeSide(*be, "mdev0");
  std::vector<WorkCompletion> out;
  // A first wait lets the host finish its control verbs (ControlTiming).
  EXPECT_EQ(a.dev->WaitForCompletions(a.scq, 1, 0, &out), ETIMEDOUT);
  const uint64_t t0 = be->NowNs();
  EXPECT_EQ(a.dev->WaitForCompletions(a.scq, 1, ~uint64_t{0}, &out), ETIMEDOUT);
  be->Advance(~uint64_t{0});
  EXPECT_EQ(be->NowNs() - t0, 2 * (uint64_t{1} << 50));
  MrHandle mr;
  uint8_t* buf = nullptr;
  uint32_t lkey = 0, rkey = 0;
  ASSERT_EQ(a.dev->RegMr(a.pd, size_t{1} << 33, access::kLocalWrite, &mr, &buf, &lkey, &rkey), 0);
  EXPECT_EQ(buf[(size_t{1} << 33) - 1], 0);
  EXPECT_EQ(a.dev->DeregMr(mr), 0);
  EXPECT_EQ(a.dev->RegMr(a.pd, size_t{1} << 40, access::kLocalWrite, &mr, &buf, &lkey, &rkey),
            ENOMEM);
}

TEST(Resources, DeviceDestructorReleasesEverything) {
  auto be = RxeModel();
  for (int i = 0; i < 50; ++i) {
    Side a = MakeSide(*be, "mdev0");
    Side b = MakeSide(*be, "mdev1");
    Connect(a, b);
    ASSERT_EQ(a.dev->PostSend(a.qp, {Wr(1, WrOpcode::kSend, {a.At(0, 8)})}, nullptr), 0);
    be->Advance(1000);  // leave work in flight; the destructors must cope
  }
  be->Advance(10000000);
}

}  // namespace
}  // namespace qptwin::model::testing
