#include "model/engine/recv_queue.h"

#include <gtest/gtest.h>

#include <memory>
#include <vector>

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
    ASSERT_TRUE(q.push_back(Recv(i, {{0x1000 * i, static_cast<uint32_t>(i), 7}, {0x2000, 3, 9}})));
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
  ASSERT_TRUE(q.push_back(Recv(1, {{0x10, 1, 1}})));
  ASSERT_TRUE(q.push_back(Recv(2, {})));
  ASSERT_TRUE(q.push_back(Recv(3, {{0x30, 3, 3}, {0x31, 4, 4}, {0x32, 5, 5}, {0x33, 6, 6}, {0x34, 7, 7}})));
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
  ASSERT_TRUE(q.push_back(Recv(5, {{0x50, 8, 2}})));
  ASSERT_TRUE(q.push_back(Recv(6, {{0x60, 8, 2}})));
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
    for (int i = 0; i < 3; ++i, ++in) ASSERT_TRUE(q.push_back(Recv(in, {{in + 1, 1, 1}})));
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
  ASSERT_TRUE(q.push_back(Recv(77, {{1, 1, 1}})));  // the swapped-out queue works from nothing
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
  for (uint64_t i = 0; i < 3; ++i) ASSERT_TRUE(q.push_back(Recv(i, {{0x10, 1, 1}})));
  ASSERT_TRUE(q.Ready(bus));  // the record now says 3: one read for the three
  EXPECT_EQ(bus.reads, 3);
  for (uint64_t i = 0; i < 3; ++i) {
    ASSERT_TRUE(q.Ready(bus));
    RecvWr r;
    ASSERT_TRUE(q.Fetch(bus, &r));
    EXPECT_EQ(r.wr_id, i);
  }
  EXPECT_EQ(bus.reads, 3 + 3);  // three WQE fetches, no record read between them
  ASSERT_TRUE(q.push_back(Recv(3, {{0x10, 1, 1}})));
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
  ASSERT_TRUE(other.push_back(Recv(4, {{0x10, 1, 1}})));
  RecvWr r;
  ASSERT_TRUE(other.Fetch(bus, &r));  // without Ready: the NIC's copy stays behind
  EXPECT_FALSE(other.Ready(bus));     // and shows no receive, as the record does
}

// A bus that can fail the record's read (4 bytes) or a WQE's, and that shows the NIC another
// wr_id in each image it reads (header bytes 8-15, contract 2): the NIC must work from what it
// reads, as from WQEs a driver of its own wrote.
class ImageBus : public HostBus {
 public:
  bool Read(uint64_t addr, uint8_t* dst, uint64_t len) override {
    const bool record = len == 4;
    (record ? record_reads : wqe_reads)++;
    if (record ? fail_record : fail_wqe) return false;
    if (!DirectBus::Instance().Read(addr, dst, len)) return false;
    if (!record && len >= 16) {
      uint64_t id = 0;
      for (int i = 0; i < 8; ++i) id |= uint64_t{dst[8 + i]} << (8 * i);
      id += wr_id_offset;
      for (int i = 0; i < 8; ++i) dst[8 + i] = static_cast<uint8_t>(id >> (8 * i));
    }
    return true;
  }
  bool Write(uint64_t addr, const uint8_t* src, uint64_t len) override {
    return DirectBus::Instance().Write(addr, src, len);
  }
  int record_reads = 0;
  int wqe_reads = 0;
  bool fail_record = false;
  bool fail_wqe = false;
  uint64_t wr_id_offset = 1000;
};

TEST(RecvQueue, TheNicTakesTheWrIdFromTheImageAndTheRecordOnlyWhenTheReadFailed) {
  RecvQueue q;
  ImageBus bus;
  ASSERT_TRUE(q.push_back(Recv(1, {{0x10, 4, 2}})));
  ASSERT_TRUE(q.push_back(Recv(2, {{0x20, 4, 2}})));
  RecvWr r;
  ASSERT_TRUE(q.Fetch(bus, &r));
  EXPECT_EQ(r.wr_id, 1001u) << "the wr_id the image holds";
  EXPECT_EQ(r.sg_list.at(0).addr, 0x10u);
  bus.fail_wqe = true;
  EXPECT_FALSE(q.Fetch(bus, &r));
  EXPECT_EQ(r.wr_id, 2u) << "the provider's record stands in";
  EXPECT_TRUE(q.empty());
}

TEST(RecvQueue, AFlushReadsTheRecordAndEachImageUpToTheProducer) {
  RecvQueue q;
  ImageBus bus;
  for (uint64_t i = 0; i < 4; ++i) ASSERT_TRUE(q.push_back(Recv(i, {{0x100 * (i + 1), 8, 3}})));
  RecvWr r;
  ASSERT_TRUE(q.Fetch(bus, &r));  // the NIC took receive 0
  bus.wqe_reads = 0;
  Ring<RecvWr> flushed = q.Flush(bus);
  EXPECT_EQ(bus.record_reads, 1);
  EXPECT_EQ(bus.wqe_reads, 3);
  ASSERT_EQ(flushed.size(), 3u);
  for (uint64_t i = 0; i < 3; ++i) {
    EXPECT_EQ(flushed[i].wr_id, 1000 + i + 1);
    EXPECT_EQ(flushed[i].sg_list.at(0).addr, 0x100 * (i + 2));
  }
  EXPECT_TRUE(q.empty());
  EXPECT_EQ(q.slots(), 0u) << "in process memory an emptied queue starts afresh";
  // A slot whose read fails gives its record.
  ASSERT_TRUE(q.push_back(Recv(7, {{0x70, 1, 1}})));
  ASSERT_TRUE(q.push_back(Recv(8, {{0x80, 1, 1}})));
  bus.fail_wqe = true;
  flushed = q.Flush(bus);
  ASSERT_EQ(flushed.size(), 2u);
  EXPECT_EQ(flushed[0].wr_id, 7u);
  EXPECT_EQ(flushed[1].wr_id, 8u);
  bus.fail_wqe = false;
  // The record's read fails: the receives the NIC last saw go, the later stay posted.
  for (uint64_t i = 10; i < 13; ++i) ASSERT_TRUE(q.push_back(Recv(i, {{0x10, 1, 1}})));
  ASSERT_TRUE(q.Ready(bus));  // the NIC read the record: 3
  ASSERT_TRUE(q.push_back(Recv(13, {{0x10, 1, 1}})));
  ASSERT_TRUE(q.push_back(Recv(14, {{0x10, 1, 1}})));
  bus.fail_record = true;
  flushed = q.Flush(bus);
  ASSERT_EQ(flushed.size(), 3u);
  EXPECT_EQ(flushed[2].wr_id, 1012u);
  EXPECT_EQ(q.size(), 2u);
  EXPECT_FALSE(q.Ready(bus)) << "the record still cannot be read";
  bus.fail_record = false;
  ASSERT_TRUE(q.Ready(bus));
  ASSERT_TRUE(q.Fetch(bus, &r));
  EXPECT_EQ(r.wr_id, 1013u);
  flushed = q.Flush(bus);
  ASSERT_EQ(flushed.size(), 1u);
  EXPECT_EQ(flushed[0].wr_id, 1014u);
  EXPECT_TRUE(q.empty());
}

// A queue placed in a block of process memory (queue_memory.h; DirectBus reaches it): `slots`
// receives of one SGE. *record: the doorbell record's address.
struct Placed {
  std::vector<uint8_t> memory = std::vector<uint8_t>(4096);
  RecvQueue q;
  uint64_t record = 0;
  uint64_t ring = 0;
  explicit Placed(size_t slots) {
    const uint64_t base = (reinterpret_cast<uint64_t>(memory.data()) + 63) & ~uint64_t{63};
    auto arena = std::make_shared<QueueArena>(base, 2048);
    QueueBlock block;
    EXPECT_TRUE(QueueBlock::Take(arena, RecvQueue::PlacedBytes(slots, 1), &block));
    record = block.addr() + block.bytes() - QueueArena::kAlign;
    ring = block.addr();
    q.PlaceAt(std::move(block), slots, RecvQueue::PlacedStride(1), DirectBus::Instance());
  }
};

TEST(RecvQueue, APlacedQueueRefusesAReceiveItHasNoRoomFor) {
  // Contract 6 (the posting rules never get here): refused, nothing written, nothing lost.
  Placed placed(2);
  RecvQueue& q = placed.q;
  ASSERT_TRUE(q.push_back(Recv(1, {{0x10, 1, 1}})));
  EXPECT_FALSE(q.push_back(Recv(2, {{0x10, 1, 1}, {0x20, 1, 1}}))) << "wider than a slot";
  ASSERT_TRUE(q.push_back(Recv(3, {{0x30, 1, 1}})));
  EXPECT_FALSE(q.push_back(Recv(4, {{0x40, 1, 1}}))) << "every slot held";
  EXPECT_EQ(q.size(), 2u);
  CountingBus bus;
  ASSERT_TRUE(q.Ready(bus));
  RecvWr r;
  ASSERT_TRUE(q.Fetch(bus, &r));
  EXPECT_EQ(r.wr_id, 1u);
  ASSERT_TRUE(q.Fetch(bus, &r));
  EXPECT_EQ(r.wr_id, 3u);
  EXPECT_FALSE(q.Ready(bus));
}

TEST(RecvQueue, ARecordShowingReceivesNobodyPostedIsReadNotACrash) {
  // A helper's review: a placed queue whose record holds a stale count (PlaceAt's write of
  // 0 failed, or the program wrote it): Ready believed it and Fetch took a record from an
  // empty ring (undefined behaviour). The NIC now reads the slot, as a NIC does.
  Placed placed(4);
  RecvQueue& q = placed.q;
  const uint32_t stale = 2;
  ASSERT_TRUE(
      DirectBus::Instance().Write(placed.record, reinterpret_cast<const uint8_t*>(&stale), 4));
  CountingBus bus;
  ASSERT_TRUE(q.Ready(bus));
  RecvWr r;
  r.wr_id = 99;
  EXPECT_TRUE(q.Fetch(bus, &r));
  EXPECT_EQ(r.wr_id, 0u) << "the zeroed slot's";
  EXPECT_TRUE(r.sg_list.empty());
  bus.fail = true;
  ASSERT_TRUE(q.Ready(bus)) << "the NIC's copy of the record still shows one";
  EXPECT_FALSE(q.Fetch(bus, &r));
  EXPECT_EQ(r.wr_id, 0u) << "nothing known of it";
  bus.fail = false;
  EXPECT_TRUE(q.empty());
  ASSERT_TRUE(q.push_back(Recv(5, {{0x50, 1, 1}})));  // the provider's next receive
  ASSERT_TRUE(q.Ready(bus));
  ASSERT_TRUE(q.Fetch(bus, &r));
  EXPECT_EQ(r.wr_id, 5u);
  EXPECT_TRUE(q.Flush(bus).empty());
}

TEST(RecvQueue, AFlushTakesTheReceivesADriverPostedWithoutARecord) {
  // engine/doorbell_port.h contract 6's receive side: a driver of the program's own writes
  // the images and the record; the provider keeps no record of them. The flush believes
  // the record (as Fetch does) within the ring, and reads each image for its wr_id.
  Placed placed(4);
  RecvQueue& q = placed.q;
  for (uint32_t i = 0; i < 2; ++i) {
    uint8_t image[RecvQueue::kHeaderBytes] = {};
    const uint64_t wr_id = 40 + i;
    std::memcpy(image + 8, &wr_id, 8);
    ASSERT_TRUE(DirectBus::Instance().Write(placed.ring + i * q.stride(), image, sizeof image));
  }
  const uint32_t producer = 2;
  ASSERT_TRUE(DirectBus::Instance().Write(placed.record,
                                          reinterpret_cast<const uint8_t*>(&producer), 4));
  CountingBus bus;
  Ring<RecvWr> flushed = q.Flush(bus);
  ASSERT_EQ(flushed.size(), 2u);
  EXPECT_EQ(flushed[0].wr_id, 40u);
  EXPECT_EQ(flushed[1].wr_id, 41u);
  EXPECT_FALSE(q.Ready(bus)) << "both taken";
  // After the flush a driver's next receive, number 2, is in slot 2 (a review: the
  // flush put the NIC back at slot 0 while the producer counted on).
  {
    uint8_t image[RecvQueue::kHeaderBytes] = {};
    const uint64_t wr_id = 42;
    std::memcpy(image + 8, &wr_id, 8);
    ASSERT_TRUE(DirectBus::Instance().Write(placed.ring + 2 * q.stride(), image, sizeof image));
    const uint32_t three = 3;
    ASSERT_TRUE(DirectBus::Instance().Write(placed.record,
                                            reinterpret_cast<const uint8_t*>(&three), 4));
    ASSERT_TRUE(q.Ready(bus));
    RecvWr r;
    ASSERT_TRUE(q.Fetch(bus, &r));
    EXPECT_EQ(r.wr_id, 42u);
  }
  // A record more than a ring ahead is not believed: the provider's own receives go.
  const uint32_t wild = 1000;
  ASSERT_TRUE(DirectBus::Instance().Write(placed.record,
                                          reinterpret_cast<const uint8_t*>(&wild), 4));
  EXPECT_TRUE(q.Flush(bus).empty());
}

}  // namespace
}  // namespace qptwin::model::engine
