// ibv_rereg_mr on every backend: libibverbs' input checks everywhere; where the device
// re-registers (IBTA 11.2.8.3), the new access, translation and PD are the ones used; where
// it does not (Behaviour::rereg_mr_errno, rxe: EOPNOTSUPP), the region is left as it was.
#include <cerrno>
#include <cstring>

#include "spec/device_description.h"
#include "tests/conformance/fixture.h"

namespace qptwin::testing {
namespace {

using access::kLocalWrite;
using access::kRemoteWrite;

class Rereg : public Conformance {};

TEST_P(Rereg, InputErrorsAreEinvalOnEveryDevice) {
  Buffer b = Reg(4096, kLocalWrite);
  uint8_t* buf = nullptr;
  uint32_t lkey = 0, rkey = 0;
  EXPECT_EQ(dev_->ReregMr(b.mr, 0x80, {}, 0, 0, &buf, &lkey, &rkey), EINVAL);
  EXPECT_EQ(dev_->ReregMr(b.mr, rereg_flag::kChangeTranslation, {}, 0, 0, &buf, &lkey, &rkey),
            EINVAL);
  EXPECT_EQ(dev_->ReregMr(MrHandle{}, rereg_flag::kChangeAccess, {}, 0, kLocalWrite, &buf,
                          &lkey, &rkey),
            EINVAL);
}

TEST_P(Rereg, ChangesAccessTranslationAndPdOrSaysItCannot) {
  auto [qa, qb] = ConnectedPair(QpType::kRc);
  (void)qb;
  Buffer src = Reg(4096, access::kAll);
  Buffer dst = Reg(4096, kLocalWrite);
  uint8_t* buf = dst.buf;
  uint32_t lkey = dst.lkey, rkey = dst.rkey;
  const int expected = GetParam().behaviour.rereg_mr_errno;
  const int access_ret = dev_->ReregMr(dst.mr, rereg_flag::kChangeAccess, {}, 0,
                                       kLocalWrite | kRemoteWrite, &buf, &lkey, &rkey);
  PdHandle pd2;
  ASSERT_EQ(dev_->AllocPd(&pd2), 0);
  const int pd_ret = dev_->ReregMr(dst.mr, rereg_flag::kChangePd, pd2, 0, 0, &buf, &lkey, &rkey);
  EXPECT_EQ(access_ret, expected);
  EXPECT_EQ(pd_ret, expected);
  if (expected != 0) {
    EXPECT_EQ(dev_->ReregMr(dst.mr, rereg_flag::kChangeTranslation, {}, 8192, 0, &buf, &lkey,
                            &rkey),
              expected);
    EXPECT_EQ(dev_->ReregMr(dst.mr, 0, {}, 0, 0, &buf, &lkey, &rkey), expected);
    EXPECT_EQ(dev_->DeregMr(dst.mr), 0) << "the region is still there";
    EXPECT_EQ(dev_->DeallocPd(pd2), 0);
    return;
  }
  // Back to the QPs' PD with a new translation of 8 KiB: a WRITE lands in the new buffer.
  ASSERT_EQ(dev_->ReregMr(dst.mr, rereg_flag::kChangePd | rereg_flag::kChangeTranslation, pd_,
                          8192, 0, &buf, &lkey, &rkey),
            0);
  ASSERT_NE(buf, nullptr);
  std::memset(src.buf, 0x5a, 64);
  SendWr wr = Send(1, {src.At(0, 64)});
  wr.opcode = WrOpcode::kRdmaWrite;
  wr.remote_addr = reinterpret_cast<uint64_t>(buf) + 8000;
  wr.rkey = rkey;
  size_t bad;
  ASSERT_EQ(dev_->PostSend(qa, {wr}, &bad), 0);
  auto wcs = WaitWc(cq_, 1);
  ASSERT_EQ(wcs.size(), 1u);
  EXPECT_EQ(wcs[0].status, WcStatus::kSuccess);
  EXPECT_EQ(buf[8000], 0x5a);
  EXPECT_EQ(buf[8063], 0x5a);
  EXPECT_EQ(dev_->DeregMr(dst.mr), 0);
  EXPECT_EQ(dev_->DeallocPd(pd2), 0);
}

INSTANTIATE_TEST_SUITE_P(Backends, Rereg, ::testing::ValuesIn(BackendsUnderTest()),
                         [](const ::testing::TestParamInfo<BackendCase>& info) {
                           return info.param.name;
                         });

}  // namespace
}  // namespace qptwin::testing
