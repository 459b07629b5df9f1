#include "examples/practice/state_history.h"

#include <gtest/gtest.h>

#include <cerrno>

#include "spec/bring_up.h"
#include "examples/practice/peer_link.h"
#include "examples/practice/qp_connect.h"
#include "examples/practice/test_env.h"

namespace qptwin::practice {
namespace {

class StateHistoryTest : public EnvTest {
 protected:
  void SetUp() override {
    EnvTest::SetUp();
    if (HasFatalFailure()) return;
    history_ = std::make_unique<StateHistory>(env_.backend.get(), env_.local.dev.get());
    ASSERT_EQ(dev().CreateQp(env_.local.Init(), &qp_, nullptr), 0);
    ASSERT_EQ(PeerConnection(dev(), qp_, *peer_, &conn_), 0);
    ASSERT_EQ(ConnectAttr(dev(), conn_, &attr_), 0);
  }
  // Drives RESET->INIT->RTR->RTS through the wrapper, 1 ms apart.
  void ConnectThroughHistory() {
    std::vector<BringUpStep> steps;
    ASSERT_EQ(BringUpPlan(QpType::kRc, QpState::kReset, QpState::kRts, &steps), 0);
    for (const BringUpStep& step : steps) {
      env_.backend->Advance(kMs);
      attr_.qp_state = step.to;
      ASSERT_EQ(history_->Modify(qp_, attr_, step.mask,
                                 std::string("connect ") + std::string(ToName(step.to))),
                0);
    }
  }
  // The history without the device's "create" entry.
  std::vector<StateChange> Changes() {
    std::vector<StateChange> out;
    for (const StateChange& c : history_->History(qp_)) {
      if (c.cause != "create") out.push_back(c);
    }
    return out;
  }

  std::unique_ptr<StateHistory> history_;
  QpHandle qp_;
  StoredConnection conn_;
  QpAttr attr_;
};

TEST_F(StateHistoryTest, RecordsEachDrivenTransitionWithTimeAndCauseOnce) {
  ConnectThroughHistory();
  std::vector<StateChange> h = Changes();
  ASSERT_EQ(h.size(), 3u) << "device echoes of the wrapper's modifies are not duplicated";
  EXPECT_EQ(h[0].from, QpState::kReset);
  EXPECT_EQ(h[0].to, QpState::kInit);
  EXPECT_EQ(h[0].cause, "connect INIT");
  EXPECT_EQ(h[0].time_ns, 1 * kMs);
  EXPECT_EQ(h[1].from, QpState::kInit);
  EXPECT_EQ(h[1].to, QpState::kRtr);
  EXPECT_EQ(h[1].time_ns, 2 * kMs);
  EXPECT_EQ(h[2].from, QpState::kRtr);
  EXPECT_EQ(h[2].to, QpState::kRts);
  EXPECT_EQ(h[2].time_ns, 3 * kMs);
}

TEST_F(StateHistoryTest, CallbacksRunAfterEachRecordedChange) {
  std::vector<StateChange> seen;
  std::vector<size_t> history_len_at_call;
  history_->OnChange([&](QpHandle qp, const StateChange& c) {
    EXPECT_EQ(qp, qp_);
    seen.push_back(c);
    history_len_at_call.push_back(history_->History(qp).size());
  });
  ConnectThroughHistory();
  std::vector<StateChange> h = history_->History(qp_);
  ASSERT_EQ(seen.size(), h.size());
  for (size_t i = 0; i < seen.size(); ++i) {
    EXPECT_EQ(seen[i].to, h[i].to);
    EXPECT_EQ(history_len_at_call[i], i + 1) << "called after recording";
  }
}

TEST_F(StateHistoryTest, MergesDeviceMadeErrorTransition) {
  ConnectThroughHistory();
  std::vector<StateChange> seen;
  history_->OnChange([&](QpHandle, const StateChange& c) { seen.push_back(c); });
  SendWr bad = WriteWr(env_.local, env_.peer, 1, 0, 64, true);
  bad.rkey ^= 0xff00;
  size_t bad_index = 0;
  ASSERT_EQ(dev().PostSend(qp_, {bad}, &bad_index), 0);
  env_.backend->Advance(10 * kMs);
  ASSERT_EQ(history_->Sync(qp_), 0);
  std::vector<StateChange> h = Changes();
  ASSERT_EQ(h.size(), 4u);
  EXPECT_EQ(h[3].from, QpState::kRts);
  EXPECT_EQ(h[3].to, QpState::kErr);
  EXPECT_NE(h[3].cause, "modify");
  EXPECT_GT(h[3].time_ns, 3 * kMs);
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].to, QpState::kErr);

  // The next driven modify starts from the real state (ERR), after the device's entry.
  QpAttr reset;
  reset.qp_state = QpState::kReset;
  ASSERT_EQ(history_->Modify(qp_, reset, attr::kState, "recovery"), 0);
  h = Changes();
  ASSERT_EQ(h.size(), 5u);
  EXPECT_EQ(h[4].from, QpState::kErr);
  EXPECT_EQ(h[4].to, QpState::kReset);
  EXPECT_EQ(h[4].cause, "recovery");
}

TEST_F(StateHistoryTest, FailedModifyRecordsNothingAndCallsNothing) {
  int calls = 0;
  ASSERT_EQ(history_->Sync(qp_), 0);  // the device's "create" entry
  history_->OnChange([&](QpHandle, const StateChange&) { ++calls; });
  size_t before = history_->History(qp_).size();
  attr_.qp_state = QpState::kRts;  // RESET->RTS is illegal
  EXPECT_EQ(history_->Modify(qp_, attr_, attr::kState), EINVAL);
  EXPECT_EQ(history_->History(qp_).size(), before);
  EXPECT_EQ(calls, 0);
  EXPECT_EQ(history_->Modify(QpHandle{777}, attr_, attr::kState), EINVAL);
}

TEST_F(StateHistoryTest, ModifyMadePastTheWrapperIsMergedAsDeviceRecord) {
  ConnectThroughHistory();
  QpAttr e;
  e.qp_state = QpState::kErr;
  ASSERT_EQ(dev().ModifyQp(qp_, e, attr::kState), 0);  // not through the wrapper
  ASSERT_EQ(history_->Sync(qp_), 0);
  std::vector<StateChange> h = Changes();
  ASSERT_EQ(h.size(), 4u);
  EXPECT_EQ(h[3].to, QpState::kErr);
  EXPECT_EQ(h[3].cause, "modify");
}

TEST_F(StateHistoryTest, RemovedCallbackIsNotCalled) {
  int a = 0, b = 0;
  int id_a = history_->OnChange([&](QpHandle, const StateChange&) { ++a; });
  history_->OnChange([&](QpHandle, const StateChange&) { ++b; });
  history_->RemoveCallback(id_a);
  ConnectThroughHistory();
  EXPECT_EQ(a, 0);
  EXPECT_GE(b, 3);
}

}  // namespace
}  // namespace qptwin::practice
