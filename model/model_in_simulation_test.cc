// Model calls from several thread processes of a simulation the program runs itself
// (model/model_backend.h contract 6, model/sim/sc_clock.h contract 8, model/sim/kernel.h
// contract 7). Each test makes its Backend, spawns its threads and runs sc_start itself, as
// a user's sc_main would.
#include <gtest/gtest.h>

#include <systemc>

#include <cerrno>
#include <memory>
#include <vector>

#include "model/model_backend.h"
#include "model/sim/kernel.h"
#include "tests/support/support.h"

namespace qptwin::testing {
namespace {

uint64_t KernelNs() { return model::sim::KernelNowNs(); }

void RunFor(uint64_t us) { sc_core::sc_start(sc_core::sc_time(static_cast<double>(us), sc_core::SC_US)); }

// On rxe a post runs the device's work inside ibv_post_send (the model waits inside the
// call). Another thread's call must not run inside it: B's DestroyQp of A's QP takes its
// turn after A's post returned (before the turns, it freed the QP under the post).
TEST(InSimulation, ACallWaitsWhileAnotherThreadsCallIsUnderWay) {
  auto [be, a, b] = ConnectedSides(RxeModel());
  bool posted = false, destroyed_after_post = false;
  int post_err = -1, destroy_err = -1;
  sc_core::sc_spawn(
      [&, &a = a, &b = b] {
        size_t bad = 0;
        post_err = a.dev->PostSend(
            a.qp, {WriteWr(a, b, 1, 0, 1024), WriteWr(a, b, 2, 1024, 1024), WriteWr(a, b, 3, 2048, 1024)},
            &bad);
        posted = true;
      },
      sc_core::sc_gen_unique_name("host_a"));
  sc_core::sc_spawn(
      [&, &a = a] {
        destroy_err = a.dev->DestroyQp(a.qp);
        destroyed_after_post = posted;
      },
      sc_core::sc_gen_unique_name("host_b"));
  RunFor(100000);
  EXPECT_EQ(post_err, 0);
  EXPECT_EQ(destroy_err, 0);
  EXPECT_TRUE(destroyed_after_post) << "the destroy ran inside the post";
}

// A call that makes another thread's wait hold wakes that thread at once: B waits for a
// completion; A moves B's QP to ERR, which flushes B's receive (a CQE right then).
TEST(InSimulation, AVerbThatSatisfiesAnotherThreadsWaitWakesItAtOnce) {
  auto [be, a, b] = ConnectedSides(RxeModel());
  size_t bad = 0;
  ASSERT_EQ(b.dev->PostRecv(b.qp, {Rwr(9, {b.At(0, 64)})}, &bad), 0);
  uint64_t modified_at = 0, woke_at = 0;
  int wait_err = -1;
  std::vector<WorkCompletion> got;
  sc_core::sc_spawn(
      [&, &b = b] {
        wait_err = b.dev->WaitForCompletions(b.rcq, 1, kSecond, &got);
        woke_at = KernelNs();
      },
      sc_core::sc_gen_unique_name("host_b"));
  sc_core::sc_spawn(
      [&, &b = b] {
        sc_core::wait(50, sc_core::SC_US);
        QpAttr err;
        err.qp_state = QpState::kErr;
        EXPECT_EQ(b.dev->ModifyQp(b.qp, err, attr::kState), 0);
        modified_at = KernelNs();
      },
      sc_core::sc_gen_unique_name("host_a"));
  RunFor(2000000);
  EXPECT_EQ(wait_err, 0);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].status, WcStatus::kWrFlushErr);
  EXPECT_GT(modified_at, 0u);
  EXPECT_LT(woke_at - modified_at, 100000u) << "woke at " << woke_at << ", the flush was at " << modified_at;
}

// The same when the call is a method process's (before, a method's call ran neither
// BeforeModelCall nor AfterModelCall: B woke only at its deadline, a second later).
TEST(InSimulation, AMethodsVerbThatSatisfiesAThreadsWaitWakesItAtOnce) {
  auto [be, a, b] = ConnectedSides(RxeModel());
  size_t bad = 0;
  ASSERT_EQ(b.dev->PostRecv(b.qp, {Rwr(9, {b.At(0, 64)})}, &bad), 0);
  uint64_t modified_at = 0, woke_at = 0;
  int wait_err = -1, modify_err = -1;
  std::vector<WorkCompletion> got;
  sc_core::sc_spawn(
      [&, &b = b] {
        wait_err = b.dev->WaitForCompletions(b.rcq, 1, kSecond, &got);
        woke_at = KernelNs();
      },
      sc_core::sc_gen_unique_name("host_b"));
  int runs = 0;
  sc_core::sc_spawn_options opts;
  opts.spawn_method();
  sc_core::sc_spawn(
      [&, &b = b] {
        if (runs++ == 0) {
          sc_core::next_trigger(50, sc_core::SC_US);
          return;
        }
        QpAttr err;
        err.qp_state = QpState::kErr;
        modify_err = b.dev->ModifyQp(b.qp, err, attr::kState);
        modified_at = KernelNs();
      },
      sc_core::sc_gen_unique_name("method_a"), &opts);
  RunFor(2000000);
  EXPECT_EQ(modify_err, 0);
  EXPECT_EQ(wait_err, 0);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].status, WcStatus::kWrFlushErr);
  EXPECT_GT(modified_at, 0u);
  EXPECT_LT(woke_at - modified_at, 100000u) << "woke at " << woke_at << ", the flush was at " << modified_at;
}

// The devices' time passes while the program's thread waits its own way: a call after
// wait(5 us) is 5 us later on the model too.
TEST(InSimulation, TimeThatTheProgramWaitedPassesForTheModel) {
  auto [be, a, b] = ConnectedSides(RxeModel());
  uint64_t before = 0, after = 0;
  sc_core::sc_spawn(
      [&, &be = be] {
        before = be->NowNs();
        sc_core::wait(5, sc_core::SC_US);
        after = be->NowNs();
      },
      sc_core::sc_gen_unique_name("host"));
  RunFor(10);
  EXPECT_EQ(after - before, 5000u);
}

std::unique_ptr<Backend> Cx6Model() {
  model::ModelOptions o;
  o.profile = "cx6-100g";  // a post does not wait for its answers there (rxe's does)
  return model::MakeModelBackend(o);
}

// Two Backends used by two threads at once: each thread's wait ends at its own completion
// (before, the second Backend's clock suspended the first's, whose wait then timed out).
TEST(InSimulation, TwoBackendsUsedAtOnceBothRun) {
  auto one = ConnectedSides(Cx6Model());
  auto two = ConnectedSides(Cx6Model());
  int err_one = -1, err_two = -1;
  std::vector<WorkCompletion> wc_one, wc_two;
  auto host = [](SidePair* p, int* err, std::vector<WorkCompletion>* wc) {
    return [p, err, wc] {
      size_t bad = 0;
      EXPECT_EQ(p->a.dev->PostSend(p->a.qp, {WriteWr(p->a, p->b, 1, 0, 64)}, &bad), 0);
      *err = p->a.dev->WaitForCompletions(p->a.scq, 1, kSecond / 10, wc);
    };
  };
  sc_core::sc_spawn(host(&one, &err_one, &wc_one), sc_core::sc_gen_unique_name("host_one"));
  sc_core::sc_spawn(host(&two, &err_two, &wc_two), sc_core::sc_gen_unique_name("host_two"));
  RunFor(200000);
  EXPECT_EQ(err_one, 0);
  EXPECT_EQ(err_two, 0);
  ASSERT_EQ(wc_one.size(), 1u);
  ASSERT_EQ(wc_two.size(), 1u);
  EXPECT_EQ(wc_one[0].status, WcStatus::kSuccess);
  EXPECT_EQ(wc_two[0].status, WcStatus::kSuccess);
}

// A thread killed while it waits inside the model leaves nothing behind: another thread's
// wait on the same Backend still ends at its completion.
TEST(InSimulation, AThreadKilledWhileItWaitsLeavesNothingBehind) {
  auto [be, a, b] = ConnectedSides(Cx6Model());
  int err = -1;
  std::vector<WorkCompletion> wc;
  sc_core::sc_process_handle victim = sc_core::sc_spawn(
      [&, &b = b] {
        std::vector<WorkCompletion> none;
        (void)b.dev->WaitForCompletions(b.rcq, 1, kSecond, &none);
      },
      sc_core::sc_gen_unique_name("victim"));
  sc_core::sc_spawn(
      [&, &a = a, &b = b] {
        sc_core::wait(1, sc_core::SC_US);
        victim.kill();
        size_t bad = 0;
        EXPECT_EQ(a.dev->PostSend(a.qp, {WriteWr(a, b, 1, 0, 64)}, &bad), 0);
        err = a.dev->WaitForCompletions(a.scq, 1, kSecond / 10, &wc);
      },
      sc_core::sc_gen_unique_name("host_a"));
  RunFor(200000);
  EXPECT_EQ(err, 0);
  ASSERT_EQ(wc.size(), 1u);
  EXPECT_EQ(wc[0].status, WcStatus::kSuccess);
}

}  // namespace
}  // namespace qptwin::testing
