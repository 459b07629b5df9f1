#include "model/engine/cq.h"

#include <gtest/gtest.h>

#include <cstring>

namespace qptwin::model::engine {
namespace {

TEST(Cq, FullQueueRefusesAndStaysInError) {
  Cq cq(1, 1, 2, 0);
  WorkCompletion wc;
  EXPECT_TRUE(cq.Push(wc));
  EXPECT_TRUE(cq.Push(wc));
  EXPECT_FALSE(cq.Push(wc));
  EXPECT_TRUE(cq.in_error());
  WorkCompletion out[4];
  EXPECT_EQ(cq.Poll(4, out), 2);
  EXPECT_FALSE(cq.Push(wc));
}

TEST(Cq, NonStickyCqAcceptsAgainOnceThereIsRoom) {
  Cq cq(1, 1, 1, 0, /*sticky_error=*/false);
  WorkCompletion wc;
  EXPECT_TRUE(cq.Push(wc));
  EXPECT_FALSE(cq.Push(wc));
  WorkCompletion out;
  EXPECT_EQ(cq.Poll(1, &out), 1);
  EXPECT_TRUE(cq.Push(wc));
}

TEST(Cq, PollReturnsInOrder) {
  Cq cq(1, 1, 8, 0);
  for (uint64_t i = 0; i < 5; ++i) {
    WorkCompletion wc;
    wc.wr_id = i;
    ASSERT_TRUE(cq.Push(wc));
  }
  WorkCompletion out[3];
  ASSERT_EQ(cq.Poll(3, out), 3);
  EXPECT_EQ(out[0].wr_id, 0u);
  EXPECT_EQ(out[2].wr_id, 2u);
  EXPECT_EQ(cq.size(), 2u);
}

TEST(Cq, SolicitedOnlyArmIgnoresPlainCompletionsAndFiresOnce) {
  Cq cq(1, 1, 8, 3);
  EXPECT_FALSE(cq.TakeNotify(true, false));  // not armed
  cq.Arm(true);
  EXPECT_FALSE(cq.TakeNotify(false, false));
  EXPECT_TRUE(cq.TakeNotify(false, true));  // errors always wake
  EXPECT_FALSE(cq.TakeNotify(true, false));  // disarmed
  cq.Arm(false);
  EXPECT_TRUE(cq.TakeNotify(false, false));
}

}  // namespace
}  // namespace qptwin::model::engine

namespace qptwin::model::engine {
namespace {

TEST(CqVisibility, ACqeIsPolledOnlyOnceItsDmaWriteLanded) {
  Cq cq(1, 1, 4, 0, false);
  WorkCompletion wc;
  wc.wr_id = 7;
  ASSERT_TRUE(cq.Push(wc, 1000));
  WorkCompletion out;
  EXPECT_EQ(cq.Poll(1, &out, 999), 0);
  EXPECT_EQ(cq.size(), 1u) << "in the queue already: it counts against the depth";
  EXPECT_EQ(cq.Poll(1, &out, 1000), 1);
  EXPECT_EQ(out.wr_id, 7u);
}

TEST(CqVisibility, VisibilityNeverReordersTheQueue) {
  Cq cq(1, 1, 4, 0, false);
  WorkCompletion a, b;
  a.wr_id = 1;
  b.wr_id = 2;
  ASSERT_TRUE(cq.Push(a, 500));
  ASSERT_TRUE(cq.Push(b, 100));  // an earlier time is raised to the previous one
  WorkCompletion out[2];
  EXPECT_EQ(cq.Poll(2, out, 499), 0);
  ASSERT_EQ(cq.Poll(2, out, 500), 2);
  EXPECT_EQ(out[0].wr_id, 1u);
  EXPECT_EQ(out[1].wr_id, 2u);
}

class FailingBus : public HostBus {
 public:
  bool Read(uint64_t, uint8_t*, uint64_t) override { return false; }
  bool Write(uint64_t, const uint8_t*, uint64_t) override { return false; }
};

TEST(Cq, AFailedCqeWriteIsACqError) {
  Cq cq(1, 1, 8, 0, /*sticky_error=*/false);
  FailingBus bad;
  WorkCompletion wc;
  EXPECT_FALSE(cq.Push(wc, 0, bad));
  EXPECT_TRUE(cq.in_error());
  EXPECT_EQ(cq.write_errors(), 1u);
  EXPECT_EQ(cq.size(), 0u);
  EXPECT_TRUE(cq.Push(wc));  // rxe's CQ (not sticky) takes the next one
  EXPECT_EQ(cq.size(), 1u);
}

TEST(Cq, TheCqeImageCarriesEveryField) {
  WorkCompletion wc;
  wc.wr_id = 0x0102030405060708;
  wc.status = WcStatus::kRemOpErr;
  wc.opcode = WcOpcode::kRecvRdmaWithImm;
  wc.vendor_err = 0x11223344;
  wc.byte_len = 0x55667788;
  wc.imm_data = 0x99aabbcc;
  wc.qp_num = 0xffffff;
  wc.src_qp = 0x123456;
  wc.wc_flags = 0x7;
  wc.pkey_index = 0xfffe;
  wc.slid = 0xbeef;
  wc.sl = 15;
  wc.dlid_path_bits = 0x7f;
  uint8_t image[Cq::kCqeBytes];
  Cq::Encode(wc, image);
  const WorkCompletion back = Cq::Decode(image);
  EXPECT_EQ(std::memcmp(&back, &wc, sizeof wc), 0);
}

TEST(Cq, StorageGrowsWithTheCqesNotWithTheDepth) {
  Cq cq(1, 1, 4'000'000, 0);
  WorkCompletion wc;
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(cq.Push(wc));
  EXPECT_LE(cq.slots(), 4u);
  for (int i = 0; i < 100; ++i) ASSERT_TRUE(cq.Push(wc));
  EXPECT_LE(cq.slots(), 128u);
}

TEST(Cq, WrapAroundGrowthAndResizeKeepTheOrder) {
  Cq cq(1, 1, 64, 0);
  uint64_t next_in = 0, next_out = 0;
  WorkCompletion out[8];
  for (int round = 0; round < 20; ++round) {
    for (int i = 0; i < 5; ++i) {
      WorkCompletion wc;
      wc.wr_id = next_in++;
      ASSERT_TRUE(cq.Push(wc));
    }
    const int n = cq.Poll(3, out);
    for (int i = 0; i < n; ++i) EXPECT_EQ(out[i].wr_id, next_out++);
    if (round == 10) cq.set_depth(static_cast<int>(cq.size()) + 5);  // below its storage
    if (round == 11) cq.set_depth(64);
  }
  while (const int n = cq.Poll(8, out)) {
    for (int i = 0; i < n; ++i) EXPECT_EQ(out[i].wr_id, next_out++);
  }
  EXPECT_EQ(next_out, next_in);
}

// Counts reads by kind.
class RecordingBus : public HostBus {
 public:
  bool Read(uint64_t addr, uint8_t* dst, uint64_t len) override {
    kinds.push_back(tag().kind);
    return fail_reads ? false : DirectBus::Instance().Read(addr, dst, len);
  }
  bool Write(uint64_t addr, const uint8_t* src, uint64_t len) override {
    kinds.push_back(tag().kind);
    return DirectBus::Instance().Write(addr, src, len);
  }
  std::vector<DmaKind> kinds;
  bool fail_reads = false;
};

TEST(Cq, TheNicReadsTheConsumerIndexRecordOnlyWhenTheRingLooksFull) {
  Cq cq(1, 1, 2, 0, /*sticky_error=*/false);
  RecordingBus bus;
  DmaTag tag;
  tag.kind = DmaKind::kCqe;
  bus.Tag(tag);
  WorkCompletion wc;
  ASSERT_TRUE(cq.Push(wc, 0, bus));
  ASSERT_TRUE(cq.Push(wc, 0, bus));
  EXPECT_EQ(bus.kinds, (std::vector<DmaKind>{DmaKind::kCqe, DmaKind::kCqe}));
  EXPECT_FALSE(cq.Push(wc, 0, bus));  // full: the record still says 0 polled
  EXPECT_EQ(bus.kinds.back(), DmaKind::kCqDbRec);
  EXPECT_EQ(bus.tag().kind, DmaKind::kCqe);  // the caller's tag is back
  WorkCompletion out[2];
  ASSERT_EQ(cq.Poll(2, out), 2);
  bus.kinds.clear();
  ASSERT_TRUE(cq.Push(wc, 0, bus));  // the record says 2 polled: room
  EXPECT_EQ(bus.kinds, (std::vector<DmaKind>{DmaKind::kCqDbRec, DmaKind::kCqe}));
  bus.kinds.clear();
  ASSERT_TRUE(cq.Push(wc, 0, bus));  // the NIC's copy still shows room
  EXPECT_EQ(bus.kinds, (std::vector<DmaKind>{DmaKind::kCqe}));
  ASSERT_EQ(cq.Poll(1, out), 1);
  bus.fail_reads = true;  // the record cannot be read: an overrun, as full
  EXPECT_FALSE(cq.Push(wc, 0, bus));
  EXPECT_TRUE(cq.in_error());
  EXPECT_EQ(cq.size(), 1u);
  bus.fail_reads = false;
  EXPECT_TRUE(cq.Push(wc, 0, bus));
  EXPECT_EQ(cq.size(), 2u);
}

}  // namespace
}  // namespace qptwin::model::engine
