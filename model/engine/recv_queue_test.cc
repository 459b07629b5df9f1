#include "model/engine/recv_queue.h"

#include <gtest/gtest.h>

namespace qptwin::model::engine {
namespace {

RecvWr Recv(uint64_t id, std::vector<Sge> sges) {
  RecvWr r;
  r.wr_id = id;
  r.sg_list = std::move(sges);
  return r;
}

// Counts the transfers and can fail them.
class CountingBus : public HostBus {
 public:
  bool Read(uint64_t addr, uint8_t* dst, uint64_t len) override {
    ++reads;
    bytes += len;
    return fail ? false : DirectBus::Instance().Read(addr, dst, len);
  }
  bool Write(uint64_t addr, const uint8_t* src, uint64_t len) override {
    return DirectBus::Instance().Write(addr, src, len);
  }
  int reads = 0;
  uint64_t bytes = 0;
  bool fail = false;
};

TEST(RecvQueue, FetchesTheSgesFromTheImageInOneTransferInOrder) {
  RecvQueue q;
  CountingBus bus;
  for (uint64_t i = 0; i < 10; ++i) {
    q.push_back(Recv(i, {{0x1000 * i, static_cast<uint32_t>(i), 7}, {0x2000, 3, 9}}));
  }
  EXPECT_EQ(q.stride(), RecvQueue::kHeaderBytes + 2 * RecvQueue::kSgeBytes);
  for (uint64_t i = 0; i < 10; ++i) {
    RecvWr r;
    ASSERT_TRUE(q.Fetch(bus, &r));
    EXPECT_EQ(r.wr_id, i);
    ASSERT_EQ(r.sg_list.size(), 2u);
    EXPECT_EQ(r.sg_list[0].addr, 0x1000 * i);
    EXPECT_EQ(r.sg_list[0].length, i);
    EXPECT_EQ(r.sg_list[0].lkey, 7u);
    EXPECT_EQ(r.sg_list[1].lkey, 9u);
  }
  EXPECT_EQ(bus.reads, 10);
  EXPECT_EQ(bus.bytes, 10 * q.stride());
  EXPECT_TRUE(q.empty());
}

TEST(RecvQueue, ALargerWqeWidensTheSlotsAndKeepsTheOlderOnes) {
  RecvQueue q;
  CountingBus bus;
  q.push_back(Recv(1, {{0x10, 1, 1}}));
  q.push_back(Recv(2, {}));
  q.push_back(Recv(3, {{0x30, 3, 3}, {0x31, 4, 4}, {0x32, 5, 5}, {0x33, 6, 6}, {0x34, 7, 7}}));
  RecvWr r;
  ASSERT_TRUE(q.Fetch(bus, &r));
  EXPECT_EQ(r.wr_id, 1u);
  ASSERT_EQ(r.sg_list.size(), 1u);
  EXPECT_EQ(r.sg_list[0].addr, 0x10u);
  ASSERT_TRUE(q.Fetch(bus, &r));
  EXPECT_EQ(r.wr_id, 2u);
  EXPECT_TRUE(r.sg_list.empty());
  ASSERT_TRUE(q.Fetch(bus, &r));  // a slot wider than the small stack buffer
  ASSERT_EQ(r.sg_list.size(), 5u);
  EXPECT_EQ(r.sg_list[4].addr, 0x34u);
  EXPECT_EQ(r.sg_list[4].length, 7u);
}

TEST(RecvQueue, AFailedFetchTakesTheReceiveWithItsRecord) {
  RecvQueue q;
  CountingBus bus;
  bus.fail = true;
  q.push_back(Recv(5, {{0x50, 8, 2}}));
  q.push_back(Recv(6, {{0x60, 8, 2}}));
  RecvWr r;
  EXPECT_FALSE(q.Fetch(bus, &r));
  EXPECT_EQ(r.wr_id, 5u);
  EXPECT_EQ(q.size(), 1u);
  bus.fail = false;
  ASSERT_TRUE(q.Fetch(bus, &r));
  EXPECT_EQ(r.wr_id, 6u);
}

TEST(RecvQueue, StorageFollowsTheReceivesHeldAndSurvivesWrapAndSwap) {
  RecvQueue q;
  CountingBus bus;
  uint64_t in = 0, out = 0;
  for (int round = 0; round < 50; ++round) {
    for (int i = 0; i < 3; ++i, ++in) q.push_back(Recv(in, {{in + 1, 1, 1}}));
    for (int i = 0; i < 2; ++i) {
      RecvWr r;
      ASSERT_TRUE(q.Fetch(bus, &r));
      EXPECT_EQ(r.wr_id, out);
      EXPECT_EQ(r.sg_list.at(0).addr, out + 1);
      ++out;
    }
  }
  EXPECT_LE(q.slots(), 64u);  // 50 held at the end
  RecvQueue other;
  other.swap(q);
  EXPECT_TRUE(q.empty());
  EXPECT_EQ(other.size(), in - out);
  RecvWr r;
  ASSERT_TRUE(other.Fetch(bus, &r));
  EXPECT_EQ(r.wr_id, out);
  q.push_back(Recv(77, {{1, 1, 1}}));  // the swapped-out queue works from nothing
  ASSERT_TRUE(q.Fetch(bus, &r));
  EXPECT_EQ(r.wr_id, 77u);
}

TEST(RecvQueue, TheNicReadsTheDoorbellRecordOnlyWhenItKnowsOfNoReceive) {
  RecvQueue q;
  CountingBus bus;
  EXPECT_FALSE(q.Ready(bus));  // nothing posted: the record says 0
  EXPECT_EQ(bus.reads, 1);
  EXPECT_EQ(bus.bytes, 4u);
  EXPECT_FALSE(q.Ready(bus));  // each look at an empty queue reads it again (an RNR round)
  EXPECT_EQ(bus.reads, 2);
  for (uint64_t i = 0; i < 3; ++i) q.push_back(Recv(i, {{0x10, 1, 1}}));
  ASSERT_TRUE(q.Ready(bus));  // the record now says 3: one read for the three
  EXPECT_EQ(bus.reads, 3);
  for (uint64_t i = 0; i < 3; ++i) {
    ASSERT_TRUE(q.Ready(bus));
    RecvWr r;
    ASSERT_TRUE(q.Fetch(bus, &r));
    EXPECT_EQ(r.wr_id, i);
  }
  EXPECT_EQ(bus.reads, 3 + 3);  // three WQE fetches, no record read between them
  q.push_back(Recv(3, {{0x10, 1, 1}}));
  bus.fail = true;  // the record's read fails: the NIC sees no receive
  EXPECT_FALSE(q.Ready(bus));
  EXPECT_EQ(q.size(), 1u);
  bus.fail = false;
  EXPECT_TRUE(q.Ready(bus));
  RecvQueue other;
  other.swap(q);  // a flush: the queue starts again from producer index 0
  EXPECT_FALSE(q.Ready(bus));
  EXPECT_TRUE(other.Ready(bus));
  other.clear();
  EXPECT_FALSE(other.Ready(bus));
  other.push_back(Recv(4, {{0x10, 1, 1}}));
  RecvWr r;
  ASSERT_TRUE(other.Fetch(bus, &r));  // without Ready: the NIC's copy stays behind
  EXPECT_FALSE(other.Ready(bus));     // and shows no receive, as the record does
}

}  // namespace
}  // namespace qptwin::model::engine
