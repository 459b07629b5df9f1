#include "model/engine/send_wqe_image.h"

#include <cstring>

#include "model/engine/image_bytes.h"
#include <vector>


namespace qptwin::model::engine {
namespace {

size_t Pad16(size_t n) { return (n + 15) & ~size_t{15}; }

using image::Get;
using image::Put;

}  // namespace

size_t SendWqeImage::Bytes(const WqeWr& wr, uint32_t inline_len) {
  return kHeaderBytes + kSgeBytes * wr.sg_list.size() + Pad16(inline_len);
}

uint64_t SendWqeImage::DeclaredBytes(const uint8_t* image) {
  return kHeaderBytes + uint64_t{kSgeBytes} * Get<uint32_t>(image, 92) +
         ((uint64_t{Get<uint32_t>(image, 96)} + 15) & ~uint64_t{15});
}

void SendWqeImage::Encode(const WqeWr& wr, const uint8_t* inline_data, uint32_t inline_len,
                          uint8_t* out) {
  std::memset(out, 0, Bytes(wr, inline_len));
  Put<uint64_t>(out, 0, wr.wr_id);
  Put<uint64_t>(out, 8, wr.remote_addr);
  Put<uint64_t>(out, 16, wr.compare_add);
  Put<uint64_t>(out, 24, wr.swap);
  Put<uint64_t>(out, 32, wr.bind_info.addr);
  Put<uint64_t>(out, 40, wr.bind_info.length);
  Put<uint32_t>(out, 48, static_cast<uint32_t>(wr.opcode));
  Put<uint32_t>(out, 52, static_cast<uint32_t>(wr.send_flags));
  Put<uint32_t>(out, 56, wr.imm_data);
  Put<uint32_t>(out, 60, wr.rkey);
  Put<uint32_t>(out, 64, wr.ah.id);
  Put<uint32_t>(out, 68, wr.remote_qpn);
  Put<uint32_t>(out, 72, wr.remote_qkey);
  Put<uint32_t>(out, 76, wr.remote_srqn);
  Put<uint32_t>(out, 80, wr.mw_rkey);
  Put<uint32_t>(out, 84, wr.bind_info.mr.id);
  Put<uint32_t>(out, 88, static_cast<uint32_t>(wr.bind_info.mw_access_flags));
  Put<uint32_t>(out, 92, static_cast<uint32_t>(wr.sg_list.size()));
  Put<uint32_t>(out, 96, inline_len);
  uint8_t* e = out + kHeaderBytes;
  for (const Sge& s : wr.sg_list) {
    Put<uint64_t>(e, 0, s.addr);
    Put<uint32_t>(e, 8, s.length);
    Put<uint32_t>(e, 12, s.lkey);
    e += kSgeBytes;
  }
  if (inline_len) std::memcpy(e, inline_data, inline_len);
}

uint32_t SendWqeImage::InlineBytes(const uint8_t* image) { return Get<uint32_t>(image, 96); }

size_t SendWqeImage::Decode(const uint8_t* image, WqeWr* wr,
                            std::unique_ptr<uint8_t[]>* inline_data, size_t capacity) {
  wr->wr_id = Get<uint64_t>(image, 0);
  wr->remote_addr = Get<uint64_t>(image, 8);
  wr->compare_add = Get<uint64_t>(image, 16);
  wr->swap = Get<uint64_t>(image, 24);
  wr->bind_info.addr = Get<uint64_t>(image, 32);
  wr->bind_info.length = Get<uint64_t>(image, 40);
  const uint32_t opcode = Get<uint32_t>(image, 48);
  wr->opcode = static_cast<WrOpcode>(opcode <= 0xff ? opcode : 0xff);
  wr->send_flags = static_cast<SendFlags>(Get<uint32_t>(image, 52));
  wr->imm_data = Get<uint32_t>(image, 56);
  wr->rkey = Get<uint32_t>(image, 60);
  wr->ah.id = Get<uint32_t>(image, 64);
  wr->remote_qpn = Get<uint32_t>(image, 68);
  wr->remote_qkey = Get<uint32_t>(image, 72);
  wr->remote_srqn = Get<uint32_t>(image, 76);
  wr->mw_rkey = Get<uint32_t>(image, 80);
  wr->bind_info.mr.id = Get<uint32_t>(image, 84);
  wr->bind_info.mw_access_flags = static_cast<AccessFlags>(Get<uint32_t>(image, 88));
  const uint32_t n = Get<uint32_t>(image, 92);
  const uint32_t inline_len = Get<uint32_t>(image, 96);
  Sge few[4];
  std::vector<Sge> many(n > 4 ? n : 0);
  Sge* sges = n > 4 ? many.data() : few;
  const uint8_t* e = image + kHeaderBytes;
  for (uint32_t i = 0; i < n; ++i) {
    sges[i].addr = Get<uint64_t>(e, 0);
    sges[i].length = Get<uint32_t>(e, 8);
    sges[i].lkey = Get<uint32_t>(e, 12);
    e += kSgeBytes;
  }
  wr->sg_list.Set(sges, n);
  if (inline_len) {
    // The buffer a caller's WQE already has, when it is large enough (a resend's).
    if (!*inline_data || capacity < inline_len) inline_data->reset(new uint8_t[inline_len]);
    std::memcpy(inline_data->get(), e, inline_len);
  } else {
    inline_data->reset();
  }
  return kHeaderBytes + kSgeBytes * n + Pad16(inline_len);
}

void SendWqeImage::PutIndex(uint8_t* image, uint32_t post_index) {
  image::Put<uint32_t>(image, kIndexAt, post_index + 1);
}

bool SendWqeImage::IsPost(const uint8_t* image, uint32_t post_index) {
  return image::Get<uint32_t>(image, kIndexAt) == post_index + 1;
}

}  // namespace qptwin::model::engine
