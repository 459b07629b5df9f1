#include "model/engine/window.h"

#include <gtest/gtest.h>

#include <cerrno>

namespace qptwin::model::engine {
namespace {

constexpr AccessFlags kBindable = access::kLocalWrite | access::kMwBind;

class MwTableTest : public ::testing::Test {
 protected:
  void SetUp() override { mr_ = mrs_.Register(100, 1, 7, 4096, kBindable); }

  BindRequest Request(const Mw& mw, uint64_t off = 1024, uint64_t len = 1024) const {
    BindRequest r;
    r.mw_rkey = mw.rkey;
    r.new_rkey = (mw.rkey & ~0xffu) | ((mw.rkey + 1) & 0xffu);
    r.mr = mr_;
    r.addr = reinterpret_cast<uint64_t>(mr_->buf) + off;
    r.length = len;
    r.access = access::kRemoteWrite;
    r.qp = 5;
    r.qp_pd = 7;
    return r;
  }
  WindowAccess Access(uint64_t off, uint64_t len, bool region = false) const {
    WindowAccess a;
    a.qp = 5;
    a.pd = 7;
    a.addr = reinterpret_cast<uint64_t>(mr_->buf) + off;
    a.len = len;
    a.need = access::kRemoteWrite;
    a.range_of_region = region;
    return a;
  }

  MrTable mrs_;
  MwTable mws_;
  Mr* mr_ = nullptr;
};

TEST_F(MwTableTest, IndicesStartAboveTheRegionsAndKeysDiffer) {
  Mw* a = mws_.Alloc(1, 1, 7, MwType::kType1);
  Mw* b = mws_.Alloc(2, 1, 7, MwType::kType2);
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(a->rkey >> 8, MwTable::kMinIndex);
  EXPECT_EQ(b->rkey >> 8, MwTable::kMinIndex + 1);
  EXPECT_TRUE(a->valid) << "type 1 is VALID from allocation";
  EXPECT_FALSE(b->valid) << "type 2 is FREE until bound";
  EXPECT_EQ(mws_.CountForPd(7), 2u);
  const uint32_t rkey = a->rkey;
  mws_.Dealloc(1);  // `a` is gone with it
  EXPECT_EQ(mws_.ByIndex(rkey), nullptr);
}

TEST_F(MwTableTest, BindKeepsTheIndexAndTakesTheKeyByte) {
  Mw* mw = mws_.Alloc(1, 1, 7, MwType::kType2);
  BindRequest r = Request(*mw);
  r.new_rkey = 0xabcdef42;
  const uint32_t index = mw->rkey >> 8;
  ASSERT_EQ(mws_.Bind(r), 0);
  EXPECT_EQ(mw->rkey, (index << 8) | 0x42);
  EXPECT_EQ(mws_.BoundTo(100), 1u);
  EXPECT_EQ(mws_.Bind(Request(*mw)), EINVAL) << "a bound type 2 window";
}

TEST_F(MwTableTest, BindRefusesWhatRxeRefuses) {
  Mw* mw = mws_.Alloc(1, 1, 7, MwType::kType2);
  BindRequest r = Request(*mw);
  r.mw_rkey ^= 1;
  EXPECT_EQ(mws_.Bind(r), EINVAL) << "not the window's rkey";
  r = Request(*mw, 4000, 1024);
  EXPECT_EQ(mws_.Bind(r), EINVAL) << "past the region";
  r = Request(*mw, 0, 0);
  EXPECT_EQ(mws_.Bind(r), EINVAL) << "type 2 of length 0";
  r = Request(*mw);
  r.qp_pd = 8;
  EXPECT_EQ(mws_.Bind(r), EINVAL) << "the QP of another PD";
  Mr* plain = mrs_.Register(101, 1, 7, 4096, access::kLocalWrite);
  r = Request(*mw);
  r.mr = plain;
  EXPECT_EQ(mws_.Bind(r), EINVAL) << "no MW_BIND";
  Mr* ro = mrs_.Register(102, 1, 7, 4096, access::kMwBind);
  r = Request(*mw);
  r.mr = ro;
  r.addr = reinterpret_cast<uint64_t>(ro->buf);
  EXPECT_EQ(mws_.Bind(r), EINVAL) << "remote write on a region without LOCAL_WRITE";
  r.access = access::kRemoteRead;
  EXPECT_EQ(mws_.Bind(r), 0);
  EXPECT_TRUE(mw->valid);
}

TEST_F(MwTableTest, LookupChecksTheWindowOrTheRegionBounds) {
  Mw* mw = mws_.Alloc(1, 1, 7, MwType::kType2);
  ASSERT_EQ(mws_.Bind(Request(*mw)), 0);
  uint64_t at = 0;
  EXPECT_NE(mws_.Lookup(mw->rkey, Access(1024, 1024), &at), nullptr);
  EXPECT_EQ(mws_.Lookup(mw->rkey, Access(2040, 16), &at), nullptr) << "IBTA: the window";
  EXPECT_NE(mws_.Lookup(mw->rkey, Access(2040, 16, true), &at), nullptr) << "rxe: the region";
  WindowAccess other = Access(1024, 8);
  other.qp = 6;
  EXPECT_EQ(mws_.Lookup(mw->rkey, other, &at), nullptr) << "type 2: the binding QP only";
  WindowAccess read = Access(1024, 8);
  read.need = access::kRemoteRead;
  EXPECT_EQ(mws_.Lookup(mw->rkey, read, &at), nullptr) << "the window's rights";
}

TEST_F(MwTableTest, InvalidateFreesOnlyABoundType2Window) {
  Mw* t1 = mws_.Alloc(1, 1, 7, MwType::kType1);
  Mw* t2 = mws_.Alloc(2, 1, 7, MwType::kType2);
  ASSERT_EQ(mws_.Bind(Request(*t1)), 0);
  EXPECT_EQ(mws_.Invalidate(t1->rkey), EINVAL) << "type 1";
  EXPECT_EQ(mws_.Invalidate(t2->rkey), EINVAL) << "free";
  ASSERT_EQ(mws_.Bind(Request(*t2)), 0);
  EXPECT_EQ(mws_.Invalidate(t2->rkey ^ 1), EINVAL) << "another key byte";
  EXPECT_EQ(mws_.Invalidate(t2->rkey), 0);
  EXPECT_FALSE(t2->valid);
  EXPECT_EQ(mws_.BoundTo(100), 1u) << "the type 1 window is still bound";
  uint64_t at = 0;
  EXPECT_EQ(mws_.Lookup(t2->rkey, Access(1024, 8), &at), nullptr);
  EXPECT_EQ(mws_.Bind(Request(*t2)), 0) << "free again: rebindable";
}

// rxe 6.1 oopses on an invalidate of a FREE type 2 window (Behaviour::
// invalidate_free_type2_window_faults): the table names exactly those keys.
TEST_F(MwTableTest, NamesFreeType2IsTheKeyOfAnUnboundType2Window) {
  Mw* t1 = mws_.Alloc(1, 1, 7, MwType::kType1);
  Mw* t2 = mws_.Alloc(2, 1, 7, MwType::kType2);
  EXPECT_FALSE(mws_.NamesFreeType2(t1->rkey)) << "type 1";
  EXPECT_TRUE(mws_.NamesFreeType2(t2->rkey)) << "allocated, never bound";
  EXPECT_FALSE(mws_.NamesFreeType2(t2->rkey ^ 1)) << "another key byte";
  ASSERT_EQ(mws_.Bind(Request(*t2)), 0);
  EXPECT_FALSE(mws_.NamesFreeType2(t2->rkey)) << "bound";
  ASSERT_EQ(mws_.Invalidate(t2->rkey), 0);
  EXPECT_TRUE(mws_.NamesFreeType2(t2->rkey)) << "invalidated: FREE again";
  EXPECT_FALSE(mws_.NamesFreeType2(0x12345)) << "no window";
}

}  // namespace
}  // namespace qptwin::model::engine
