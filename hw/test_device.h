// Test support: open the real device (or say why not) and build an RC loopback pair.
//
// Tests call OpenTestDevice() and GTEST_SKIP() << "no RDMA device: " << reason when it fails.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "hw/verbs_backend.h"
#include "spec/backend.h"

namespace qptwin::hw {

struct TestDevice {
  std::unique_ptr<Backend> backend;
  std::unique_ptr<Device> device;
  std::string unavailable;  // why there is no device; empty when `device` is set
};

TestDevice OpenTestDevice();

// Two RC QPs on one device, connected to each other through AddressTo(), each with its own
// CQ and a registered buffer (LOCAL_WRITE | REMOTE_WRITE | REMOTE_READ | REMOTE_ATOMIC).
struct Side {
  CqHandle cq;
  QpHandle qp;
  MrHandle mr;
  uint8_t* buf = nullptr;
  uint32_t lkey = 0;
  uint32_t rkey = 0;
};

struct RcPair {
  PdHandle pd;
  Side a;
  Side b;
};

inline constexpr size_t kBufBytes = 64 * 1024;
inline constexpr uint64_t kWaitNs = 10'000'000'000;  // rxe under QEMU TCG is slow

// Creates the pair in RESET (nothing connected). 0 or the first failing errno.
int CreateRcPair(Device* dev, RcPair* out);
// RESET -> INIT -> RTR -> RTS for one QP towards `peer` (min_rnr_timer 12, rnr_retry 7).
int ConnectRc(Device* dev, QpHandle qp, const ConnectionInfo& peer);
// Both sides to RTS.
int ConnectRcPair(Device* dev, const RcPair& pair);

}  // namespace qptwin::hw
