#include "model/systemc/memory.h"

#include <cstring>

namespace qptwin::sc {

Memory::Memory(sc_core::sc_module_name name, sc_core::sc_time latency)
    : sc_module(name), nic("nic"), cpu("cpu"), latency_(latency) {
  nic.register_b_transport(this, &Memory::NicTransport);
  cpu.register_b_transport(this, &Memory::CpuTransport);
}

void Memory::NicTransport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay) {
  Transport(gp, delay, true);
}

void Memory::CpuTransport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay) {
  Transport(gp, delay, false);
}

void Memory::Map(uint64_t base, uint64_t size) {
  ranges_[base].assign(size, 0);
  last_ = nullptr;
}

uint8_t* Memory::Bytes(uint64_t addr, uint64_t len) {
  if (last_ && addr >= last_base_) {
    const uint64_t off = addr - last_base_;
    if (off <= last_->size() && len <= last_->size() - off) return last_->data() + off;
  }
  auto it = ranges_.upper_bound(addr);
  if (it == ranges_.begin()) return nullptr;
  --it;
  const uint64_t off = addr - it->first;
  if (off > it->second.size() || len > it->second.size() - off) return nullptr;
  last_base_ = it->first;
  last_ = &it->second;
  return it->second.data() + off;
}

void Memory::Transport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay, bool from_nic) {
  const sc_core::sc_time at = on_access && from_nic ? sc_core::sc_time_stamp() + delay
                                                    : sc_core::SC_ZERO_TIME;
  uint8_t* mem = Bytes(gp.get_address(), gp.get_data_length());
  if (!mem || gp.get_byte_enable_ptr() || gp.get_streaming_width() < gp.get_data_length()) {
    gp.set_response_status(mem ? tlm::TLM_BYTE_ENABLE_ERROR_RESPONSE
                               : tlm::TLM_ADDRESS_ERROR_RESPONSE);
  } else {
    if (gp.is_write()) std::memcpy(mem, gp.get_data_ptr(), gp.get_data_length());
    if (gp.is_read()) std::memcpy(gp.get_data_ptr(), mem, gp.get_data_length());
    gp.set_response_status(tlm::TLM_OK_RESPONSE);
  }
  delay += latency_;
  if (from_nic) {
    ++nic_transactions_;
    if (on_access) on_access(gp, at);
    if (gp.is_write()) nic_write_.notify(sc_core::SC_ZERO_TIME);
  }
}

}  // namespace qptwin::sc
