// Limits and capabilities on a real device: what is refused, with which errno, and what a
// partially refused post list leaves (skipped without a device; run inside tools/rxe-vm/run).
#include <gtest/gtest.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "hw/test_device.h"

namespace qptwin::hw {
namespace {

class VerbsLimitsTest : public DeviceTest {
 protected:
  void SetUp() override {
    DeviceTest::SetUp();
    if (!dev_) return;
    ASSERT_EQ(dev_->QueryDevice(&attr_), 0);
    ASSERT_EQ(CreateRcPair(t_.device, &p_), 0);
  }

  QpInitAttr RcInit() {
    QpInitAttr init;
    init.pd = p_.pd;
    init.send_cq = p_.a.scq;
    init.recv_cq = p_.a.scq;
    init.cap = {4, 4, 1, 1, 0};
    return init;
  }


  DeviceAttr attr_;
  RcPair p_;
};

TEST_F(VerbsLimitsTest, CqDepthOutsideOneToMaxCqeIsEinval) {
  CqHandle cq;
  EXPECT_EQ(dev_->CreateCq(0, ChannelHandle{}, &cq, nullptr), EINVAL);
  EXPECT_EQ(dev_->CreateCq(attr_.max_cqe + 1, ChannelHandle{}, &cq, nullptr), EINVAL);
  int actual = 0;
  ASSERT_EQ(dev_->CreateCq(attr_.max_cqe, ChannelHandle{}, &cq, &actual), 0);
  EXPECT_GE(actual, attr_.max_cqe);
}

TEST_F(VerbsLimitsTest, QpCapsBeyondTheDeviceAreEinval) {
  QpHandle qp;
  QpInitAttr init = RcInit();
  init.cap.max_send_wr = static_cast<uint32_t>(attr_.max_qp_wr) + 1;
  EXPECT_EQ(dev_->CreateQp(init, &qp, nullptr), EINVAL);
  init = RcInit();
  init.cap.max_recv_sge = static_cast<uint32_t>(attr_.max_sge) + 1;
  EXPECT_EQ(dev_->CreateQp(init, &qp, nullptr), EINVAL);
  init = RcInit();
  init.cap.max_inline_data = static_cast<uint32_t>(attr_.max_inline_data) + 1;
  EXPECT_EQ(dev_->CreateQp(init, &qp, nullptr), EINVAL);
  init.cap.max_inline_data = static_cast<uint32_t>(attr_.max_inline_data);
  QpCap granted;
  ASSERT_EQ(dev_->CreateQp(init, &qp, &granted), 0);
  EXPECT_GE(granted.max_inline_data, init.cap.max_inline_data);
}

// rdma-facts R1: rxe creates GSI, RC, UC and UD QPs only.
TEST_F(VerbsLimitsTest, UnsupportedQpTypeIsRefused) {
  if (dev_->Name().rfind("rxe", 0) != 0)
    GTEST_SKIP() << "rxe's type list; device is " << dev_->Name();
  QpInitAttr init = RcInit();
  QpHandle qp;
  init.qp_type = QpType::kUc;
  EXPECT_EQ(dev_->CreateQp(init, &qp, nullptr), 0);
  init.qp_type = QpType::kRawPacket;
  EXPECT_EQ(dev_->CreateQp(init, &qp, nullptr), EOPNOTSUPP);
}

// R1: rxe has no XRC. libibverbs ibv_open_xrcd returns NULL with errno EOPNOTSUPP when the
// provider has no open_xrcd (rdma-core 44 verbs.h); hw/ passes the errno through. A device
// with XRC opens and closes a domain.
TEST_F(VerbsLimitsTest, OpenXrcdIsEopnotsuppOnRxe) {
  XrcdHandle xrcd;
  int ret = dev_->OpenXrcd(&xrcd);
  if (dev_->Name().rfind("rxe", 0) == 0) {
    EXPECT_EQ(ret, EOPNOTSUPP) << std::strerror(ret);
    return;
  }
  ASSERT_EQ(ret, 0) << std::strerror(ret);
  EXPECT_EQ(dev_->CloseXrcd(xrcd), 0);
}

// rdma-facts: rxe refuses attribute bits above DEST_QPN with EOPNOTSUPP.
TEST_F(VerbsLimitsTest, RateLimitBitIsEopnotsuppOnRxe) {
  if (dev_->Name().rfind("rxe", 0) != 0)
    GTEST_SKIP() << "rxe's mask check; device is " << dev_->Name();
  QpAttr a;
  a.qp_state = QpState::kInit;
  a.port_num = 1;
  a.rate_limit = 100;
  EXPECT_EQ(dev_->ModifyQp(p_.a.qp, a,
                           attr::kState | attr::kPkeyIndex | attr::kPort | attr::kAccessFlags |
                               attr::kRateLimit),
            EOPNOTSUPP);
  QpAttr now;
  ASSERT_EQ(dev_->QueryQp(p_.a.qp, &now, nullptr), 0);
  EXPECT_EQ(now.qp_state, QpState::kReset);
}

// rdma-facts R5: too many SGEs is EINVAL at that WR; the WRs before it are posted and run.
TEST_F(VerbsLimitsTest, TooManySgesStopsTheListAtThatWr) {
  ASSERT_EQ(ConnectRcPair(dev_, p_), 0);
  RecvWr r;
  r.wr_id = 1;
  r.sg_list = {p_.b.At(0, 256)};
  size_t bad = 99;
  ASSERT_EQ(dev_->PostRecv(p_.b.qp, {r, r}, &bad), 0);
  SendWr ok;
  ok.wr_id = 10;
  ok.sg_list = {p_.a.At(0, 8)};
  ok.send_flags = send_flag::kSignaled;
  SendWr wide = ok;
  wide.wr_id = 11;
  wide.sg_list.assign(static_cast<size_t>(attr_.max_sge) + 1, p_.a.At(0, 1));
  SendWr after = ok;
  after.wr_id = 12;
  EXPECT_EQ(dev_->PostSend(p_.a.qp, {ok, wide, after}, &bad), EINVAL);
  EXPECT_EQ(bad, 1u);
  std::vector<WorkCompletion> wcs;
  ASSERT_EQ(dev_->WaitForCompletions(p_.a.scq, 1, kWaitNs, &wcs), 0);
  EXPECT_EQ(wcs[0].wr_id, 10u);
  EXPECT_EQ(wcs[0].status, WcStatus::kSuccess);
  EXPECT_EQ(dev_->WaitForCompletions(p_.a.scq, 1, 50'000'000, &wcs), ETIMEDOUT);
  EXPECT_EQ(wcs.size(), 1u);
}

// rxe's providers refuse an empty WR list (wr_list NULL) with EINVAL; hw/ passes that through.
TEST_F(VerbsLimitsTest, EmptyPostListIsEinvalOnRxe) {
  if (dev_->Name().rfind("rxe", 0) != 0)
    GTEST_SKIP() << "rxe's provider; device is " << dev_->Name();
  ASSERT_EQ(ConnectRcPair(dev_, p_), 0);
  size_t bad = 99;
  EXPECT_EQ(dev_->PostSend(p_.a.qp, {}, &bad), EINVAL);
  EXPECT_EQ(bad, 0u);
  bad = 99;
  EXPECT_EQ(dev_->PostRecv(p_.a.qp, {}, &bad), EINVAL);
  EXPECT_EQ(bad, 0u);
}

TEST_F(VerbsLimitsTest, InlineSendCopiesAtPostTime) {
  ASSERT_EQ(ConnectRcPair(dev_, p_), 0);
  RecvWr r;
  r.sg_list = {p_.b.At(0, 64)};
  size_t bad = 0;
  ASSERT_EQ(dev_->PostRecv(p_.b.qp, {r}, &bad), 0);
  uint8_t local[32];
  for (int i = 0; i < 32; ++i) local[i] = static_cast<uint8_t>(0xa0 + i);
  SendWr w;
  // Inline data need not be registered: lkey 0 and a stack buffer (ibv_post_send(3)).
  w.sg_list = {Sge{reinterpret_cast<uint64_t>(local), 32, 0}};
  w.send_flags = send_flag::kInline | send_flag::kSignaled;
  QpInitAttr init;
  QpAttr attr;
  ASSERT_EQ(dev_->QueryQp(p_.a.qp, &attr, &init), 0);
  if (init.cap.max_inline_data < 32) GTEST_SKIP() << "QP granted no inline data";
  ASSERT_EQ(dev_->PostSend(p_.a.qp, {w}, &bad), 0);
  std::memset(local, 0, sizeof local);  // the data was copied by the post
  std::vector<WorkCompletion> wcs;
  ASSERT_EQ(dev_->WaitForCompletions(p_.b.scq, 1, kWaitNs, &wcs), 0);
  EXPECT_EQ(wcs[0].status, WcStatus::kSuccess);
  EXPECT_EQ(wcs[0].byte_len, 32u);
  for (int i = 0; i < 32; ++i) EXPECT_EQ(p_.b.buf[i], 0xa0 + i) << "byte " << i;
}

// What CreateQp grants is what the queues hold: rxe (kernel 6.1) writes the requested
// max_recv_wr back from ibv_create_qp, but its ring holds roundup_pow_of_two(n + 1) - 1
// (4 -> 7) and ibv_query_qp says so; hw/ reports the ring in `actual` and QueryQp.
TEST_F(VerbsLimitsTest, GrantedQueueDepthIsWhatTheQueuesHold) {
  QpInitAttr init = RcInit();  // 4 send and 4 receive WRs requested
  QpHandle qp;
  QpCap actual;
  ASSERT_EQ(dev_->CreateQp(init, &qp, &actual), 0);
  QpAttr attr;
  QpInitAttr queried;
  ASSERT_EQ(dev_->QueryQp(qp, &attr, &queried), 0);
  EXPECT_EQ(queried.cap.max_recv_wr, actual.max_recv_wr);
  EXPECT_EQ(queried.cap.max_send_wr, actual.max_send_wr);
  if (dev_->Name().rfind("rxe", 0) == 0) {
    EXPECT_EQ(actual.max_recv_wr, 7u) << "rxe_queue_init: 2^k - 1 slots";
    EXPECT_EQ(actual.max_send_wr, 7u);
  }
  QpAttr a;
  a.qp_state = QpState::kInit;
  a.port_num = 1;
  a.qp_access_flags = access::kLocalWrite;
  ASSERT_EQ(dev_->ModifyQp(qp, a, attr::kState | attr::kPkeyIndex | attr::kPort |
                                      attr::kAccessFlags), 0);
  RecvWr r;
  r.sg_list = {p_.a.At(0, 16)};
  std::vector<RecvWr> wrs(actual.max_recv_wr + 1, r);
  size_t bad = 0;
  EXPECT_EQ(dev_->PostRecv(qp, wrs, &bad), ENOMEM);
  EXPECT_EQ(bad, actual.max_recv_wr) << "exactly the granted depth fits";
  EXPECT_EQ(dev_->DestroyQp(qp), 0);
}

}  // namespace
}  // namespace qptwin::hw
