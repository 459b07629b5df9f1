#include "model/systemc/testbed.h"

#include <cstring>

#include "spec/qp_state_table.h"
#include "spec/vocabulary.h"

namespace qptwin::sc::testbed {

using sc_core::sc_time;
using sc_core::SC_ZERO_TIME;

Driver::Driver(sc_core::sc_module_name name, Memory& memory)
    : sc_module(name), mmio("mmio"), mem("mem"), memory_(memory) {}

// Both accesses reuse one generic payload each (the targets here never wait inside
// b_transport, so no other thread of this driver can find it in use).
void Driver::Mmio(tlm::tlm_command cmd, uint64_t addr, uint64_t* v, uint32_t len, sc_time local) {
  tlm::tlm_generic_payload& gp = mmio_gp_;
  gp.set_command(cmd);
  gp.set_address(addr);
  gp.set_data_ptr(reinterpret_cast<uint8_t*>(v));
  gp.set_data_length(len);
  gp.set_streaming_width(len);
  gp.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
  sc_time delay = local;
  mmio->b_transport(gp, delay);
  if (!gp.is_response_ok()) SC_REPORT_ERROR("testbed", "MMIO access failed");
  if (local == SC_ZERO_TIME && delay != SC_ZERO_TIME) wait(delay);
}

uint32_t Driver::Command(CmdOp op, std::vector<uint64_t> args) {
  args.resize(kCmdArgs);
  for (int i = 0; i < kCmdArgs; ++i) Mmio(tlm::TLM_WRITE_COMMAND, kRegCmdArg0 + 8 * i, &args[i], 8);
  uint64_t v = static_cast<uint32_t>(op);
  Mmio(tlm::TLM_WRITE_COMMAND, kRegCmdOp, &v, 4);
  v = 0;
  Mmio(tlm::TLM_READ_COMMAND, kRegCmdStatus, &v, 4);
  return static_cast<uint32_t>(v);
}

// One host-memory access through the driver's memory socket (no annotated delay).
void Driver::HostAccess(tlm::tlm_command cmd, uint64_t addr, void* data, uint32_t len) {
  tlm::tlm_generic_payload& gp = mem_gp_;
  gp.set_command(cmd);
  gp.set_address(addr);
  gp.set_data_ptr(static_cast<uint8_t*>(data));
  gp.set_data_length(len);
  gp.set_streaming_width(len);
  gp.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
  sc_time delay = SC_ZERO_TIME;
  mem->b_transport(gp, delay);
  if (!gp.is_response_ok()) {
    SC_REPORT_ERROR("testbed", cmd == tlm::TLM_WRITE_COMMAND ? "host memory write failed"
                                                             : "host memory read failed");
  }
}

void Driver::Write(uint64_t addr, const void* data, uint32_t len) {
  // IEEE 1666-2011 14.13: the target does not modify a write command's data array.
  HostAccess(tlm::TLM_WRITE_COMMAND, addr, const_cast<void*>(data), len);
}

void Driver::Read(uint64_t addr, void* data, uint32_t len) {
  HostAccess(tlm::TLM_READ_COMMAND, addr, data, len);
}

void Driver::PostSends(uint32_t qpn, const std::vector<Wqe>& ws) {
  for (const Wqe& w : ws) {
    uint8_t raw[kWqeBytes];
    EncodeWqe(w, raw);
    Write(kSqBase + qpn * 0x2000ull + (sq_pi_[qpn]++ % kQueueEntries) * kWqeBytes, raw,
          kWqeBytes);
  }
  uint64_t v = sq_pi_[qpn];
  Mmio(tlm::TLM_WRITE_COMMAND, SqDoorbell(qpn), &v, 4);
}

void Driver::PostSendAt(uint32_t qpn, const Wqe& w, sc_time local) {
  uint8_t raw[kWqeBytes];
  EncodeWqe(w, raw);
  Write(kSqBase + qpn * 0x2000ull + (sq_pi_[qpn]++ % kQueueEntries) * kWqeBytes, raw, kWqeBytes);
  uint64_t v = sq_pi_[qpn];
  Mmio(tlm::TLM_WRITE_COMMAND, SqDoorbell(qpn), &v, 4, local);
}

sc_time Driver::PostSend(uint32_t qpn, const Wqe& w) {
  const sc_time at = sc_core::sc_time_stamp();
  PostSends(qpn, {w});
  return at;
}

void Driver::PostRecv(uint32_t qpn, const Wqe& w) {
  uint8_t raw[kWqeBytes];
  EncodeWqe(w, raw);
  Write(kRqBase + qpn * 0x2000ull + (rq_pi_[qpn]++ % kQueueEntries) * kWqeBytes, raw, kWqeBytes);
  uint64_t v = rq_pi_[qpn];
  Mmio(tlm::TLM_WRITE_COMMAND, RqDoorbell(qpn), &v, 4);
}

std::optional<Cqe> Driver::PollCq(uint32_t cqn) {
  uint8_t raw[kCqeBytes];
  const uint32_t ci = cq_ci_[cqn];
  Read(kCqBase + cqn * 0x1000ull + (ci % kCqEntries) * kCqeBytes, raw, kCqeBytes);
  const Cqe c = DecodeCqe(raw);
  if (c.owner != OwnerOf(ci, kCqEntries)) return std::nullopt;
  ++cq_ci_[cqn];
  return c;
}

std::optional<Cqe> Driver::WaitCq(uint32_t cqn, sc_time limit) {
  const sc_time end = sc_core::sc_time_stamp() + limit;
  for (;;) {
    if (auto c = PollCq(cqn)) return c;
    const sc_time now = sc_core::sc_time_stamp();
    if (now >= end) return std::nullopt;
    wait(end - now, memory_.nic_write_event());
  }
}

void Driver::CreateQp(uint32_t qpn, uint32_t cqn, QpType type, uint32_t pd) {
  if (Command(CmdOp::kCreateCq, {cqn, kCqBase + cqn * 0x1000ull, kCqEntries}) ||
      Command(CmdOp::kCreateQp, {qpn, static_cast<uint64_t>(type), kSqBase + qpn * 0x2000ull,
                                 kQueueEntries, kRqBase + qpn * 0x2000ull, kQueueEntries,
                                 cqn | static_cast<uint64_t>(cqn) << 32, pd})) {
    SC_REPORT_ERROR("testbed", "create failed");
  }
}

uint32_t Driver::Connect(uint32_t qpn, QpType type, uint32_t port, uint32_t dest_qpn,
                         AccessFlags access) {
  // The kernel table's minimum masks (spec/qp_state_table.h) for this type.
  const uint64_t init = MinimumMask(type, QpState::kReset, QpState::kInit) | attr::kAccessFlags;
  const uint64_t rtr = MinimumMask(type, QpState::kInit, QpState::kRtr);
  const uint64_t rts = MinimumMask(type, QpState::kRtr, QpState::kRts);
  if (uint32_t rc = Command(CmdOp::kModifyQp, {qpn, init, uint64_t(QpState::kInit), 0, 0, 0,
                                               access, 0})) return rc;
  if (uint32_t rc = Command(CmdOp::kModifyQp, {qpn, rtr, uint64_t(QpState::kRtr), port,
                                               dest_qpn, 0, 0, 0})) return rc;
  return Command(CmdOp::kModifyQp, {qpn, rts, uint64_t(QpState::kRts), 0, 0, 0, 0, 0});
}

Platform::Platform(const model::Timing& timing) {
  sw = std::make_unique<Switch>("switch", 2, timing.link);
  for (int i = 0; i < 2; ++i) {
    const std::string n = std::to_string(i);
    mem[i] = std::make_unique<Memory>(("mem" + n).c_str());
    mem[i]->Map(kCqBase, kSqBase - kCqBase);
    mem[i]->Map(kSqBase, 0x200000);  // SQs and RQs
    mem[i]->Map(kDataBase, kDataBytes);
    host[i] = std::make_unique<Driver>(("host" + n).c_str(), *mem[i]);
    NicConfig cfg;
    cfg.port_id = i;
    cfg.timing = timing;
    nic[i] = std::make_unique<Nic>(("nic" + n).c_str(), cfg);
    host[i]->mmio.bind(nic[i]->mmio);
    host[i]->mem.bind(mem[i]->cpu);
    nic[i]->dma.bind(mem[i]->nic);
    nic[i]->net_out.bind(sw->in(i));
    sw->out(i).bind(nic[i]->net_in);
  }
}

bool Platform::Run(std::function<void()> scenario, sc_time limit) {
  auto done = std::make_shared<bool>(false);
  sc_core::sc_spawn([scenario, done] {
    scenario();
    *done = true;
  });
  const sc_time end = sc_core::sc_time_stamp() + limit;
  while (!*done && sc_core::sc_time_stamp() < end) sc_core::sc_start(sc_time(1, sc_core::SC_US));
  return *done;
}

}  // namespace qptwin::sc::testbed
