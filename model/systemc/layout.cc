#include "model/systemc/layout.h"

#include <cstring>

namespace qptwin::sc {
namespace {

// Little-endian fields: one memcpy on a little-endian host (the compiler emits a plain load
// or store), byte by byte elsewhere.
template <typename T>
void Put(uint8_t* p, T v) {
  if constexpr (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__) {
    std::memcpy(p, &v, sizeof(T));
  } else {
    for (size_t i = 0; i < sizeof(T); ++i) p[i] = static_cast<uint8_t>(static_cast<uint64_t>(v) >> (8 * i));
  }
}
template <typename T>
T Get(const uint8_t* p) {
  if constexpr (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__) {
    T v;
    std::memcpy(&v, p, sizeof(T));
    return v;
  } else {
    uint64_t v = 0;
    for (size_t i = 0; i < sizeof(T); ++i) v |= static_cast<uint64_t>(p[i]) << (8 * i);
    return static_cast<T>(v);
  }
}

}  // namespace

void EncodeWqe(const Wqe& w, uint8_t out[kWqeBytes]) {
  std::memset(out, 0, kWqeBytes);
  out[0] = static_cast<uint8_t>(w.opcode);
  out[1] = w.flags;
  Put<uint32_t>(out + 4, w.imm);
  Put<uint64_t>(out + 8, w.wr_id);
  Put<uint64_t>(out + 16, w.addr);
  Put<uint32_t>(out + 24, w.length);
  Put<uint32_t>(out + 28, w.lkey);
  Put<uint64_t>(out + 32, w.remote_addr);
  Put<uint32_t>(out + 40, w.rkey);
  Put<uint32_t>(out + 44, w.ud_qpn);
  Put<uint32_t>(out + 48, w.ud_qkey);
  Put<uint32_t>(out + 52, w.ud_port);
}

Wqe DecodeWqe(const uint8_t in[kWqeBytes]) {
  Wqe w;
  w.opcode = static_cast<WrOpcode>(in[0]);
  w.flags = in[1];
  w.imm = Get<uint32_t>(in + 4);
  w.wr_id = Get<uint64_t>(in + 8);
  w.addr = Get<uint64_t>(in + 16);
  w.length = Get<uint32_t>(in + 24);
  w.lkey = Get<uint32_t>(in + 28);
  w.remote_addr = Get<uint64_t>(in + 32);
  w.rkey = Get<uint32_t>(in + 40);
  w.ud_qpn = Get<uint32_t>(in + 44);
  w.ud_qkey = Get<uint32_t>(in + 48);
  w.ud_port = Get<uint32_t>(in + 52);
  return w;
}

void EncodeCqe(const Cqe& c, uint8_t out[kCqeBytes]) {
  std::memset(out, 0, kCqeBytes);
  Put<uint64_t>(out + 0, c.wr_id);
  Put<uint32_t>(out + 8, c.byte_len);
  Put<uint32_t>(out + 12, c.imm);
  Put<uint32_t>(out + 16, c.qpn);
  Put<uint32_t>(out + 20, c.src_qp);
  out[24] = static_cast<uint8_t>(c.status);
  out[25] = static_cast<uint8_t>(c.opcode);
  out[26] = c.wc_flags;
  out[31] = c.owner;
}

Cqe DecodeCqe(const uint8_t in[kCqeBytes]) {
  Cqe c;
  c.wr_id = Get<uint64_t>(in + 0);
  c.byte_len = Get<uint32_t>(in + 8);
  c.imm = Get<uint32_t>(in + 12);
  c.qpn = Get<uint32_t>(in + 16);
  c.src_qp = Get<uint32_t>(in + 20);
  c.status = static_cast<WcStatus>(in[24]);
  c.opcode = static_cast<WcOpcode>(in[25]);
  c.wc_flags = in[26];
  c.owner = in[31];
  return c;
}

}  // namespace qptwin::sc
