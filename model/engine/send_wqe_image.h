// A send WQE as the provider writes it into the send queue's buffer in host memory and the
// NIC fetches it by DMA after the doorbell (issue 12; timing.h: the post's WQEs are fetched
// in one DMA read before the requester has them).
//
// Contract:
//  1. Layout (little-endian, 16-byte aligned): a 112-byte header, then 16 bytes per SGE
//     (u64 addr, u32 length, u32 lkey), then the inline data, padded to 16 bytes.
//     Header: 0 wr_id, 8 remote_addr, 16 compare_add, 24 swap, 32 bind addr, 40 bind
//     length (u64 each); 48 opcode, 52 send_flags, 56 imm_data, 60 rkey, 64 AH handle, 68
//     remote_qpn, 72 remote_qkey, 76 remote_srqn, 80 mw_rkey, 84 bind MR handle, 88 bind
//     access flags, 92 number of SGEs, 96 inline bytes (u32 each); 100..111 zero.
//  2. Decode(Encode(x)) == x for every field of WqeWr and the inline bytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "model/engine/objects.h"

namespace qptwin::model::engine {

struct SendWqeImage {
  static constexpr size_t kHeaderBytes = 112;
  static constexpr size_t kSgeBytes = 16;

  // The image's size for `wr` with `inline_len` inline bytes.
  static size_t Bytes(const WqeWr& wr, uint32_t inline_len);
  // Writes the image (Bytes() bytes) at `out`.
  static void Encode(const WqeWr& wr, const uint8_t* inline_data, uint32_t inline_len,
                     uint8_t* out);
  // Reads an image: the WR, and the inline bytes into *inline_data (reset when none).
  // Returns the image's size.
  static size_t Decode(const uint8_t* image, WqeWr* wr,
                       std::unique_ptr<uint8_t[]>* inline_data);
};

}  // namespace qptwin::model::engine
