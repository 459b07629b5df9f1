// The engine's sources on SystemC's clock (model/sim/sc_clock.h): order by key, one wake-up
// per source however many items it holds.
#include "model/engine/event_source.h"

#include <gtest/gtest.h>

#include <string>

#include "model/sim/sc_clock.h"

namespace qptwin::model::engine {
namespace {

using sim::ScClock;

constexpr uint64_t kLong = 1'000'000'000;  // far past every item here (1 s)

TEST(EventFifo, RunsInSchedulingOrderAgainstOtherSources) {
  ScClock q;
  std::string log;
  EventFifo<char> fifo(&q, [&](char& c) { log += c; });
  EventFifo<char> other(&q, [&](char& c) { log += c; });
  other.Push(10, 'a');
  fifo.Push(10, 'b');  // scheduled after 'a' at the same time: runs after it
  other.Push(10, 'c');
  fifo.Push(20, 'd');
  EventTimers<char> timers(&q, [&](char& c) { log += c; });
  timers.Push(15, 'e');
  q.AdvanceBy(100);
  EXPECT_EQ(log, "abced");
  EXPECT_EQ(fifo.out_of_order(), 0u);
}

TEST(EventFifo, HoldsOneWakeUpHoweverManyItems) {
  ScClock q;
  uint64_t ran = 0;
  EventFifo<int> fifo(&q, [&](int&) { ++ran; });
  for (int i = 0; i < 100000; ++i) fifo.Push(uint64_t(i) * 3, i);
  EXPECT_EQ(q.pending(), 1u);
  EXPECT_EQ(fifo.size(), 100000u);
  q.AdvanceBy(150000);
  EXPECT_EQ(ran, 50001u);
  EXPECT_EQ(q.pending(), 1u);
  q.AdvanceBy(kLong);
  EXPECT_EQ(ran, 100000u);
  EXPECT_EQ(q.pending(), 0u);
}

TEST(EventFifo, AnEarlierPushTakesItsPlaceByKey) {
  ScClock q;
  std::string log;
  EventFifo<char> fifo(&q, [&](char& c) { log += c; });
  fifo.Push(20, 'c');
  fifo.Push(10, 'a');  // would break the FIFO
  fifo.Push(10, 'b');  // same time as 'a', scheduled after it
  q.AdvanceBy(30);
  EXPECT_EQ(log, "abc");
  EXPECT_EQ(fifo.out_of_order(), 2u);
}

TEST(EventFifo, AHandlerMayPushOntoItsOwnFifo) {
  ScClock q;
  int left = 5;
  EventFifo<int>* self = nullptr;
  EventFifo<int> fifo(&q, [&](int& n) {
    if (--left > 0) self->Push(q.Now(), n + 1);
  });
  self = &fifo;
  fifo.Push(0, 0);
  q.AdvanceBy(0);
  EXPECT_EQ(left, 0);
  EXPECT_EQ(q.pending(), 0u);
}

TEST(EventTimers, RunInTimeOrderWithOneWakeUp) {
  ScClock q;
  std::string log;
  EventTimers<char> timers(&q, [&](char& c) { log += c; });
  timers.Push(30, 'c');
  timers.Push(10, 'a');  // earlier than the earliest: replaces the wake-up
  timers.Push(20, 'b');
  EXPECT_EQ(timers.size(), 3u);
  EXPECT_EQ(q.pending(), 1u);
  EventFifo<char> other(&q, [&](char& c) { log += c; });
  other.Push(20, 'x');  // after 'b' (scheduled later, same time)
  q.AdvanceBy(100);
  EXPECT_EQ(log, "abxc");
  EXPECT_EQ(q.pending(), 0u);
}

TEST(EventTimers, ManyTimersHoldOneWakeUp) {
  ScClock q;
  uint64_t ran = 0;
  uint64_t last = 0;
  bool ordered = true;
  EventTimers<uint64_t> timers(&q, [&](uint64_t& t) {
    ordered = ordered && t >= last && q.Now() == t;
    last = t;
    ++ran;
  });
  // Deadlines in a scrambled order (one per QP, as the transport timers).
  for (uint64_t i = 0; i < 65536; ++i) {
    uint64_t t = 1000 + (i * 40503) % 65536;
    timers.Push(t, t);
  }
  EXPECT_EQ(q.pending(), 1u);  // one wake-up, never one per timer
  q.AdvanceBy(kLong);
  EXPECT_EQ(ran, 65536u);
  EXPECT_TRUE(ordered);
  EXPECT_EQ(q.pending(), 0u);
}

}  // namespace
}  // namespace qptwin::model::engine
