#include "model/engine/event_source.h"

#include <gtest/gtest.h>

#include <string>

namespace qptwin::model::engine {
namespace {

TEST(EventFifo, RunsInTheOrderAtWouldHave) {
  HeapQueue q;
  std::string log;
  EventFifo<char> fifo(&q, [&](char& c) { log += c; });
  q.At(10, [&] { log += 'a'; });
  fifo.Push(10, 'b');  // scheduled after 'a' at the same time: runs after it
  q.At(10, [&] { log += 'c'; });
  fifo.Push(20, 'd');
  q.At(15, [&] { log += 'e'; });
  q.AdvanceBy(100);
  EXPECT_EQ(log, "abced");
  EXPECT_EQ(fifo.out_of_order(), 0u);
}

TEST(EventFifo, HoldsOneWakeUpHoweverManyItems) {
  HeapQueue q;
  uint64_t ran = 0;
  EventFifo<int> fifo(&q, [&](int&) { ++ran; });
  for (int i = 0; i < 100000; ++i) fifo.Push(uint64_t(i) * 3, i);
  EXPECT_EQ(q.Size(), 1u);
  EXPECT_EQ(fifo.size(), 100000u);
  q.AdvanceBy(150000);
  EXPECT_EQ(ran, 50001u);
  EXPECT_EQ(q.Size(), 1u);
  q.AdvanceBy(~uint64_t{0});
  EXPECT_EQ(ran, 100000u);
  EXPECT_TRUE(q.Empty());
}

TEST(EventFifo, AnEarlierPushBecomesAnOrdinaryEventAndKeepsItsPlace) {
  HeapQueue q;
  std::string log;
  EventFifo<char> fifo(&q, [&](char& c) { log += c; });
  fifo.Push(20, 'b');
  fifo.Push(10, 'a');  // would break the FIFO
  q.AdvanceBy(30);
  EXPECT_EQ(log, "ab");
  EXPECT_EQ(fifo.out_of_order(), 1u);
}

TEST(EventFifo, AHandlerMayPushOntoItsOwnFifo) {
  HeapQueue q;
  int left = 5;
  EventFifo<int>* self = nullptr;
  EventFifo<int> fifo(&q, [&](int& n) {
    if (--left > 0) self->Push(q.Now(), n + 1);
  });
  self = &fifo;
  fifo.Push(0, 0);
  q.AdvanceBy(0);
  EXPECT_EQ(left, 0);
  EXPECT_TRUE(q.Empty());
}

TEST(EventTimers, RunInTimeOrderWithOneOrTwoWakeUps) {
  HeapQueue q;
  std::string log;
  EventTimers<char> timers(&q, [&](char& c) { log += c; });
  timers.Push(30, 'c');
  timers.Push(10, 'a');  // earlier than the earliest: a second wake-up
  timers.Push(20, 'b');
  EXPECT_EQ(timers.size(), 3u);
  EXPECT_LE(q.Size(), 2u);
  q.At(20, [&] { log += 'x'; });  // after 'b' (scheduled later, same time)
  q.AdvanceBy(100);
  EXPECT_EQ(log, "abxc");
  EXPECT_TRUE(q.Empty());
}

TEST(EventTimers, ManyTimersKeepTheQueueSmall) {
  HeapQueue q;
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
  EXPECT_LT(q.Size(), 64u);  // a wake-up per new earliest, never one per timer
  q.AdvanceBy(~uint64_t{0});
  EXPECT_EQ(ran, 65536u);
  EXPECT_TRUE(ordered);
  EXPECT_TRUE(q.Empty());
}

}  // namespace
}  // namespace qptwin::model::engine
