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
//  3. The send queue is a ring of fixed slots in host memory (Qp::sq_buf), as a device's
//     send queue buffer: Qp::send_ring_slots() slots (rxe's ring size: max_send_wr + 1
//     rounded up to a power of two) of SlotBytes(cap) bytes, enough for an image with
//     max_send_sge SGEs and max_inline_data inline bytes. The WR posted n-th (Qp::sq_posts)
//     goes to slot n mod slots and stays there until it retires (at most max_send_wr WQEs
//     are posted and not retired, so no post overwrites one). The NIC fetches a doorbell's
//     WQEs as whole slots (one read, two where the run wraps the ring), and reads a WQE's
//     slot again when it resends it (a retry), as a NIC that keeps no copy of a WQE. The
//     ring's storage grows by doubling as the posts reach its slots.
//  4. The image names its post: header bytes 100-103 hold the post's index (Qp::sq_posts
//     when it was posted, wrapping) plus 1, as an mlx5 WQE's control segment carries its
//     WQE counter. A NIC that fetches an image of another post (its slot was not written:
//     host_bus.h contract 7) treats the WQE as malformed.
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
  // Contract 3: a ring slot's size for a QP with these limits (a multiple of 16).
  static size_t SlotBytes(uint32_t max_send_sge, uint32_t max_inline_data) {
    return kHeaderBytes + kSgeBytes * max_send_sge + ((size_t{max_inline_data} + 15) & ~size_t{15});
  }
  // Writes the image (Bytes() bytes) at `out`.
  static void Encode(const WqeWr& wr, const uint8_t* inline_data, uint32_t inline_len,
                     uint8_t* out);
  // Reads an image: the WR, and the inline bytes into *inline_data (reset when none; the
  // buffer it holds is kept when it has `capacity` >= the image's inline bytes, else a new
  // one of exactly that size). The image must lie within DeclaredBytes(image) readable
  // bytes. An opcode above 255 reads as 255 (no WR's). Returns the image's size.
  static size_t Decode(const uint8_t* image, WqeWr* wr,
                       std::unique_ptr<uint8_t[]>* inline_data, size_t capacity = 0);
  static uint32_t InlineBytes(const uint8_t* image);  // header byte 96
  // The size the header declares (its SGE count and inline bytes), read before Decode trusts
  // it: an image a driver of the program's own wrote may declare more than its slot holds.
  static uint64_t DeclaredBytes(const uint8_t* image);
  // Contract 4: the post's index + 1 at header byte 100 (0: no post wrote this image).
  static constexpr size_t kIndexAt = 100;
  static void PutIndex(uint8_t* image, uint32_t post_index);
  static bool IsPost(const uint8_t* image, uint32_t post_index);
};

}  // namespace qptwin::model::engine
