// Test and bench support: a Backend with a "local" and a "peer" side (two Device objects,
// of two devices or of the same one), each with a PD, a CQ and one registered buffer, plus
// WR builders. Testonly; not part of the library.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "model/model_backend.h"
#include "spec/backend.h"

namespace qptwin::practice {

inline constexpr uint64_t kMs = 1'000'000;
inline constexpr AccessFlags kAllAccess =
    access::kLocalWrite | access::kRemoteWrite | access::kRemoteRead | access::kRemoteAtomic;

struct Side {
  std::unique_ptr<Device> dev;
  PdHandle pd;
  CqHandle cq;
  MrHandle mr;
  uint8_t* buf = nullptr;
  uint32_t lkey = 0;
  uint32_t rkey = 0;

  uint64_t Addr(size_t off = 0) const { return reinterpret_cast<uint64_t>(buf) + off; }
  Sge At(size_t off, uint32_t len) const { return Sge{Addr(off), len, lkey}; }
  // An RC QP template on this side (both queues on `cq`).
  QpInitAttr Init(uint32_t max_send_wr = 64, uint32_t max_recv_wr = 64) const;
};

struct TestEnv {
  std::unique_ptr<Backend> backend;
  Side local;
  Side peer;
};

// Takes `backend` and opens `local_dev` and `peer_dev` ("" = the first device; the same
// name twice gives two Device objects of one device). 0 or errno.
[[nodiscard]] int OpenEnv(std::unique_ptr<Backend> backend, const std::string& local_dev,
                          const std::string& peer_dev, TestEnv* env, int cq_depth = 4096,
                          size_t buf_len = 1 << 16);

// A model Backend. 0 or errno. With devices == 1 both sides open mdev0.
[[nodiscard]] int MakeModelEnv(TestEnv* env, int cq_depth = 4096, size_t buf_len = 1 << 16,
                               int devices = 2, const std::string& profile = "rxe");

// An RDMA WRITE of `len` bytes from local offset `off` to the peer's buffer.
SendWr WriteWr(const Side& from, const Side& to, uint64_t wr_id, size_t off, uint32_t len,
               bool signaled);
SendWr SendWrOf(const Side& from, uint64_t wr_id, size_t off, uint32_t len, bool signaled);
RecvWr RecvWrOf(const Side& on, uint64_t wr_id, size_t off, uint32_t len);

}  // namespace qptwin::practice
