// sc_spawn (the tracer, contract 10): Bazel defines this (local_defines), tools/fuzz/build.sh's
// plain clang++ build does not.
#ifndef SC_INCLUDE_DYNAMIC_PROCESSES
#define SC_INCLUDE_DYNAMIC_PROCESSES
#endif
#include "model/sim/platform.h"

#include <algorithm>
#include <cstring>
#include <functional>
#include <optional>
#include <string>

#include "model/engine/nic.h"
#include "model/engine/world.h"
#include "model/sim/kernel.h"
#include "model/sim/sc_clock.h"

namespace qptwin::model::sim {
namespace {

// An sc_time in ns, rounded to the nearest, by integer arithmetic.
uint64_t NsOf(const sc_core::sc_time& t) {
  static const uint64_t ticks_per_ns = sc_core::sc_time(1, sc_core::SC_NS).value();
  return (t.value() + ticks_per_ns / 2) / ticks_per_ns;
}

Platform*& Instance() {  // touched only on the kernel's thread (contract 5)
  static Platform* platform = nullptr;
  return platform;
}

Platform::Binder& TheBinder() {
  static auto* binder = new Platform::Binder;
  return *binder;
}

Platform::MmioBinder& TheMmioBinder() {
  static auto* binder = new Platform::MmioBinder;
  return *binder;
}

Platform::CpuBinder& TheCpuBinder() {
  static auto* binder = new Platform::CpuBinder;
  return *binder;
}

Platform::NetBinder& TheNetBinder() {
  static auto* binder = new Platform::NetBinder;
  return *binder;
}

NetObserver& TheNetObserver() {
  static auto* observer = new NetObserver;
  return *observer;
}

DmaObserver& Observer() {
  static auto* observer = new DmaObserver;
  return *observer;
}

}  // namespace

sc_core::sc_time NsToTime::Convert(uint64_t n) {
  // The kernel's resolution is fixed by then; integer arithmetic, exact.
  static const uint64_t ticks_per_ns = sc_core::sc_time(1, sc_core::SC_NS).value();
  return sc_core::sc_time::from_value(n * ticks_per_ns);
}

namespace {
// A plain read or write of len (< 2^32) bytes, before its b_transport.
void Prepare(tlm::tlm_generic_payload& gp, tlm::tlm_command cmd, uint64_t addr, uint8_t* data,
             uint64_t len) {
  gp.set_command(cmd);
  gp.set_address(addr);
  gp.set_data_ptr(data);
  gp.set_data_length(static_cast<unsigned int>(len));
  gp.set_streaming_width(static_cast<unsigned int>(len));
  gp.set_byte_enable_ptr(nullptr);
  gp.set_dmi_allowed(false);
  gp.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
}

// One access of the provider's CPU (contracts 11, 14) through `socket`: the tag's transfer
// at SystemC's time, with no delay of the engine's (the host's costs are the profile's).
template <class Socket>
bool CpuAccess(Socket& socket, tlm::tlm_generic_payload& gp, DmaExtension& ext,
               const engine::DmaTag& tag, tlm::tlm_command cmd, uint64_t addr, uint8_t* data,
               uint64_t len) {
  if (len > (uint64_t{1} << 31)) return false;  // never asked: WQEs, CQEs, inline data
  Prepare(gp, cmd, addr, data, len);
  ext.tag = tag;
  sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
  socket->b_transport(gp, delay);
  return gp.is_response_ok();
}
}  // namespace

HostMemory::HostMemory(sc_core::sc_module_name name, int dma_ports, int cpu_ports)
    : sc_module(name), dma_ports_(static_cast<size_t>(dma_ports)) {
  for (int i = 0; i < dma_ports + cpu_ports; ++i) {
    ports_.push_back(std::make_unique<Socket>(("port" + std::to_string(i)).c_str()));
    if (i < dma_ports) {
      ports_.back()->register_b_transport(this, &HostMemory::BTransport);
    } else {  // contract 11: the CPU's, with DMI and no injected fault
      ports_.back()->register_b_transport(this, &HostMemory::CpuTransport);
      ports_.back()->register_get_direct_mem_ptr(this, &HostMemory::GetDmi);
    }
    ports_.back()->register_transport_dbg(this, &HostMemory::TransportDbg);
  }
}

void HostMemory::CpuTransport(tlm::tlm_generic_payload& gp, sc_core::sc_time&) {
  if ((!gp.is_read() && !gp.is_write()) || gp.get_byte_enable_ptr() != nullptr ||
      gp.get_streaming_width() < gp.get_data_length()) {
    gp.set_response_status(tlm::TLM_GENERIC_ERROR_RESPONSE);
    return;
  }
  if (BusOnly(gp.get_address(), gp.get_data_length())) {  // contract 12
    gp.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
    return;
  }
  (void)TransportDbg(gp);  // the same bytes; TLM_OK_RESPONSE
}

bool HostMemory::GetDmi(tlm::tlm_generic_payload& gp, tlm::tlm_dmi& dmi) {
  // Contract 11: addresses are this process's, so the pointer of address a is a itself;
  // the range granted stops short of the bus-only ranges around it (contract 12).
  const uint64_t a = gp.get_address();
  uint64_t lo = 0, hi = ~uint64_t{0};
  for (const auto& [range, holds] : bus_only_) {
    const auto [start, n] = range;
    const uint64_t last = start + n - 1;
    if (a >= start && a <= last) return false;
    if (last < a) lo = std::max(lo, last + 1);
    if (start > a) hi = std::min(hi, start - 1);
  }
  dmi.allow_read_write();
  // dmi_ptr is the pointer of start_address: address lo itself.
  dmi.set_dmi_ptr(reinterpret_cast<unsigned char*>(static_cast<uintptr_t>(lo)));
  dmi.set_start_address(lo);
  dmi.set_end_address(hi);
  dmi.set_read_latency(sc_core::SC_ZERO_TIME);
  dmi.set_write_latency(sc_core::SC_ZERO_TIME);
  return true;
}

void HostMemory::AddBusOnly(uint64_t addr, uint64_t len) {
  if (len == 0 || ++bus_only_[{addr, len}] > 1) return;
  // A DMI pointer granted before may cover the range: every CPU port asks again.
  for (size_t i = dma_ports_; i < ports_.size(); ++i) {
    (*ports_[i])->invalidate_direct_mem_ptr(addr, addr + len - 1);
  }
}

void HostMemory::DropBusOnly(uint64_t addr, uint64_t len) {
  auto it = bus_only_.find({addr, len});
  if (it == bus_only_.end() || --it->second > 0) return;
  bus_only_.erase(it);
  // The grants made while the range was held stop short of it: every CPU port asks again
  // (it may be granted more now).
  for (size_t i = dma_ports_; i < ports_.size(); ++i) {
    (*ports_[i])->invalidate_direct_mem_ptr(0, ~uint64_t{0});
  }
}

bool HostMemory::InBusOnly(uint64_t addr, uint64_t len) const {
  for (const auto& [range, holds] : bus_only_) {
    const auto [a, n] = range;
    if (addr <= a + (n - 1) && a <= addr + (len ? len - 1 : 0)) return true;  // no wrap
  }
  return false;
}

bool HostMemory::Faulty(uint64_t addr, uint64_t len) const {
  for (const auto& [a, n] : faults_) {
    if (n && addr <= a + (n - 1) && a <= addr + (len ? len - 1 : 0)) return true;  // no wrap
  }
  return false;
}

void HostMemory::BTransport(tlm::tlm_generic_payload& gp, sc_core::sc_time&) {
  const uint64_t addr = gp.get_address();
  const uint64_t len = gp.get_data_length();
  if (!gp.is_read() && !gp.is_write()) {
    gp.set_response_status(tlm::TLM_COMMAND_ERROR_RESPONSE);
  } else if (gp.get_byte_enable_ptr() != nullptr) {
    gp.set_response_status(tlm::TLM_BYTE_ENABLE_ERROR_RESPONSE);
  } else if (gp.get_streaming_width() < len) {
    gp.set_response_status(tlm::TLM_BURST_ERROR_RESPONSE);
  } else if (Faulty(addr, len) || BusOnly(addr, len)) {
    gp.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
  } else {
    if (len) {
      auto* host = reinterpret_cast<uint8_t*>(addr);
      if (gp.is_read()) {
        std::memcpy(gp.get_data_ptr(), host, len);
      } else {
        std::memcpy(host, gp.get_data_ptr(), len);
      }
    }
    gp.set_response_status(tlm::TLM_OK_RESPONSE);
  }
}

unsigned int HostMemory::TransportDbg(tlm::tlm_generic_payload& gp) {
  // A debugger's look: the same bytes, no fault and no time.
  const uint64_t len = gp.get_data_length();
  if (BusOnly(gp.get_address(), len)) {  // contract 12: not this process's bytes
    gp.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
    return 0;
  }
  auto* host = reinterpret_cast<uint8_t*>(gp.get_address());
  if (gp.is_read() && len) std::memcpy(gp.get_data_ptr(), host, len);
  if (gp.is_write() && len) std::memcpy(host, gp.get_data_ptr(), len);
  gp.set_response_status(tlm::TLM_OK_RESPONSE);
  return static_cast<unsigned int>(len);
}

HostCpu::HostCpu(sc_core::sc_module_name name, int ports) : sc_module(name) {
  for (int i = 0; i < ports; ++i) {
    mmio_.push_back(std::make_unique<Socket>(("mmio" + std::to_string(i)).c_str()));
    mem_.push_back(std::make_unique<MemPort>(new Socket(("mem" + std::to_string(i)).c_str()), i));
    mem_.back()->socket->register_invalidate_direct_mem_ptr(this, &HostCpu::InvalidateDmi);
  }
}

// Rare (a target's map changed): every port asks again at its next access.
void HostCpu::InvalidateDmi(sc_dt::uint64, sc_dt::uint64) {
  for (auto& m : mem_) m->Invalidate();
}

HostCpu::MemPort::MemPort(Socket* s, int slot) : socket(s) {
  ext_.slot = slot;
  gp_.set_extension(&ext_);
}

HostCpu::MemPort::~MemPort() { gp_.clear_extension(&ext_); }  // ours, not the payload's

uint8_t* HostCpu::MemPort::DirectMiss(uint64_t addr, uint64_t len) {
  if (dmi_asked_) return nullptr;  // once, until the target invalidates it
  dmi_asked_ = true;
  gp_.set_command(tlm::TLM_WRITE_COMMAND);
  gp_.set_address(addr);
  tlm::tlm_dmi dmi;
  if (!(*socket)->get_direct_mem_ptr(gp_, dmi) || !dmi.is_read_write_allowed()) return nullptr;
  // Integer arithmetic: host memory's DMI pointer is 0 for address 0 (contract 11).
  GrantDirect(dmi.get_start_address(), dmi.get_end_address(),
              reinterpret_cast<uintptr_t>(dmi.get_dmi_ptr()));
  return Direct(addr, len);
}

bool HostCpu::MemPort::Transfer(tlm::tlm_command cmd, uint64_t addr, uint8_t* data,
                                uint64_t len) {
  return CpuAccess(*socket, gp_, ext_, tag(), cmd, addr, data, len);  // contract 11
}

bool HostCpu::MemPort::Read(uint64_t addr, uint8_t* dst, uint64_t len) {
  return Transfer(tlm::TLM_READ_COMMAND, addr, dst, len);
}

bool HostCpu::MemPort::Write(uint64_t addr, const uint8_t* src, uint64_t len) {
  return Transfer(tlm::TLM_WRITE_COMMAND, addr, const_cast<uint8_t*>(src), len);
}

Fabric::Fabric(sc_core::sc_module_name name, int ports)
    : sc_module(name), in_("in", ports), out_("out", ports) {
  ingress_.fabric = this;
  for (int i = 0; i < ports; ++i) in_[i].bind(ingress_);
}

void Fabric::Forward(NetMessage& msg) {
  if (msg.world == nullptr || msg.pkt == nullptr || msg.dst_slot < 0 ||
      msg.dst_slot >= static_cast<int>(out_.size())) {
    ++dropped_;
    return;
  }
  ++forwarded_;
  msg.delay += path_(engine::PathNs(msg.world->profile().timing.link));
  out_[msg.dst_slot]->Transport(msg);
}

NicSlot::NicSlot(sc_core::sc_module_name name, int index, HostCpu::Socket* cpu)
    : sc_module(name), dma("dma"), mmio("mmio"), net_out("net_out"), net_in("net_in"), cpu_(cpu) {
  arrival_.slot = this;
  net_in.bind(arrival_);
  ext_.slot = index;
  gp_.set_extension(&ext_);
  mmio.register_b_transport(this, &NicSlot::MmioTransport);
  mmio_gp_.set_extension(&mmio_ext_);
  mmio_gp_.set_extension(&ext_);  // labelled as the DMA is (contract 6: kind DOORBELL)
  cpu_ext_.slot = index;
  cpu_gp_.set_extension(&cpu_ext_);
}

bool NicSlot::CpuTransfer(tlm::tlm_command cmd, uint64_t addr, uint8_t* data, uint64_t len,
                          const engine::DmaTag& tag) {
  // Contract 14: as HostCpu::MemPort's (contract 11), on the slot's own socket.
  return CpuAccess(dma, cpu_gp_, cpu_ext_, tag, cmd, addr, data, len);
}

void NicSlot::Trace(sc_core::sc_trace_file* tf, int qps) {
  if (on || !tf) return;
  on = true;
  traced_count_ = qps < 0 ? 0 : qps;
  traced_.reset(new TracedQp[static_cast<size_t>(traced_count_)]);
  const std::string me = name();
  sc_core::sc_trace(tf, link_busy_, me + ".link_busy");
  for (int i = 0; i < traced_count_; ++i) {
    const std::string q = me + ".qp" + std::to_string(i) + ".";
    sc_core::sc_trace(tf, traced_[i].qpn, q + "qpn");
    sc_core::sc_trace(tf, traced_[i].state, q + "state");
    sc_core::sc_trace(tf, traced_[i].sq, q + "sq");
    sc_core::sc_trace(tf, traced_[i].rq, q + "rq");
  }
  sc_core::sc_spawn_options opts;
  opts.spawn_method();
  opts.dont_initialize();
  opts.set_sensitivity(&trace_event_);
  sc_core::sc_spawn([this] { ApplyTraces(); }, sc_core::sc_gen_unique_name("tracer"), &opts);
}

NicSlot::TracedQp* NicSlot::TracedOf(uint32_t qpn) {
  for (const auto& [n, i] : traced_by_qpn_) {
    if (n == qpn) return &traced_[i];
  }
  return nullptr;
}

void NicSlot::TraceAt(uint64_t now_ns, uint64_t at_ns, int* field, int value) {
  // Contract 10: the change's kernel time, from the engine's time and its lead over the
  // kernel (sc_clock.h contract 7).
  const uint64_t ticks_per_ns = sc_core::sc_time(1, sc_core::SC_NS).value();
  const uint64_t later = (at_ns > now_ns ? at_ns - now_ns : 0) + ScClock::AheadNsAt(now_ns);
  const uint64_t now = sc_core::sc_time_stamp().value();
  const TraceChange c{now + later * ticks_per_ns, trace_seq_++, field, value};
  const bool first = trace_heap_.empty() || trace_heap_.front() > c;
  trace_heap_.push_back(c);
  std::push_heap(trace_heap_.begin(), trace_heap_.end(), std::greater<>{});
  if (first) trace_event_.notify(sc_core::sc_time::from_value(c.due - now));
}

void NicSlot::ApplyTraces() {
  const uint64_t now = sc_core::sc_time_stamp().value();
  while (!trace_heap_.empty() && trace_heap_.front().due <= now) {
    std::pop_heap(trace_heap_.begin(), trace_heap_.end(), std::greater<>{});
    const TraceChange& c = trace_heap_.back();
    if (c.field) {
      *c.field = c.value;
    } else {
      link_intervals_ += c.value;
      link_busy_ = link_intervals_ > 0;
    }
    trace_heap_.pop_back();
  }
  if (!trace_heap_.empty()) {
    trace_event_.notify(sc_core::sc_time::from_value(trace_heap_.front().due - now));
  }
}

void NicSlot::QpCreated(uint64_t now_ns, uint32_t qpn) {
  // A number used again (a later Backend's QP) is its newest QP's.
  for (auto it = traced_by_qpn_.begin(); it != traced_by_qpn_.end(); ++it) {
    if (it->first == qpn) {
      traced_by_qpn_.erase(it);
      break;
    }
  }
  if (traced_used_ >= traced_count_) return;
  const int i = traced_used_++;
  traced_by_qpn_.insert(traced_by_qpn_.begin(), {qpn, i});
  TraceAt(now_ns, now_ns, &traced_[i].qpn, static_cast<int>(qpn));
  TraceAt(now_ns, now_ns, &traced_[i].state, static_cast<int>(qptwin::QpState::kReset));
  TraceAt(now_ns, now_ns, &traced_[i].sq, 0);
  TraceAt(now_ns, now_ns, &traced_[i].rq, 0);
}

void NicSlot::QpState(uint64_t now_ns, uint32_t qpn, qptwin::QpState state) {
  if (TracedQp* q = TracedOf(qpn)) TraceAt(now_ns, now_ns, &q->state, static_cast<int>(state));
}

void NicSlot::QpQueues(uint64_t now_ns, uint32_t qpn, uint32_t sq, uint32_t rq) {
  if (TracedQp* q = TracedOf(qpn)) {
    TraceAt(now_ns, now_ns, &q->sq, static_cast<int>(sq));
    TraceAt(now_ns, now_ns, &q->rq, static_cast<int>(rq));
  }
}

void NicSlot::LinkBusy(uint64_t now_ns, uint64_t from_ns, uint64_t until_ns) {
  TraceAt(now_ns, from_ns, nullptr, 1);  // link_busy_ while an interval is open
  TraceAt(now_ns, until_ns, nullptr, -1);
}

NicSlot::~NicSlot() {  // ours, not the payloads' to free
  gp_.clear_extension(&ext_);
  mmio_gp_.clear_extension(&mmio_ext_);
  mmio_gp_.clear_extension(&ext_);
  cpu_gp_.clear_extension(&cpu_ext_);
}

void NicSlot::Ring(engine::Nic& nic, const engine::DoorbellWrite& db) {
  // Contract 8: the doorbell word, then the BlueFlame image.
  mmio_data_.resize(8 + db.image_bytes);
  for (int i = 0; i < 4; ++i) {
    mmio_data_[i] = static_cast<uint8_t>(db.qpn >> (8 * i));
    mmio_data_[4 + i] = static_cast<uint8_t>(db.producer >> (8 * i));
  }
  if (db.image_bytes) std::memcpy(mmio_data_.data() + 8, db.images, db.image_bytes);
  mmio_gp_.set_command(tlm::TLM_WRITE_COMMAND);
  mmio_gp_.set_address(kDoorbellOffset);
  mmio_gp_.set_data_ptr(mmio_data_.data());
  mmio_gp_.set_data_length(static_cast<unsigned int>(mmio_data_.size()));
  mmio_gp_.set_streaming_width(static_cast<unsigned int>(mmio_data_.size()));
  mmio_gp_.set_byte_enable_ptr(nullptr);
  mmio_gp_.set_dmi_allowed(false);
  mmio_gp_.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
  mmio_ext_.nic = &nic;
  engine::DmaTag tag;
  tag.kind = engine::DmaKind::kDoorbell;
  tag.qpn = db.qpn;
  tag.now_ns = db.now_ns;
  ext_.tag = tag;
  // Contract 2: the host's write at the engine's time, its offset from SystemC's annotated,
  // and the time until it leaves the host's CPU (doorbell_port.h contract 3).
  const uint64_t ahead_ns = ScClock::AheadNsAt(db.now_ns) + db.host_lag_ns();
  sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
  if (ahead_ns) delay = ring_offset_(ahead_ns);
  if (cpu_ != nullptr) {
    (*cpu_)->b_transport(mmio_gp_, delay);
  } else {
    MmioTransport(mmio_gp_, delay);  // contract 14: no host CPU of the platform's
  }
  // An accepted ring was observed when it arrived (MmioTransport); a refused one now.
  if (const DmaObserver& observe = Platform::observer(); observe && !mmio_gp_.is_response_ok()) {
    observe(DmaRecord{ext_.slot, tag, true, kDoorbellOffset, mmio_data_.size(), false});
  }
}

void NicSlot::MmioTransport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay) {
  if (gp.get_address() >= engine::command::kOpOffset && gp.get_address() < engine::command::kEnd) {
    CommandAccess(gp);
    return;
  }
  const MmioExtension* ext = gp.get_extension<MmioExtension>();
  const uint64_t len = gp.get_data_length();
  if (!gp.is_write()) {
    gp.set_response_status(tlm::TLM_COMMAND_ERROR_RESPONSE);
    return;
  }
  const bool eq_arm = gp.get_address() == kEqArmOffset;
  const bool arm = gp.get_address() == kCqArmOffset || eq_arm;
  if (gp.get_address() != kDoorbellOffset && !arm) {
    gp.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
    return;
  }
  std::optional<ModelCall> call;
  if (ext == nullptr) TakeDriversTurn(&call);
  engine::Nic* nic = ext ? ext->nic : DriversNic(call);
  if (len < 8 || (arm && len != 8) || gp.get_byte_enable_ptr() != nullptr || nic == nullptr) {
    gp.set_response_status(tlm::TLM_GENERIC_ERROR_RESPONSE);
    return;
  }
  ++counters_.doorbells;
  const uint8_t* d = gp.get_data_ptr();
  // Contract 6: the ring (or arm) before what it causes (the fetch and the requester run
  // inside it); a driver's write carries no label: DOORBELL.
  if (const DmaObserver& observe = Platform::observer()) {
    const DmaExtension* label = gp.get_extension<DmaExtension>();
    engine::DmaTag tag;
    tag.kind = engine::DmaKind::kDoorbell;
    observe(DmaRecord{ext_.slot, label ? label->tag : tag, true, gp.get_address(), len, true});
  }
  if (arm) {
    // The arm takes effect when it arrives (engine/cq.h contract 8): the CQ number, the
    // consumer index, solicited-only.
    uint64_t word = 0;
    for (int i = 0; i < 8; ++i) word |= uint64_t{d[i]} << (8 * i);
    gp.set_response_status(tlm::TLM_OK_RESPONSE);
    if (eq_arm) {  // the event queue's number and consumer index (engine/nic.h OnEqArm)
      nic->OnEqArm(static_cast<uint32_t>(word), static_cast<uint32_t>(word >> 32) & 0xffffff);
      return;
    }
    nic->OnCqArm(static_cast<uint32_t>(word), static_cast<uint32_t>(word >> 32) & 0xffffff,
                 ((word >> 56) & 1) != 0);
    return;
  }
  engine::DoorbellWrite db;
  db.from_driver = ext == nullptr;
  for (int i = 0; i < 4; ++i) {
    db.qpn |= uint32_t{d[i]} << (8 * i);
    db.producer |= uint32_t{d[4 + i]} << (8 * i);
  }
  if (len > 8) {
    db.images = d + 8;
    db.image_bytes = len - 8;
  }
  gp.set_response_status(tlm::TLM_OK_RESPONSE);
  // The delay so far, less the engine's offset from SystemC's time (contract 2), is when the
  // write reached the NIC after the engine's now: the host's time until it left the CPU
  // and the path's (doorbell_port.h contract 3).
  const DmaExtension* tagged = gp.get_extension<DmaExtension>();
  const uint64_t offset_ns = tagged ? ScClock::AheadNsAt(tagged->tag.now_ns) : 0;
  const uint64_t delay_ns = NsOf(delay);
  const uint64_t extra_ns = delay_ns > offset_ns ? delay_ns - offset_ns : 0;
  nic->OnDoorbell(db, extra_ns);
}

void NicSlot::TakeDriversTurn(std::optional<ModelCall>* call) {
  // Contract 8: a write of the program's own is a model call (taken first: it may wait for
  // its turn, and the NIC is chosen when it has it), never while the engine is on the stack
  // (a module of the program's answering the NIC's DMA). A thread's write waits for its
  // turn also behind a call begun outside the simulation (a verbs call in sc_main whose
  // sc_start runs the thread), as a thread's model call does (kernel.h contract 7).
  if (OnKernelThread() && (!ModelCall::UnderWay() || ModelCall::ThreadMayWaitForTurn())) {
    call->emplace();
  }
}

engine::Nic* NicSlot::DriversNic(const std::optional<ModelCall>& call) const {
  // Contract 8: the slot's device of the newest model Backend alive: its command target is
  // open (a gone Backend's Devices may keep its NIC attached).
  if (!call || !call->ok()) return nullptr;
  for (auto it = attached_.rbegin(); it != attached_.rend(); ++it) {
    const engine::CommandTarget* t = (*it)->command_target();
    if (t != nullptr && t->open()) return *it;
  }
  return nullptr;
}

void NicSlot::CommandAccess(tlm::tlm_generic_payload& gp) {
  // Contract 13 (engine/command_port.h contract 1).
  namespace cmd = engine::command;
  const uint64_t off = gp.get_address();
  const uint64_t len = gp.get_data_length();
  uint8_t* d = gp.get_data_ptr();
  if ((len != 4 && len != 8) || off % len != 0 || gp.get_byte_enable_ptr() != nullptr ||
      gp.get_streaming_width() != len || d == nullptr) {
    gp.set_response_status(tlm::TLM_BURST_ERROR_RESPONSE);
    return;
  }
  auto load = [&] {
    uint64_t v = 0;
    for (uint64_t i = 0; i < len; ++i) v |= uint64_t{d[i]} << (8 * i);
    return v;
  };
  auto store = [&](uint64_t v) {
    for (uint64_t i = 0; i < len; ++i) d[i] = static_cast<uint8_t>(v >> (8 * i));
  };
  gp.set_response_status(tlm::TLM_OK_RESPONSE);
  if (off == cmd::kOpOffset || off == cmd::kStatusOffset) {
    if (len != 4 || (off == cmd::kOpOffset) != gp.is_write() || gp.is_read() == gp.is_write()) {
      gp.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
      return;
    }
    if (gp.is_read()) {
      store(cmd_status_);
      return;
    }
    // As a driver's doorbell (contract 8); the model's own CPU issues no command.
    std::optional<ModelCall> call;
    if (gp.get_extension<MmioExtension>() == nullptr) TakeDriversTurn(&call);
    engine::Nic* nic = DriversNic(call);
    engine::CommandTarget* target = nic ? nic->command_target() : nullptr;
    if (target == nullptr) {
      gp.set_response_status(tlm::TLM_GENERIC_ERROR_RESPONSE);
      return;
    }
    const uint32_t op = static_cast<uint32_t>(load());
    cmd_status_ = static_cast<uint32_t>(target->Command(op, cmd_in_, cmd_out_));
    return;
  }
  // The u64 registers: CMD_IN (read and write) and CMD_OUT (read); a 4-byte access is half.
  const bool in = off < cmd::kOutOffset;
  if (off < cmd::kInOffset || (!in && gp.is_write()) || gp.is_read() == gp.is_write()) {
    gp.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
    return;
  }
  const uint64_t base = in ? cmd::kInOffset : cmd::kOutOffset;
  uint64_t& reg = (in ? cmd_in_ : cmd_out_)[(off - base) / 8];
  const int shift = static_cast<int>((off - base) % 8) * 8;
  const uint64_t mask = len == 8 ? ~uint64_t{0} : uint64_t{0xffffffffu} << shift;
  if (gp.is_read()) {
    store((reg & mask) >> shift);
  } else {
    reg = (reg & ~mask) | ((load() << shift) & mask);
  }
}

void NicSlot::Detach(engine::Nic* nic) {
  auto it = std::find(attached_.rbegin(), attached_.rend(), nic);
  if (it != attached_.rend()) attached_.erase(std::next(it).base());
}

void NicSlot::Send(engine::World& world, engine::Packet&& pkt, uint64_t leave_ns,
                   uint64_t wire_bytes) {
  ++counters_.messages_out;
  NetMessage msg;
  msg.world = &world;
  msg.pkt = &pkt;
  msg.src_slot = ext_.slot;
  msg.dst_slot = pkt.dst_nic % Platform::kSlots;  // contract 2: device k is slot k % kSlots
  msg.wire_bytes = wire_bytes;
  // Contract 9: from SystemC's time, the engine's offset plus the wait until leave_ns.
  const uint64_t now = world.events().Now();
  msg.leave_ns = leave_ns;
  msg.delay = send_delay_(ScClock::AheadNsAt(now) + (leave_ns > now ? leave_ns - now : 0));
  msg.leave_delay = msg.delay;
  net_out->Transport(msg);
}

void NicSlot::Arrive(NetMessage& msg) {
  if (msg.world == nullptr || msg.pkt == nullptr) return;
  ++counters_.messages_in;
  // The engine's time the last byte is here: when it left, plus what the way added.
  static const uint64_t ticks_per_ns = sc_core::sc_time(1, sc_core::SC_NS).value();
  const uint64_t added =  // rounded up, as the engine's own times are
      msg.delay > msg.leave_delay
          ? ((msg.delay - msg.leave_delay).value() + ticks_per_ns - 1) / ticks_per_ns
          : 0;
  if (const NetObserver& observe = TheNetObserver()) {
    observe(NetRecord{msg.src_slot, ext_.slot, msg.pkt, msg.leave_ns, msg.leave_ns + added,
                      msg.wire_bytes});
  }
  msg.world->Arrive(std::move(*msg.pkt), msg.leave_ns + added);
}

bool NicSlot::Transfer(tlm::tlm_command cmd, uint64_t addr, uint8_t* data, uint64_t len) {
  constexpr uint64_t kMax = uint64_t{1} << 30;  // a generic payload's length is 32 bits
  while (len > kMax) {
    if (!Transfer(cmd, addr, data, kMax)) return false;
    addr += kMax, data += kMax, len -= kMax;
  }
  Prepare(gp_, cmd, addr, data, len);
  ext_.tag = tag();
  // Contract 2: the offset of the engine's time from SystemC's as the annotated delay.
  const uint64_t ahead_ns = ScClock::AheadNsAt(ext_.tag.now_ns);
  const sc_core::sc_time offset =
      ahead_ns ? dma_offset_(ahead_ns)
               : sc_core::SC_ZERO_TIME;
  sc_core::sc_time delay = offset;
  dma->b_transport(gp_, delay);
  if (delay > offset) {  // contract 2: the engine adds what the target added (host_bus.h 3)
    AddDelay(NsOf(delay - offset));
  }
  const bool ok = gp_.is_response_ok();
  if (!ok) ++counters_.errors;
  if (const DmaObserver& observe = Platform::observer()) {
    observe(DmaRecord{ext_.slot, ext_.tag, cmd == tlm::TLM_WRITE_COMMAND, addr, len, ok});
  }
  return ok;
}

std::shared_ptr<void> NicSlot::HoldProgramRange(uint64_t addr, uint64_t len) {
  if (memory_ == nullptr || len == 0) return nullptr;
  memory_->AddBusOnly(addr, len);
  HostMemory* memory = memory_;  // the platform's: it lives as long as the kernel
  return std::shared_ptr<void>(nullptr, [memory, addr, len](void*) {
    memory->DropBusOnly(addr, len);
  });
}

bool NicSlot::Read(uint64_t addr, uint8_t* dst, uint64_t len) {
  ++counters_.reads;
  counters_.bytes_read += len;
  return Transfer(tlm::TLM_READ_COMMAND, addr, dst, len);
}

bool NicSlot::Write(uint64_t addr, const uint8_t* src, uint64_t len) {
  ++counters_.writes;
  counters_.bytes_written += len;
  // TLM's data pointer is not const; a write command only reads through it.
  return Transfer(tlm::TLM_WRITE_COMMAND, addr, const_cast<uint8_t*>(src), len);
}

Platform::Platform(sc_core::sc_module_name name)
    : sc_module(name),
      memory_("host", kSlots, kSlots),
      cpu_("cpu", kSlots),
      fabric_("fabric", kSlots) {
  for (int k = 0; k < kSlots; ++k) {
    slots_.push_back(
        std::make_unique<NicSlot>(("nic" + std::to_string(k)).c_str(), k, &cpu_.mmio(k)));
    slots_.back()->SetHostMemory(&memory_);  // contract 12
    slots_.back()->SetWorldBlocks(&world_blocks_);  // contract 15
    if (TheMmioBinder()) {  // contract 8
      TheMmioBinder()(k, cpu_.mmio(k), slots_.back()->mmio);
    } else {
      cpu_.mmio(k).bind(slots_.back()->mmio);
    }
    if (TheBinder()) {
      TheBinder()(k, slots_.back()->dma, memory_.port(k));  // contract 7
    } else {
      slots_.back()->dma.bind(memory_.port(k));
    }
    if (TheCpuBinder()) {
      TheCpuBinder()(k, cpu_.mem(k), memory_.port(kSlots + k));  // contract 11
    } else {
      cpu_.mem(k).bind(memory_.port(kSlots + k));
    }
    if (TheNetBinder()) {
      TheNetBinder()(k, *slots_.back(), fabric_);  // contract 9
    } else {
      slots_.back()->net_out.bind(fabric_.in(k));
      fabric_.out(k).bind(slots_.back()->net_in);
    }
  }
}

Platform* Platform::Get() { return Instance(); }

bool Platform::SetBinder(Binder binder) {
  if (Instance() != nullptr) return false;
  TheBinder() = std::move(binder);
  return true;
}

bool Platform::SetMmioBinder(MmioBinder binder) {
  if (Instance() != nullptr) return false;
  TheMmioBinder() = std::move(binder);
  return true;
}

bool Platform::SetCpuBinder(CpuBinder binder) {
  if (Instance() != nullptr) return false;
  TheCpuBinder() = std::move(binder);
  return true;
}

bool Platform::SetNetBinder(NetBinder binder) {
  if (Instance() != nullptr) return false;
  TheNetBinder() = std::move(binder);
  return true;
}

void Platform::SetNetObserver(NetObserver observer) { TheNetObserver() = std::move(observer); }
const NetObserver& Platform::net_observer() { return TheNetObserver(); }

void Platform::SetObserver(DmaObserver observer) { Observer() = std::move(observer); }
const DmaObserver& Platform::observer() { return Observer(); }

void Platform::Elaborate() {
  if (Instance() != nullptr || sc_core::sc_get_status() != sc_core::SC_ELABORATION) return;
  Instance() = new Platform("qptwin_platform");  // lives as long as the kernel
}

}  // namespace qptwin::model::sim
