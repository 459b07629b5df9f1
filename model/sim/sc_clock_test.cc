// ScClock: SystemC's scheduler as the engine's clock. Against a reference heap of keys (the
// engine's former clock, kept here as the oracle) the same sources, pushes and waits give
// the same runs in the same order at the same times (event_queue.h contract 1), whatever
// SystemC's own order.
#include "model/sim/sc_clock.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include <systemc>
#include <tlm>

#include "model/engine/event_queue.h"
#include "model/engine/event_source.h"
#include "model/sim/kernel.h"

namespace qptwin::model::sim {
namespace {

using engine::EventFifo;
using engine::EventQueue;
using engine::EventTimers;

// The reference: every wake-up in a binary heap by Key, stale ones kept (they run nothing).
class HeapQueue : public EventQueue {
 public:
  void Wake(Source* source, const Key& key) override {
    heap_.push_back({key, source});
    std::push_heap(heap_.begin(), heap_.end(), Later{});
  }
  void AdvanceBy(uint64_t delta_ns) override { (void)RunUntil([] { return false; }, now_ + delta_ns); }
  bool RunUntil(const std::function<bool()>& done, uint64_t deadline_ns) override {
    for (;;) {
      if (done()) return true;
      if (heap_.empty() || heap_.front().key.time > deadline_ns) break;
      std::pop_heap(heap_.begin(), heap_.end(), Later{});
      const Item item = heap_.back();
      heap_.pop_back();
      now_ = std::max(now_, item.key.time);
      item.source->RunDue(item.key);
    }
    now_ = std::max(now_, deadline_ns);
    return done();
  }

 private:
  struct Item {
    Key key;
    Source* source;
  };
  struct Later {
    bool operator()(const Item& a, const Item& b) const { return b.key < a.key; }
  };
  std::vector<Item> heap_;
};

TEST(ScClock, SameTimeRunsInSchedulingOrderAcrossSources) {
  ScClock c;
  std::string log;
  EventFifo<char> a(&c, [&](char& x) { log += x; });
  EventFifo<char> b(&c, [&](char& x) { log += x; });
  EventTimers<char> t(&c, [&](char& x) { log += x; });
  b.Push(10, '1');
  a.Push(10, '2');
  t.Push(10, '3');
  a.Push(10, '4');  // a's second item: woken inside the step, with an older key than '5'
  b.Push(10, '5');
  t.Push(5, '0');
  c.AdvanceBy(10);
  EXPECT_EQ(log, "012345");
  EXPECT_EQ(c.Now(), 10u);
}

TEST(ScClock, RunUntilStopsRightAfterTheSourceThatMakesItTrue) {
  ScClock c;
  std::string log;
  EventFifo<char> a(&c, [&](char& x) { log += x; });
  EventFifo<char> b(&c, [&](char& x) { log += x; });
  a.Push(50, 'a');
  b.Push(50, 'b');  // due at the same time, after 'a': waits for the next run
  b.Push(60, 'c');
  EXPECT_TRUE(c.RunUntil([&] { return !log.empty(); }, 1000));
  EXPECT_EQ(log, "a");
  EXPECT_EQ(c.Now(), 50u);
  a.Push(c.Now(), 'd');  // scheduled now, after 'b'
  EXPECT_TRUE(c.RunUntil([&] { return log.size() >= 3; }, 1000));
  EXPECT_EQ(log, "abd");
  EXPECT_EQ(c.Now(), 50u);
  EXPECT_FALSE(c.RunUntil([] { return false; }, 60));  // runs what is due at the deadline
  EXPECT_EQ(log, "abdc");
  EXPECT_EQ(c.Now(), 60u);
  EXPECT_FALSE(c.RunUntil([] { return false; }, 200));
  EXPECT_EQ(c.Now(), 200u);
}

TEST(ScClock, TwoClocksSideBySideKeepTheirOwnTime) {
  auto x = std::make_unique<ScClock>();
  auto y = std::make_unique<ScClock>();
  std::string log;
  EventFifo<char> fx(x.get(), [&](char& v) { log += v; });
  EventFifo<char> fy(y.get(), [&](char& v) { log += v; });
  fx.Push(100, 'x');
  fy.Push(30, 'y');
  x->AdvanceBy(50);  // y's source is not run by x's sc_start
  EXPECT_EQ(log, "");
  EXPECT_EQ(x->Now(), 50u);
  EXPECT_EQ(y->Now(), 0u);
  y->AdvanceBy(30);
  EXPECT_EQ(log, "y");
  EXPECT_EQ(y->Now(), 30u);
  x->AdvanceBy(50);
  EXPECT_EQ(log, "yx");
  EXPECT_EQ(x->Now(), 100u);
  Advance(1000);  // the kernel moved by someone else: x's time does not
  fx.Push(x->Now() + 5, 'z');
  x->AdvanceBy(5);
  EXPECT_EQ(log, "yxz");
  EXPECT_EQ(x->Now(), 105u);
}

// A random mix of FIFOs and timers whose handlers push more, run on both clocks with the
// same stops: the logs (item, time) are identical.
std::string RandomRun(EventQueue* q, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::string log;
  std::vector<std::unique_ptr<EventFifo<int>>> fifos;
  std::vector<std::unique_ptr<EventTimers<int>>> timers;
  int next = 0;
  auto handler = [&](int& v) {
    log += std::to_string(v) + "@" + std::to_string(q->Now()) + " ";
    if (v % 3 == 0 && next < 4000) {
      const uint64_t when = q->Now() + rng() % 4;  // often now: same-time chains
      const size_t k = rng() % 3;
      if (rng() % 2) {
        fifos[k]->Push(std::max(when, fifos[k]->back_time()), next++);
      } else {
        timers[k]->Push(when, next++);
      }
    }
  };
  for (int i = 0; i < 3; ++i) {
    fifos.push_back(std::make_unique<EventFifo<int>>(q, handler));
    timers.push_back(std::make_unique<EventTimers<int>>(q, handler));
  }
  for (int i = 0; i < 200; ++i) {
    const uint64_t when = q->Now() + rng() % 50;
    if (rng() % 2) {
      fifos[rng() % 3]->Push(when, next++);  // sometimes out of order (contract 2)
    } else {
      timers[rng() % 3]->Push(when, next++);
    }
    if (rng() % 5 == 0) {
      const size_t stop_after = log.size() + 1 + rng() % 40;
      const bool done = q->RunUntil([&] { return log.size() >= stop_after; }, q->Now() + rng() % 30);
      log += done ? "| " : "/ ";
    }
  }
  q->AdvanceBy(1'000'000);
  return log;
}

// Contract 7: whatever the quantum (0: no decoupling; small: a mix of running ahead and
// waking; the default 1 us: these schedules run ahead almost always), the same runs.
TEST(ScClock, RandomSchedulesRunExactlyAsOnTheHeap) {
  const uint64_t saved = ScClock::QuantumNs();
  for (uint64_t quantum : {uint64_t{0}, uint64_t{1}, uint64_t{3}, uint64_t{17}, saved}) {
    ScClock::SetQuantumNs(quantum);
    for (uint64_t seed = 1; seed <= 40; ++seed) {
      HeapQueue heap;
      ScClock sc;
      const std::string a = RandomRun(&heap, seed);
      const std::string b = RandomRun(&sc, seed);
      ASSERT_EQ(a, b) << "seed " << seed << ", quantum " << quantum;
      EXPECT_EQ(heap.Now(), sc.Now());
    }
  }
  ScClock::SetQuantumNs(saved);
}

// Contract 7: a Step runs wake-ups up to a quantum ahead of SystemC's time, each at its own
// time; one further off gets its own activation; a wait ends with both times at its end.
TEST(ScClock, RunsAheadOfTheKernelByAtMostTheQuantum) {
  const uint64_t saved = ScClock::QuantumNs();
  ScClock::SetQuantumNs(100);
  {
    ScClock c;
    std::vector<std::string> seen;
    EventFifo<char> f(&c, [&](char& v) {
      seen.push_back(std::string(1, v) + "@" + std::to_string(c.Now()) + "+" +
                     std::to_string(ScClock::AheadNs()));
    });
    f.Push(10, 'a');
    f.Push(50, 'b');   // 40 ns ahead of the Step that runs 'a'
    f.Push(110, 'c');  // 100 ns ahead: still within the quantum
    f.Push(300, 'd');  // beyond it: its own activation
    EXPECT_FALSE(c.RunUntil([] { return false; }, 1000));
    EXPECT_EQ(seen, (std::vector<std::string>{"a@10+0", "b@50+40", "c@110+100", "d@300+0"}));
    EXPECT_EQ(c.Now(), 1000u);
    EXPECT_EQ(ScClock::AheadNs(), 0u) << "the kernel ran to the deadline";
    // A wait that ends ahead of the kernel (done() after a run ahead) keeps its time.
    seen.clear();
    f.Push(1010, 'e');
    f.Push(1060, 'f');
    EXPECT_TRUE(c.RunUntil([&] { return seen.size() == 2; }, 5000));
    EXPECT_EQ(seen, (std::vector<std::string>{"e@1010+0", "f@1060+50"}));
    EXPECT_EQ(c.Now(), 1060u);
    EXPECT_EQ(ScClock::AheadNs(), 50u) << "a wait that ends ahead stays ahead";
    EXPECT_EQ(ScClock::AheadNsAt(1060), 50u) << "a transfer of this World now";
    EXPECT_EQ(ScClock::AheadNsAt(1010), 0u) << "another time: not this World's transfer";
    f.Push(1060, 'g');  // at the clock's time, 50 ns ahead of the kernel's: the kernel
    EXPECT_FALSE(c.RunUntil([] { return false; }, 1060));  // catches up to the deadline
    EXPECT_EQ(seen.back(), "g@1060+0");
    EXPECT_EQ(c.Now(), 1060u);
  }
  ScClock::SetQuantumNs(saved);
}

// Contract 7: without an override the quantum is TLM-2.0's global quantum (1 us while that
// is zero), so a platform that sets it for its LT initiators sets it for the NICs too.
TEST(ScClock, TheQuantumIsTlmsGlobalQuantum) {
  const uint64_t saved = ScClock::QuantumNs();
  const sc_core::sc_time saved_global = tlm::tlm_global_quantum::instance().get();
  ScClock::UseGlobalQuantum();
  tlm::tlm_global_quantum::instance().set(sc_core::SC_ZERO_TIME);
  EXPECT_EQ(ScClock::QuantumNs(), ScClock::kDefaultQuantumNs);
  tlm::tlm_global_quantum::instance().set(sc_core::sc_time(100, sc_core::SC_NS));
  EXPECT_EQ(ScClock::QuantumNs(), 100u);
  {
    ScClock c;
    std::vector<std::string> seen;
    EventFifo<char> f(&c, [&](char& v) {
      seen.push_back(std::string(1, v) + "@" + std::to_string(c.Now()) + "+" +
                     std::to_string(ScClock::AheadNs()));
    });
    const uint64_t t0 = c.Now();
    f.Push(t0 + 10, 'a');
    f.Push(t0 + 110, 'b');  // 100 ns ahead of the Step that runs 'a': within the quantum
    f.Push(t0 + 300, 'c');  // beyond it: its own activation
    EXPECT_FALSE(c.RunUntil([] { return false; }, t0 + 1000));
    EXPECT_EQ(seen, (std::vector<std::string>{"a@" + std::to_string(t0 + 10) + "+0",
                                              "b@" + std::to_string(t0 + 110) + "+100",
                                              "c@" + std::to_string(t0 + 300) + "+0"}));
  }
  ScClock::SetQuantumNs(5);
  EXPECT_EQ(ScClock::QuantumNs(), 5u) << "the override wins";
  tlm::tlm_global_quantum::instance().set(saved_global);
  ScClock::SetQuantumNs(saved);
}

// Contract 8: inside a simulation the program runs itself (here the test calls sc_start, as
// a user's sc_main would), a thread process's RunUntil waits with SystemC's wait(): it
// ends at the wake-up that made done() hold, or at the deadline, and the clock goes on
// following the kernel afterwards; a method's RunUntil lets no time pass.
TEST(ScClock, InsideAUsersSimulationAThreadWaitsWithSystemCsWait) {
  ScClock c;
  std::vector<std::pair<int, uint64_t>> ran;  // item, the clock's time
  EventFifo<int> f(&c, [&](int& x) { ran.emplace_back(x, c.Now()); });
  f.Push(500, 1);
  f.Push(2000, 2);
  const uint64_t base = KernelNowNs();
  struct {
    bool first = false, second = true, in_method = true;
    uint64_t t1 = 0, k1 = 0, t2 = 0, k2 = 0, method_now = 0;
    int ticks = 0;
  } r;
  sc_core::sc_spawn(
      [&] {
        r.first = c.RunUntil([&] { return ran.size() >= 1; }, 100000);
        r.t1 = c.Now();
        r.k1 = KernelNowNs() - base;
        r.second = c.RunUntil([&] { return ran.size() >= 2; }, 1500);
        r.t2 = c.Now();
        r.k2 = KernelNowNs() - base;
      },
      sc_core::sc_gen_unique_name("user_driver"));
  sc_core::sc_spawn(
      [&] {  // ends before the test does (the processes outlive it)
        for (int i = 0; i < 29; ++i) {
          sc_core::wait(100, sc_core::SC_NS);
          ++r.ticks;
        }
      },
      sc_core::sc_gen_unique_name("user_ticker"));
  sc_core::sc_spawn_options method;
  method.spawn_method();
  sc_core::sc_spawn(
      [&] {
        r.in_method = c.RunUntil([] { return false; }, 700);
        r.method_now = c.Now();
      },
      sc_core::sc_gen_unique_name("user_method"), &method);
  sc_core::sc_start(sc_core::sc_time(3000, sc_core::SC_NS));
  EXPECT_TRUE(r.first);
  EXPECT_EQ(r.t1, 500u);
  EXPECT_EQ(r.k1, 500u) << "the thread resumes at the wake-up's time";
  EXPECT_FALSE(r.second);
  EXPECT_EQ(r.t2, 1500u);
  EXPECT_EQ(r.k2, 1500u) << "the thread resumes at the deadline";
  EXPECT_FALSE(r.in_method);
  EXPECT_EQ(r.method_now, 0u) << "a method cannot wait: no time passed";
  ASSERT_EQ(ran.size(), 2u);
  EXPECT_EQ(ran[1], std::make_pair(2, uint64_t{2000})) << "the clock follows the kernel after the wait";
  EXPECT_EQ(r.ticks, 29) << "the user's own process ran meanwhile";
}

// Contract 8 with two threads waiting at once (a driver per host): each wakes at the wake-up
// that made its own condition hold, the other one waiting on.
TEST(ScClock, InsideAUsersSimulationTwoThreadsWaitForTheirOwnConditions) {
  ScClock c;
  std::vector<int> ran;
  EventFifo<int> f(&c, [&](int& x) { ran.push_back(x); });
  f.Push(300, 1);
  f.Push(800, 2);
  f.Push(1200, 3);
  const uint64_t base = KernelNowNs();
  auto has = [&](int x) { return std::find(ran.begin(), ran.end(), x) != ran.end(); };
  struct {
    bool a = false, b = false, b_late = true;
    uint64_t ta = 0, tb = 0, tb_late = 0;
  } r;
  sc_core::sc_spawn(
      [&] {
        r.b = c.RunUntil([&] { return has(3); }, 100000);  // waits first, wakes last
        r.tb = KernelNowNs() - base;
      },
      sc_core::sc_gen_unique_name("host_b"));
  sc_core::sc_spawn(
      [&] {
        r.a = c.RunUntil([&] { return has(2); }, 100000);
        r.ta = KernelNowNs() - base;
        r.b_late = c.RunUntil([] { return false; }, 1000);  // its deadline, as b waits on
        r.tb_late = KernelNowNs() - base;
      },
      sc_core::sc_gen_unique_name("host_a"));
  sc_core::sc_start(sc_core::sc_time(2000, sc_core::SC_NS));
  EXPECT_TRUE(r.a);
  EXPECT_EQ(r.ta, 800u);
  EXPECT_FALSE(r.b_late);
  EXPECT_EQ(r.tb_late, 1000u);
  EXPECT_TRUE(r.b);
  EXPECT_EQ(r.tb, 1200u);
  EXPECT_EQ(ran, (std::vector<int>{1, 2, 3}));
}

}  // namespace
}  // namespace qptwin::model::sim
