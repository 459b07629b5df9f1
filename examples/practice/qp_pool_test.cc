#include "examples/practice/qp_pool.h"

#include <gtest/gtest.h>

#include <cerrno>

#include "examples/practice/test_env.h"

namespace qptwin::practice {
namespace {

class QpPoolTest : public EnvTest {
 protected:
  std::unique_ptr<QpPool> MakePool(size_t capacity, bool recover = true,
                                   RecoveryMode mode = RecoveryMode::kReset) {
    QpPoolOptions o;
    o.capacity = capacity;
    o.init = env_.local.Init();
    o.recover_errored = recover;
    o.recovery = mode;
    return std::make_unique<QpPool>(env_.backend.get(), env_.local.dev.get(), peer_.get(), o);
  }
  void ExpectWriteWorks(QpHandle qp, uint64_t wr_id) {
    size_t bad = 0;
    ASSERT_EQ(dev().PostSend(qp, {WriteWr(env_.local, env_.peer, wr_id, 0, 32, true)}, &bad), 0);
    std::vector<WorkCompletion> wcs;
    ASSERT_EQ(dev().WaitForCompletions(env_.local.scq, 1, 100 * kMs, &wcs), 0);
    EXPECT_EQ(wcs[0].wr_id, wr_id);
    EXPECT_EQ(wcs[0].status, WcStatus::kSuccess);
  }
  // A failing WRITE (bad rkey); time passes so the QP reaches ERR.
  void Break(QpHandle qp) {
    SendWr wr = WriteWr(env_.local, env_.peer, 666, 0, 32, true);
    wr.rkey ^= 0xff00;
    size_t bad = 0;
    ASSERT_EQ(dev().PostSend(qp, {wr}, &bad), 0);
    env_.backend->Advance(10 * kMs);
    ASSERT_EQ(StateOf(qp), QpState::kErr);
  }

};

TEST_F(QpPoolTest, WarmPoolServesHitsInRts) {
  auto pool = MakePool(8);
  ASSERT_EQ(pool->Warm(4), 0);
  EXPECT_EQ(pool->idle(), 4u);
  EXPECT_EQ(pool->stats().creations, 4u);
  EXPECT_EQ(peer_->size(), 4u);
  PooledQp q;
  ASSERT_EQ(pool->Acquire(&q), 0);
  EXPECT_EQ(pool->stats().hits, 1u);
  EXPECT_EQ(pool->stats().misses, 0u);
  EXPECT_EQ(pool->stats().creations, 4u) << "a hit creates nothing";
  EXPECT_EQ(StateOf(q.qp), QpState::kRts);
  ExpectWriteWorks(q.qp, 1);
  ASSERT_EQ(pool->Release(q), 0);
  EXPECT_EQ(pool->idle(), 4u);
}

TEST_F(QpPoolTest, EmptyPoolCreatesOnDemandThenReuses) {
  auto pool = MakePool(8);
  PooledQp q;
  ASSERT_EQ(pool->Acquire(&q), 0);
  EXPECT_EQ(pool->stats().misses, 1u);
  EXPECT_EQ(pool->stats().creations, 1u);
  EXPECT_EQ(StateOf(q.qp), QpState::kRts);
  ExpectWriteWorks(q.qp, 2);
  ASSERT_EQ(pool->Release(q), 0);
  PooledQp again;
  ASSERT_EQ(pool->Acquire(&again), 0);
  EXPECT_EQ(again.qp, q.qp);
  EXPECT_EQ(pool->stats().hits, 1u);
  EXPECT_EQ(pool->stats().creations, 1u);
}

TEST_F(QpPoolTest, CapacityIsEnforcedWithEagain) {
  auto pool = MakePool(2);
  ASSERT_EQ(pool->Warm(5), 0);
  EXPECT_EQ(pool->size(), 2u) << "warm-up stops at capacity";
  PooledQp a, b, c;
  ASSERT_EQ(pool->Acquire(&a), 0);
  ASSERT_EQ(pool->Acquire(&b), 0);
  EXPECT_EQ(pool->Acquire(&c), EAGAIN);
  EXPECT_EQ(pool->size(), 2u);
  ASSERT_EQ(pool->Release(a), 0);
  ASSERT_EQ(pool->Acquire(&c), 0);
  EXPECT_EQ(c.qp, a.qp);
}

TEST_F(QpPoolTest, ErroredQpIsRecoveredOnReleaseWithItsCqesReturned) {
  auto pool = MakePool(4);
  PooledQp q;
  ASSERT_EQ(pool->Acquire(&q), 0);
  Break(q.qp);
  Outstanding o;
  o.send_cqes = 1;
  RecoveryResult drained;
  ASSERT_EQ(pool->Release(q, o, &drained), 0);
  ASSERT_EQ(drained.drained.size(), 1u);
  EXPECT_EQ(drained.drained[0].wr_id, 666u);
  EXPECT_EQ(drained.drained[0].status, WcStatus::kRemAccessErr);
  EXPECT_EQ(pool->stats().recoveries, 1u);
  PooledQp again;
  ASSERT_EQ(pool->Acquire(&again), 0);
  EXPECT_EQ(again.qp_num, q.qp_num) << "RESET recovery keeps the QP number";
  EXPECT_EQ(StateOf(again.qp), QpState::kRts);
  ExpectWriteWorks(again.qp, 3);
}

TEST_F(QpPoolTest, RecreateRecoveryHandsOutANewQpNumber) {
  auto pool = MakePool(4, true, RecoveryMode::kRecreate);
  PooledQp q;
  ASSERT_EQ(pool->Acquire(&q), 0);
  Break(q.qp);
  Outstanding o;
  o.send_cqes = 1;
  RecoveryResult drained;
  ASSERT_EQ(pool->Release(q, o, &drained), 0);
  PooledQp again;
  ASSERT_EQ(pool->Acquire(&again), 0);
  EXPECT_NE(again.qp_num, q.qp_num);
  EXPECT_EQ(peer_->size(), 1u);
  EXPECT_TRUE(peer_->PeerOf(again.qp_num));
  EXPECT_FALSE(peer_->PeerOf(q.qp_num));
  ExpectWriteWorks(again.qp, 4);
}

TEST_F(QpPoolTest, WithoutRecoveryErroredQpIsDestroyed) {
  auto pool = MakePool(4, /*recover=*/false);
  PooledQp q;
  ASSERT_EQ(pool->Acquire(&q), 0);
  Break(q.qp);
  Outstanding o;
  o.send_cqes = 1;
  EXPECT_EQ(pool->Release(q, o), 0);
  EXPECT_EQ(pool->size(), 0u);
  EXPECT_EQ(pool->stats().destroyed, 1u);
  EXPECT_EQ(peer_->size(), 0u);
  uint32_t n = 0;
  EXPECT_EQ(dev().QpNum(q.qp, &n), EINVAL);
}

TEST_F(QpPoolTest, FailedDrainDestroysAndReportsEtimedout) {
  QpPoolOptions o;
  o.capacity = 2;
  o.init = env_.local.Init();
  o.drain_timeout_ns = 2 * kMs;
  QpPool pool(env_.backend.get(), env_.local.dev.get(), peer_.get(), o);
  PooledQp q;
  ASSERT_EQ(pool.Acquire(&q), 0);
  Break(q.qp);
  Outstanding out;
  out.send_cqes = 5;  // only 1 will ever come
  EXPECT_EQ(pool.Release(q, out), ETIMEDOUT);
  EXPECT_EQ(pool.size(), 0u);
}

TEST_F(QpPoolTest, IdleQpFoundBrokenAtAcquireIsRecovered) {
  auto pool = MakePool(4);
  ASSERT_EQ(pool->Warm(1), 0);
  PooledQp q;
  ASSERT_EQ(pool->Acquire(&q), 0);
  ASSERT_EQ(pool->Release(q), 0);
  QpAttr e;
  e.qp_state = QpState::kErr;
  ASSERT_EQ(dev().ModifyQp(q.qp, e, attr::kState), 0);  // behind the pool's back
  PooledQp again;
  ASSERT_EQ(pool->Acquire(&again), 0);
  EXPECT_EQ(StateOf(again.qp), QpState::kRts);
  EXPECT_EQ(pool->stats().recoveries, 1u);
  ExpectWriteWorks(again.qp, 5);
}

TEST_F(QpPoolTest, ReleasingUnknownOrTwiceIsEinval) {
  auto pool = MakePool(4);
  PooledQp q;
  ASSERT_EQ(pool->Acquire(&q), 0);
  ASSERT_EQ(pool->Release(q), 0);
  EXPECT_EQ(pool->Release(q), EINVAL);
  PooledQp stranger;
  stranger.qp = QpHandle{12345};
  EXPECT_EQ(pool->Release(stranger), EINVAL);
  EXPECT_EQ(pool->Acquire(nullptr), EINVAL);
  EXPECT_EQ(pool->idle(), 1u);
}

TEST_F(QpPoolTest, DestructorReleasesEveryQpAndPeer) {
  {
    auto pool = MakePool(4);
    ASSERT_EQ(pool->Warm(3), 0);
    PooledQp q;
    ASSERT_EQ(pool->Acquire(&q), 0);
  }
  EXPECT_EQ(peer_->size(), 0u);
}

}  // namespace
}  // namespace qptwin::practice
