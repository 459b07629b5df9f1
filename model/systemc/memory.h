// qptwin::sc::Memory: a sample host memory target (as Accellera's LT examples keep memory
// behaviour in a plain object and add the delay), for platforms without their own. Any TLM-2.0
// target works in its place: bind the Nic's `dma` socket to the user's interconnect or memory.
//
// Contract:
//  1. Two target sockets: `nic` (the Nic's DMA) and `cpu` (the host's driver or CPU model);
//     both see the same bytes. b_transport only (no DMI), any length, no byte enables.
//  2. Only mapped ranges (Map) exist: an access touching anything else gets
//     TLM_ADDRESS_ERROR_RESPONSE and changes nothing. Each access adds `latency` to delay.
//  3. on_access (if set) sees every transaction of `nic` and the time it reaches the memory
//     (sc_time_stamp() + the annotated delay on entry); nic_write_event() is notified (delta)
//     on every write through `nic`, for a host that waits for CQEs instead of spinning.
#pragma once

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_target_socket.h>

#include <cstdint>
#include <functional>
#include <map>
#include <vector>

namespace qptwin::sc {

class Memory : public sc_core::sc_module {
 public:
  tlm_utils::simple_target_socket<Memory> nic;
  tlm_utils::simple_target_socket<Memory> cpu;
  std::function<void(const tlm::tlm_generic_payload&, const sc_core::sc_time& at)> on_access;

  Memory(sc_core::sc_module_name name, sc_core::sc_time latency = sc_core::SC_ZERO_TIME);
  void Map(uint64_t base, uint64_t size);
  // The bytes at [addr, addr + len) if mapped, else nullptr (for checks outside SystemC).
  uint8_t* Bytes(uint64_t addr, uint64_t len);
  uint64_t nic_transactions() const { return nic_transactions_; }
  const sc_core::sc_event& nic_write_event() const { return nic_write_; }

 private:
  void NicTransport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay);
  void CpuTransport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay);
  void Transport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay, bool from_nic);

  sc_core::sc_time latency_;
  std::map<uint64_t, std::vector<uint8_t>> ranges_;  // base -> bytes
  // The range of the last hit (map nodes are stable; Map resets it).
  uint64_t last_base_ = 0;
  std::vector<uint8_t>* last_ = nullptr;
  uint64_t nic_transactions_ = 0;
  sc_core::sc_event nic_write_;
};

}  // namespace qptwin::sc
