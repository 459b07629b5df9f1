#include "model/sim/kernel.h"

#include <gtest/gtest.h>

#include <systemc>
#include <thread>

namespace qptwin::model::sim {
namespace {

TEST(SimKernel, AdvanceMovesSystemCTime) {
  uint64_t before = KernelNowNs();
  Advance(1500);
  EXPECT_EQ(KernelNowNs(), before + 1500);
  Advance(0);
  EXPECT_EQ(KernelNowNs(), before + 1500);
}

TEST(SimKernel, MeasureRawActivationsRunsBothLoopsInKernelTime) {
  const uint64_t before = KernelNowNs();
  const RawActivationRates r = MeasureRawActivations(10000);
  EXPECT_GT(r.method_per_s, 0);
  EXPECT_GT(r.thread_per_s, 0);
  EXPECT_EQ(KernelNowNs(), before + 2 * 10001) << "each loop's 10,000 ns and one more";
  const RawActivationRates again = MeasureRawActivations(100);  // the method is reused
  EXPECT_GT(again.method_per_s, 0);
  EXPECT_EQ(KernelNowNs(), before + 2 * 10001 + 2 * 101);
  const RawActivationRates none = MeasureRawActivations(0);
  EXPECT_EQ(none.method_per_s, 0);
}

TEST(SimKernel, MoveKernelHandsItToAnotherThreadAndBack) {
  ASSERT_TRUE(Advance(0));  // this thread owns the kernel
  const std::thread::id me = std::this_thread::get_id();
  const uint64_t before = KernelNowNs();
  bool moved = false, ran = false, moved_back = false, stranger = true;
  std::thread other([&] {
    const std::thread::id it = std::this_thread::get_id();
    stranger = MoveKernel(it, it);  // it is not the owner: refused
    moved = MoveKernel(me, it);
    ran = Advance(250) && KernelNowNs() == before + 250;
    moved_back = MoveKernel(it, me);
  });
  other.join();
  EXPECT_FALSE(stranger);
  EXPECT_TRUE(moved);
  EXPECT_TRUE(ran);
  EXPECT_TRUE(moved_back);
  EXPECT_TRUE(OnKernelThread());
  EXPECT_EQ(KernelNowNs(), before + 250);
}

TEST(SimKernel, WhileMovedTheOwnerIsRefused) {
  ASSERT_TRUE(Advance(0));
  const std::thread::id me = std::this_thread::get_id();
  std::thread::id it;
  bool owner_refused = false;
  std::thread other([&] {
    it = std::this_thread::get_id();
    ASSERT_TRUE(MoveKernel(me, it));
  });
  other.join();
  owner_refused = !OnKernelThread() && !Advance(10) && KernelNowNs() == 0;
  ASSERT_TRUE(MoveKernel(it, me));  // the thread has ended; the kernel comes back
  EXPECT_TRUE(owner_refused);
  EXPECT_TRUE(OnKernelThread());
}

sc_core::sc_time Ns(double ns) { return sc_core::sc_time(ns, sc_core::SC_NS); }

// Contract 7: a thread killed while it waits to take its turn back after a kWait call's
// yielded wait unwinds (before, ~TurnYield waited for the turn, and the kill's exception
// left a destructor: std::terminate), and the turn goes on to the next thread.
TEST(SimKernel, AThreadKilledWhileItTakesItsTurnBackUnwinds) {
  ASSERT_TRUE(Advance(0));
  const uint64_t t0 = KernelNowNs();
  bool b_retook = false, b_unwound = false;
  uint64_t c_took_at = 0;
  sc_core::sc_process_handle b = sc_core::sc_spawn(
      [&] {
        struct Unwound {
          bool* flag;
          ~Unwound() { *flag = sc_core::sc_get_current_process_handle().is_unwinding(); }
        } mark{&b_unwound};
        ModelCall call(ModelCall::Kind::kWait);
        ASSERT_TRUE(call.ok());
        TurnYield yield;
        sc_core::wait(Ns(10));  // A takes the turn meanwhile and holds it to 101 ns
        yield.Retake();         // waits for A: killed at 50 ns
        b_retook = true;
      },
      sc_core::sc_gen_unique_name("b"));
  sc_core::sc_spawn(
      [&] {
        sc_core::wait(Ns(1));
        ModelCall call;  // a call that waits inside while it holds the turn (rxe's post)
        sc_core::wait(Ns(100));
      },
      sc_core::sc_gen_unique_name("a"));
  sc_core::sc_spawn(
      [&] {
        sc_core::wait(Ns(50));
        b.kill();
        sc_core::wait(Ns(150));
        ModelCall call;  // the turn is free: no wait
        c_took_at = KernelNowNs();
      },
      sc_core::sc_gen_unique_name("c"));
  sc_core::sc_start(Ns(300));
  EXPECT_FALSE(b_retook);
  EXPECT_TRUE(b_unwound);
  EXPECT_EQ(c_took_at, t0 + 200);
  EXPECT_FALSE(ModelCall::UnderWay());
}

// Contract 7: a call begun outside the simulation (sc_main's set-up) may run the model's
// own sc_start; a thread's call then waits until it returned, and a method's is refused.
TEST(SimKernel, ACallBegunOutsideRunsAloneInItsOwnStart) {
  ASSERT_TRUE(Advance(0));
  bool outside_running = false, thread_ran_inside = true, thread_ran = false;
  bool method_ok = true, method_ran = false, under_way_seen = false;
  uint64_t thread_at = 0;
  sc_core::sc_spawn(
      [&] {
        under_way_seen = ModelCall::UnderWay();
        ModelCall call;
        thread_ran = call.ok();
        thread_ran_inside = outside_running;
        thread_at = KernelNowNs();
      },
      sc_core::sc_gen_unique_name("thread"));
  sc_core::sc_spawn_options opts;
  opts.spawn_method();
  sc_core::sc_spawn(
      [&] {
        ModelCall call;
        method_ok = call.ok();
        method_ran = true;
      },
      sc_core::sc_gen_unique_name("method"), &opts);
  uint64_t outside_end = 0;
  {
    ModelCall outside;  // as a verbs call of sc_main whose wait runs sc_start
    ASSERT_TRUE(outside.ok());
    outside_running = true;
    sc_core::sc_start(Ns(20));
    outside_running = false;
    outside_end = KernelNowNs();
  }
  EXPECT_FALSE(thread_ran) << "the thread's call ran inside the call begun outside";
  EXPECT_TRUE(method_ran);
  EXPECT_FALSE(method_ok) << "the method's call ran inside the call begun outside";
  EXPECT_TRUE(under_way_seen);
  sc_core::sc_start(Ns(20));  // the program's own run: the thread's turn
  EXPECT_TRUE(thread_ran);
  EXPECT_FALSE(thread_ran_inside);
  EXPECT_EQ(thread_at, outside_end);
}

// The other way round: sc_start returned while a thread waits inside its call (rxe's post
// does); a call of sc_main's then would run inside that call, and is refused.
TEST(SimKernel, ACallOutsideWhileAThreadsCallIsUnderWayIsRefused) {
  ASSERT_TRUE(Advance(0));
  bool held = false;
  sc_core::sc_spawn(
      [&] {
        ModelCall call;
        held = call.ok();
        sc_core::wait(Ns(100));
      },
      sc_core::sc_gen_unique_name("holder"));
  sc_core::sc_start(Ns(10));
  ASSERT_TRUE(held);
  {
    ModelCall outside;
    EXPECT_FALSE(outside.ok()) << "ran inside the thread's call";
    EXPECT_TRUE(ModelCall::UnderWay());
  }
  sc_core::sc_start(Ns(200));  // the thread's call ends
  ModelCall after;
  EXPECT_TRUE(after.ok());
}

// The same with a reset instead of a kill: the thread starts again and takes the turn when
// the holder gives it up.
TEST(SimKernel, AThreadResetWhileItTakesItsTurnBackStartsAgain) {
  ASSERT_TRUE(Advance(0));
  const uint64_t t0 = KernelNowNs();
  int runs = 0;
  bool retook = false;
  uint64_t second_took_at = 0;
  sc_core::sc_process_handle b = sc_core::sc_spawn(
      [&] {
        if (runs++ > 0) {  // after the reset
          ModelCall call;
          second_took_at = KernelNowNs();
          return;
        }
        ModelCall call(ModelCall::Kind::kWait);
        TurnYield yield;
        sc_core::wait(Ns(10));
        yield.Retake();
        retook = true;
      },
      sc_core::sc_gen_unique_name("rb"));
  sc_core::sc_spawn(
      [&] {
        sc_core::wait(Ns(1));
        ModelCall call;
        sc_core::wait(Ns(100));
      },
      sc_core::sc_gen_unique_name("ra"));
  sc_core::sc_spawn(
      [&] {
        sc_core::wait(Ns(50));
        b.reset();
      },
      sc_core::sc_gen_unique_name("rc"));
  sc_core::sc_start(Ns(300));
  EXPECT_FALSE(retook);
  EXPECT_EQ(runs, 2);
  EXPECT_EQ(second_took_at, t0 + 101);
  EXPECT_FALSE(ModelCall::UnderWay());
}

}  // namespace
}  // namespace qptwin::model::sim
