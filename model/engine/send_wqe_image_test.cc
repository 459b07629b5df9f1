#include "model/engine/send_wqe_image.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

namespace qptwin::model::engine {
namespace {

WqeWr Sample(size_t sges) {
  WqeWr w;
  w.wr_id = 0x1122334455667788;
  w.remote_addr = 0xa0a0a0a0a0a0a0a0;
  w.compare_add = 0xc0c0c0c0c0c0c0c0;
  w.swap = 0x5050505050505050;
  std::vector<Sge> list;
  for (size_t i = 0; i < sges; ++i) {
    list.push_back(Sge{0x1000 + i, static_cast<uint32_t>(10 + i), static_cast<uint32_t>(i)});
  }
  w.sg_list = list;
  w.opcode = WrOpcode::kBindMw;
  w.send_flags = send_flag::kSignaled | send_flag::kFence;
  w.imm_data = 0xdeadbeef;
  w.rkey = 0x12345678;
  w.ah.id = 77;
  w.remote_qpn = 0xabcdef;
  w.remote_qkey = 0x11111111;
  w.remote_srqn = 0x222222;
  w.mw_rkey = 0x3333;
  w.bind_info.mr.id = 9;
  w.bind_info.addr = 0x7000;
  w.bind_info.length = 0x800;
  w.bind_info.mw_access_flags = access::kRemoteRead | access::kRemoteWrite;
  return w;
}

void ExpectSame(const WqeWr& a, const WqeWr& b) {
  EXPECT_EQ(a.wr_id, b.wr_id);
  EXPECT_EQ(a.remote_addr, b.remote_addr);
  EXPECT_EQ(a.compare_add, b.compare_add);
  EXPECT_EQ(a.swap, b.swap);
  ASSERT_EQ(a.sg_list.size(), b.sg_list.size());
  for (size_t i = 0; i < a.sg_list.size(); ++i) {
    EXPECT_EQ(a.sg_list[i].addr, b.sg_list[i].addr);
    EXPECT_EQ(a.sg_list[i].length, b.sg_list[i].length);
    EXPECT_EQ(a.sg_list[i].lkey, b.sg_list[i].lkey);
  }
  EXPECT_EQ(a.opcode, b.opcode);
  EXPECT_EQ(a.send_flags, b.send_flags);
  EXPECT_EQ(a.imm_data, b.imm_data);
  EXPECT_EQ(a.rkey, b.rkey);
  EXPECT_EQ(a.ah, b.ah);
  EXPECT_EQ(a.remote_qpn, b.remote_qpn);
  EXPECT_EQ(a.remote_qkey, b.remote_qkey);
  EXPECT_EQ(a.remote_srqn, b.remote_srqn);
  EXPECT_EQ(a.mw_rkey, b.mw_rkey);
  EXPECT_EQ(a.bind_info.mr, b.bind_info.mr);
  EXPECT_EQ(a.bind_info.addr, b.bind_info.addr);
  EXPECT_EQ(a.bind_info.length, b.bind_info.length);
  EXPECT_EQ(a.bind_info.mw_access_flags, b.bind_info.mw_access_flags);
}

TEST(SendWqeImage, EveryFieldAndTheInlineBytesSurviveTheTrip) {
  for (size_t sges : {0, 1, 4, 5, 30}) {
    const WqeWr w = Sample(sges);
    const uint8_t inline_bytes[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17};
    for (uint32_t inline_len : {0u, 1u, 16u, 17u}) {
      const size_t n = SendWqeImage::Bytes(w, inline_len);
      EXPECT_EQ(n % 16, 0u);
      std::vector<uint8_t> image(n + 64, 0xee);
      SendWqeImage::Encode(w, inline_bytes, inline_len, image.data());
      EXPECT_EQ(image[n], 0xee);  // nothing written past the image
      WqeWr back;
      std::unique_ptr<uint8_t[]> data;
      EXPECT_EQ(SendWqeImage::Decode(image.data(), &back, &data), n);
      ExpectSame(back, w);
      if (inline_len) {
        ASSERT_NE(data, nullptr);
        EXPECT_EQ(std::memcmp(data.get(), inline_bytes, inline_len), 0);
      } else {
        EXPECT_EQ(data, nullptr);
      }
    }
  }
}

TEST(SendWqeImage, ImagesFollowEachOtherInTheBuffer) {
  const WqeWr a = Sample(1), b = Sample(3);
  std::vector<uint8_t> buf(SendWqeImage::Bytes(a, 5) + SendWqeImage::Bytes(b, 0));
  const uint8_t five[] = {9, 8, 7, 6, 5};
  SendWqeImage::Encode(a, five, 5, buf.data());
  SendWqeImage::Encode(b, nullptr, 0, buf.data() + SendWqeImage::Bytes(a, 5));
  WqeWr x, y;
  std::unique_ptr<uint8_t[]> dx, dy;
  const size_t first = SendWqeImage::Decode(buf.data(), &x, &dx);
  SendWqeImage::Decode(buf.data() + first, &y, &dy);
  ExpectSame(x, a);
  ExpectSame(y, b);
  EXPECT_EQ(dx[4], 5);
  EXPECT_EQ(dy, nullptr);
}

}  // namespace
}  // namespace qptwin::model::engine

// Contract 4: the image names its post; an image nobody's post wrote names none.
TEST(SendWqeImage, TheImageNamesItsPost) {
  qptwin::model::engine::WqeWr w;
  w.wr_id = 5;
  std::vector<uint8_t> image(qptwin::model::engine::SendWqeImage::Bytes(w, 0));
  qptwin::model::engine::SendWqeImage::Encode(w, nullptr, 0, image.data());
  EXPECT_FALSE(qptwin::model::engine::SendWqeImage::IsPost(image.data(), 0));
  qptwin::model::engine::SendWqeImage::PutIndex(image.data(), 7);
  EXPECT_TRUE(qptwin::model::engine::SendWqeImage::IsPost(image.data(), 7));
  EXPECT_FALSE(qptwin::model::engine::SendWqeImage::IsPost(image.data(), 6));
  qptwin::model::engine::SendWqeImage::PutIndex(image.data(), 0xffffffffu - 1);
  EXPECT_TRUE(qptwin::model::engine::SendWqeImage::IsPost(image.data(), 0xffffffffu - 1));
}
