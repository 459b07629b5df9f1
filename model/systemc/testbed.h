// A two-host platform for the NIC's tests and its speed bench (not a public header): per
// host a Memory and a Driver (an initiator of MMIO and memory writes), two Nics, a Switch.
// Elaborated once per process (SystemC allows modules only before the first sc_start);
// scenarios run one after another on it, each with fresh QPNs, CQNs and keys (Next*).
//
// Host memory map (both hosts): CQ n at kCqBase + n * 4 KiB (64 CQEs), the SQ and RQ of QP q
// at kSqBase / kRqBase + q * 8 KiB (128 WQEs each), data buffers from kDataBase (1 MiB).
#pragma once

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "model/systemc/layout.h"
#include "model/systemc/memory.h"
#include "model/systemc/net.h"
#include "model/systemc/nic.h"

namespace qptwin::sc::testbed {

inline constexpr uint64_t kCqBase = 0x10000;
inline constexpr uint32_t kCqEntries = 64;
inline constexpr uint64_t kSqBase = 0x100000;
inline constexpr uint64_t kRqBase = 0x200000;
inline constexpr uint32_t kQueueEntries = 128;
inline constexpr uint64_t kDataBase = 0x1000000;
inline constexpr uint64_t kDataBytes = 1 << 20;

// The host side of one NIC; its methods run inside a SystemC thread.
class Driver : public sc_core::sc_module {
 public:
  tlm_utils::simple_initiator_socket<Driver> mmio;
  tlm_utils::simple_initiator_socket<Driver> mem;

  Driver(sc_core::sc_module_name name, Memory& memory);
  [[nodiscard]] uint32_t Command(CmdOp op, std::vector<uint64_t> args);
  void Write(uint64_t addr, const void* data, uint32_t len);  // host memory
  void Read(uint64_t addr, void* data, uint32_t len);
  // Writes the WQE into the SQ and rings the doorbell; the time of the doorbell write.
  sc_core::sc_time PostSend(uint32_t qpn, const Wqe& w);
  void PostRecv(uint32_t qpn, const Wqe& w);
  // Writes `n` WQEs and rings once.
  void PostSends(uint32_t qpn, const std::vector<Wqe>& ws);
  // Writes one WQE and rings with the annotated delay `local` (a quantum keeper's offset),
  // without waiting.
  void PostSendAt(uint32_t qpn, const Wqe& w, sc_core::sc_time local);
  std::optional<Cqe> PollCq(uint32_t cqn);
  // Waits (on the memory's write event) until a CQE arrives or `limit` passes.
  std::optional<Cqe> WaitCq(uint32_t cqn, sc_core::sc_time limit);

  // Creates CQ `cqn` and QP `qpn` (its CQ for both queues) in RESET.
  void CreateQp(uint32_t qpn, uint32_t cqn, QpType type, uint32_t pd);
  // RESET -> INIT -> RTR -> RTS towards (port, dest_qpn); the errno of the first failure.
  uint32_t Connect(uint32_t qpn, QpType type, uint32_t port, uint32_t dest_qpn,
                   AccessFlags access);
  Memory& memory() { return memory_; }

 private:
  void Mmio(tlm::tlm_command cmd, uint64_t addr, uint64_t* v, uint32_t len,
            sc_core::sc_time local = sc_core::SC_ZERO_TIME);
  void HostAccess(tlm::tlm_command cmd, uint64_t addr, void* data, uint32_t len);
  Memory& memory_;
  tlm::tlm_generic_payload mmio_gp_, mem_gp_;
  uint32_t sq_pi_[kMaxQps] = {};
  uint32_t rq_pi_[kMaxQps] = {};
  uint32_t cq_ci_[kMaxCqs] = {};
};

struct Platform {
  explicit Platform(const model::Timing& timing);
  std::unique_ptr<Memory> mem[2];
  std::unique_ptr<Driver> host[2];
  std::unique_ptr<Nic> nic[2];
  std::unique_ptr<Switch> sw;

  uint32_t NextQpn() { return next_qpn_++; }
  uint32_t NextCqn() { return next_cqn_++; }
  uint32_t NextKey() { return next_key_++; }
  // Runs `scenario` in a new SystemC thread until it returns (false: not within `limit`).
  bool Run(std::function<void()> scenario, sc_core::sc_time limit);

 private:
  uint32_t next_qpn_ = 1, next_cqn_ = 0, next_key_ = 0x100;
};

}  // namespace qptwin::sc::testbed
