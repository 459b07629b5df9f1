#include "model/model_backend.h"

#include <systemc>

#include <algorithm>
#include <cerrno>
#include <optional>
#include <vector>

#include "model/driver_commands.h"
#include "model/engine/nic.h"
#include "model/engine/roce_codec.h"
#include "model/engine/world.h"
#include "model/model_device.h"
#include "model/profile.h"
#include "model/sim/kernel.h"
#include "model/sim/platform.h"
#include "model/sim/sc_clock.h"
#include "model/thread_checked_device.h"

namespace qptwin::model {
namespace {

// The World's external port speaking RoCE v2 through a RoceBridge (model_backend.h).
class RocePort : public engine::World::ExternalPort {
 public:
  RocePort(engine::World* world, RoceBridge* bridge) : world_(world), bridge_(bridge) {}

  void Activate() override { bridge_->Activate(); }

  void Send(const engine::Packet& pkt, const Gid& dgid, uint32_t mtu) override {
    engine::RoceEndpoints ep;
    ep.src_ip = world_->ipv4(pkt.src_nic);
    if (!engine::GidToIpv4(dgid, &ep.dst_ip) || ep.src_ip == 0) {
      ++counters_.unroutable;  // a link-local or IPv6 GID: no route out of the process
      return;
    }
    out_.clear();
    engine::EncodeRoce(pkt, mtu, ep, &out_);
    ++counters_.messages_sent;
    for (const auto& d : out_) {
      ++counters_.datagrams_sent;
      bridge_->Send(pkt.src_nic, ep.dst_ip, d.data(), d.size());
    }
  }

  int Inject(int device, uint32_t src_ip, uint16_t src_port, const uint8_t* data, size_t len) {
    if (device < 0 || device >= world_->nic_count()) return ENODEV;
    ++counters_.datagrams_received;
    engine::RoceEndpoints ep;
    ep.src_ip = src_ip;
    ep.src_port = src_port;
    ep.dst_ip = world_->ipv4(device);
    engine::Packet pkt;
    const engine::RoceResult r = reassembler_.Feed(data, len, ep, &pkt);
    if (r == engine::RoceResult::kPartial) return 0;
    if (r != engine::RoceResult::kMessage) {
      ++counters_.datagrams_rejected;
      return EINVAL;
    }
    ++counters_.messages_received;
    pkt.dst_nic = device;
    pkt.src_nic = world_->ExternalId(engine::Ipv4ToGid(src_ip));
    // BTH names the target only: a connected QP's messages come from its peer.
    if (pkt.transport != QpType::kUd) {
      uint32_t peer = 0;
      if (world_->nic(device)->ConnectedPeer(pkt.dst_qpn, &peer)) pkt.src_qpn = peer;
    }
    // The requester named the peer program's addresses; the model's buffers are elsewhere.
    if (pkt.kind == engine::PacketKind::kWrite || pkt.kind == engine::PacketKind::kReadReq ||
        pkt.kind == engine::PacketKind::kAtomic) {
      const uint64_t len = pkt.kind == engine::PacketKind::kWrite    ? pkt.data.size()
                           : pkt.kind == engine::PacketKind::kReadReq ? pkt.length
                                                                      : 8;
      if (len != 0) pkt.remote_addr = bridge_->TranslateRemote(device, pkt.rkey, pkt.remote_addr, len);
    }
    (void)world_->Inject(std::move(pkt));
    return 0;
  }

  const RoceCounters& counters() const { return counters_; }

 private:
  engine::World* world_;
  RoceBridge* bridge_;
  engine::RoceReassembler reassembler_;
  std::vector<std::vector<uint8_t>> out_;
  RoceCounters counters_;
};

class ModelBackend : public Backend {
 public:
  // Device k sits on slots[k].slot (its DMA, doorbells, messages and traces), the
  // provider's CPU accesses on slots[k].cpu: the platform's slot k and its CPU path
  // (sim/platform.h contracts 2, 8-11), or a program's own Nic (model_backend.h contract 7).
  ModelBackend(const Profile& profile, const ModelOptions& opts,
               const std::vector<SlotPorts>& slots, bool program_slots = false)
      : program_slots_(program_slots),
        world_(std::make_shared<engine::World>(profile, static_cast<int>(slots.size()),
                                               std::clamp(opts.loss_rate, 0.0, 1.0),
                                               opts.seed, ClockOn(slots))) {
    world_->SetIpv4(opts.ipv4);
    for (int i = 0; i < world_->nic_count(); ++i) {
      sim::NicSlot* slot = slots[i].slot;
      world_->nic(i)->SetHostBus(slot);
      world_->nic(i)->SetCpuBus(slots[i].cpu);
      world_->nic(i)->SetDoorbellPort(slot);
      world_->nic(i)->SetNetPort(slot);
      world_->nic(i)->SetTracePort(slot);
      // platform.h 13: a driver's commands, on a context of the device's own.
      commands_.push_back(std::make_unique<DriverCommands>(world_, i));
      world_->nic(i)->SetCommandTarget(commands_.back().get());
    }
  }

  // sim/sc_clock.h contract 9: device k's blocks run as slot k's processes.
  static std::unique_ptr<sim::ScClock> ClockOn(const std::vector<SlotPorts>& slots) {
    auto clock = std::make_unique<sim::ScClock>();
    if (!slots.empty()) clock->Place(-1, slots[0].slot->world_blocks());  // the World's own
    for (size_t k = 0; k < slots.size(); ++k) {
      clock->Place(static_cast<int>(k), slots[k].slot->blocks());
    }
    return clock;
  }

  // Off the kernel's thread the world is deliberately leaked, not freed while that thread
  // may be using it (spec/backend.h, contract 5).
  ~ModelBackend() override {
    if (!sim::OnKernelThread()) {
      new std::shared_ptr<engine::World>(std::move(world_));
      (void)roce_.release();  // the leaked World may still call its port
      // The driver's contexts are the World's; no command reaches them again (platform.h
      // contract 13: the slot takes the newest open target).
      for (auto& c : commands_) c.release()->Close();
    } else {
      world_->SetExternalPort(nullptr);  // devices may keep the World alive
      for (int i = 0; i < world_->nic_count(); ++i) world_->nic(i)->SetCommandTarget(nullptr);
      // Contract 7: a program's NIC modules may go before the Devices that keep the World
      // (destroyed after sc_main returns): its NICs leave them now. What they move then
      // fails, and their doorbells and messages stay inside the World.
      for (int i = 0; program_slots_ && i < world_->nic_count(); ++i) {
        engine::Nic* nic = world_->nic(i);
        nic->SetHostBus(&engine::UnboundBus::Instance());
        nic->SetCpuBus(&engine::UnboundBus::Instance());
        nic->SetDoorbellPort(&engine::DirectDoorbell::Instance());
        nic->SetNetPort(&engine::DirectFabric::Instance());
        nic->SetTracePort(nullptr);
      }
      // The driver's contexts close with the Backend, in a model call as every destroy
      // (kernel.h contract 7: not under a command of a thread's that waits in a verb).
      const sim::ModelCall call;
      for (auto& c : commands_) {
        // Refused (a thread's call is under way): a context is not closed under it, but
        // leaked with its World; one never opened goes.
        if (!call.ok() && c->has_context()) c.release()->Close();
      }
      commands_.clear();
    }
  }

  std::string Kind() const override { return "model"; }

  // Off the kernel's thread (spec/backend.h, contract 5): no devices, EPERM, 0, nothing.
  std::vector<std::string> ListDevices() override {
    std::vector<std::string> out;
    if (!sim::OnKernelThread()) return out;
    for (int i = 0; i < world_->nic_count(); ++i) out.push_back(world_->nic(i)->name());
    return out;
  }

  int OpenDevice(const std::string& name, std::unique_ptr<Device>* out) override {
    if (!out) return EINVAL;
    const sim::ModelCall call;
    if (!call.ok()) return EPERM;
    for (int i = 0; i < world_->nic_count(); ++i) {
      if (name.empty() || world_->nic(i)->name() == name) {
        *out = CheckThread(std::make_unique<ModelDevice>(world_, i));
        return 0;
      }
    }
    return ENODEV;
  }

  std::vector<std::string> DeviceFaults() const override {
    std::vector<std::string> out;
    if (!sim::OnKernelThread()) return out;
    for (int i = 0; i < world_->nic_count(); ++i) {
      for (const std::string& f : world_->nic(i)->device_faults()) {
        out.push_back(world_->nic(i)->name() + ": " + f);
      }
    }
    return out;
  }

  engine::World& world() { return *world_; }
  void Attach(RoceBridge* bridge) {
    world_->SetExternalPort(nullptr);
    roce_.reset();
    if (!bridge) return;
    roce_ = std::make_unique<RocePort>(world_.get(), bridge);
    world_->SetExternalPort(roce_.get());
  }
  RocePort* roce() { return roce_.get(); }

  uint64_t NowNs() override {
    const sim::ModelCall call;  // kernel.h contract 7 (the clock catches up first)
    return call.ok() ? world_->events().Now() : 0;
  }
  void Advance(uint64_t ns) override {
    const sim::ModelCall call{sim::ModelCall::Kind::kWait};
    if (!call.ok()) return;
    world_->events().AdvanceBy(std::min(ns, kMaxWaitNs));
    world_->HostWakes();
    world_->WaitOutHostStall();  // the program wakes up when its CPU is free again
  }

 private:
  const bool program_slots_;  // MakeModelBackendOn: the slots are a program's modules
  std::shared_ptr<engine::World> world_;
  std::unique_ptr<RocePort> roce_;
  std::vector<std::unique_ptr<DriverCommands>> commands_;  // platform.h 13, per device
};

}  // namespace

namespace {

// The profile a Backend of `opts` runs (opts applied), with the kernel started on this
// thread (contract 1); nothing, with the reason in *why, for an unknown profile or a
// thread that may not use the model.
std::optional<Profile> ChosenProfile(const ModelOptions& opts, std::string* why) {
  const Profile* profile = FindProfile(opts.profile);
  if (profile == nullptr) {
    if (why) *why = "unknown model profile '" + opts.profile + "'";
    return std::nullopt;
  }
  sim::PrepareSystemC();
  if (!sim::ClaimKernel()) {
    if (why) {
      *why = "the SystemC kernel belongs to another thread: model Backends are used from the "
             "thread that made the first one (spec/backend.h, contract 5)";
    }
    return std::nullopt;
  }
  (void)sim::Advance(0);  // starts the kernel and elaborates the platform (kernel.h 1)
  if (sc_core::sc_get_time_resolution() > sc_core::sc_time(1, sc_core::SC_NS)) {
    // The model's times are whole ns (sc_clock.h): a coarser resolution cannot hold them.
    if (why) {
      *why = "SystemC's time resolution is " + sc_core::sc_get_time_resolution().to_string() +
             ": the model needs 1 ns or finer (sc_set_time_resolution before any sc_time)";
    }
    return std::nullopt;
  }
  Profile chosen = *profile;
  chosen.timing.cache.enabled = chosen.timing.cache.enabled && opts.context_cache;
  const double phase = std::clamp(opts.tick_phase, 0.0, 1.0);
  chosen.timing.nic.timer_tick_phase_ns = std::min<uint64_t>(
      static_cast<uint64_t>(phase * static_cast<double>(chosen.timing.nic.timer_tick_ns)),
      chosen.timing.nic.timer_tick_ns == 0 ? 0 : chosen.timing.nic.timer_tick_ns - 1);
  if (opts.retry_skip == RetrySkip::kUntimed) chosen.timing.nic.retry_skip_ps_per_packet = 0;
  chosen.timing.nic.retry_skip_stalls_host = opts.retry_skip == RetrySkip::kStalled;
  chosen.timing.nic.retry_skip_host_joins_at =
      opts.retry_skip == RetrySkip::kJoins ? std::max(1, opts.retry_skip_joins_at) : 0;
  chosen.timing.nic.retry_skip_host_wakes_late_ns = opts.retry_skip_wakes_late_us * 1000;
  return chosen;
}

}  // namespace

std::unique_ptr<Backend> MakeModelBackend(const ModelOptions& opts, std::string* why) {
  const std::optional<Profile> chosen = ChosenProfile(opts, why);
  if (!chosen) return nullptr;
  sim::Platform* platform = sim::Platform::Get();
  if (platform == nullptr) {
    if (why) {
      *why = "SystemC's simulation started before the first model Backend, so the model's "
             "platform (elaborated before the first sc_start) does not exist: make a model "
             "Backend before calling sc_start (model/sim/platform.h, contract 1)";
    }
    return nullptr;
  }
  // sim/platform.h contract 2: device k is slot k, its CPU path cpu.memK (contract 11).
  std::vector<SlotPorts> slots;
  for (int i = 0; i < std::max(1, opts.devices); ++i) {
    slots.push_back(SlotPorts{&platform->slot(i), &platform->cpu().bus(i % sim::Platform::kSlots)});
  }
  return std::make_unique<ModelBackend>(*chosen, opts, slots);
}

std::unique_ptr<Backend> MakeModelBackendOn(const ModelOptions& opts,
                                            const std::vector<SlotPorts>& slots, std::string* why) {
  for (const SlotPorts& s : slots) {
    if (s.slot == nullptr || s.cpu == nullptr) {
      if (why) *why = "a device without its NIC module or CPU path";
      return nullptr;
    }
  }
  if (slots.empty()) {
    if (why) *why = "no NIC module to put a device on";
    return nullptr;
  }
  const std::optional<Profile> chosen = ChosenProfile(opts, why);
  if (!chosen) return nullptr;
  return std::make_unique<ModelBackend>(*chosen, opts, slots, /*program_slots=*/true);
}

const char* ToName(RetrySkip r) {
  switch (r) {
    case RetrySkip::kStalled: return "stalled";
    case RetrySkip::kBeside: return "beside";
    case RetrySkip::kJoins: return "joins";
    case RetrySkip::kUntimed: break;
  }
  return "untimed";
}

namespace {

// "<prefix>:<n>" with lo <= n <= hi; false otherwise.
bool ParseSuffixNumber(const std::string& name, const std::string& prefix, uint64_t lo,
                       uint64_t hi, uint64_t* n) {
  if (name.size() <= prefix.size() + 1 || name.size() > prefix.size() + 7 ||
      name.compare(0, prefix.size(), prefix) != 0 || name[prefix.size()] != ':') {
    return false;
  }
  uint64_t v = 0;
  for (size_t i = prefix.size() + 1; i < name.size(); ++i) {
    if (name[i] < '0' || name[i] > '9') return false;
    v = v * 10 + static_cast<uint64_t>(name[i] - '0');
  }
  if (v < lo || v > hi) return false;
  *n = v;
  return true;
}

}  // namespace

bool ParseRetrySkip(const std::string& name, ModelOptions* opts) {
  for (RetrySkip r : {RetrySkip::kUntimed, RetrySkip::kStalled, RetrySkip::kBeside}) {
    if (name == ToName(r)) {
      opts->retry_skip = r;
      opts->retry_skip_joins_at = 0;
      opts->retry_skip_wakes_late_us = 0;
      return true;
    }
  }
  uint64_t n = 0;
  if (ParseSuffixNumber(name, ToName(RetrySkip::kStalled), 1, 100000, &n)) {
    opts->retry_skip = RetrySkip::kStalled;
    opts->retry_skip_joins_at = 0;
    opts->retry_skip_wakes_late_us = n;
    return true;
  }
  if (ParseSuffixNumber(name, ToName(RetrySkip::kJoins), 1, 64, &n)) {
    opts->retry_skip = RetrySkip::kJoins;
    opts->retry_skip_joins_at = static_cast<int>(n);
    opts->retry_skip_wakes_late_us = 0;
    return true;
  }
  return false;
}

void KeepRegionMappings(bool on) { engine::KeepRegionMappings(on); }

DmaCounters ModelDmaCounters(int slot) {
  sim::Platform* p = sim::OnKernelThread() ? sim::Platform::Get() : nullptr;
  if (p == nullptr || slot < 0 || slot >= sim::Platform::kSlots) return DmaCounters{};
  return p->slot(slot).counters();
}

bool ModelInjectDmaError(const void* addr, uint64_t len) {
  sim::Platform* p = sim::OnKernelThread() ? sim::Platform::Get() : nullptr;
  if (p == nullptr) return false;
  p->memory().InjectError(reinterpret_cast<uint64_t>(addr), len);
  return true;
}

namespace {
// `fn` on a model device, in a model call: EPERM off the kernel's thread, EINVAL when
// `device` is no model device.
template <typename Fn>
int OnModelDevice(Device* device, Fn fn) {
  const sim::ModelCall call;
  if (!call.ok()) return EPERM;
  auto* d = dynamic_cast<ModelDevice*>(Unchecked(device));
  return d == nullptr ? EINVAL : fn(*d);
}
}  // namespace

int ModelRegMrAt(Device* device, PdHandle pd, uint64_t addr, size_t length,
                 AccessFlags access, MrHandle* out, uint32_t* lkey, uint32_t* rkey) {
  // The engine holds the range on the slot's bus (engine/host_bus.h contract 8): host
  // memory keeps off it until the region goes (platform.h contract 12).
  return OnModelDevice(device, [&](ModelDevice& d) {
    return d.RegMrAt(pd, addr, length, access, out, lkey, rkey);
  });
}

int ModelQueueMemoryAt(Device* device, uint64_t addr, size_t length) {
  // Held on the slot's bus while a queue uses it.
  return OnModelDevice(device, [&](ModelDevice& d) { return d.SetQueueMemory(addr, length); });
}

namespace {

// ModelSendRing, ModelRecvRing, ModelSrqRing, ModelCqRing.
template <typename Handle, typename Out>
int RingOf(Device* device, Handle h, Out* out, int (ModelDevice::*of)(Handle, Out*)) {
  return OnModelDevice(device,
                       [&](ModelDevice& d) { return out == nullptr ? EINVAL : (d.*of)(h, out); });
}
}  // namespace

int ModelSendRing(Device* device, QpHandle qp, SendRing* out) {
  return RingOf(device, qp, out, &ModelDevice::SendRingOf);
}

int ModelRecvRing(Device* device, QpHandle qp, RecvRing* out) {
  return RingOf(device, qp, out, &ModelDevice::RecvRingOf);
}

int ModelSrqRing(Device* device, SrqHandle srq, RecvRing* out) {
  return RingOf(device, srq, out, &ModelDevice::SrqRingOf);
}

int ModelCqRing(Device* device, CqHandle cq, CqRing* out) {
  return RingOf(device, cq, out, &ModelDevice::CqRingOf);
}

int ModelCqEvent(Device* device, CqHandle cq, uint64_t addr, uint32_t data) {
  return OnModelDevice(device, [&](ModelDevice& d) { return d.SetCqEvent(cq, addr, data); });
}

namespace {
// The platform on this thread, elaborated if it still can be (kernel.h 1): observers need it.
bool PlatformReady() {
  sim::PrepareSystemC();
  if (!sim::ClaimKernel()) return false;
  (void)sim::Advance(0);
  return sim::Platform::Get() != nullptr;
}
}  // namespace

bool SetModelDmaObserver(std::function<void(const DmaTransfer&)> fn) {
  if (!PlatformReady()) return false;
  if (!fn) {
    sim::Platform::SetObserver(nullptr);
    return true;
  }
  sim::Platform::SetObserver([fn = std::move(fn)](const sim::DmaRecord& r) {
    fn(DmaTransfer{r.slot, engine::ToName(r.tag.kind), r.tag.qpn, r.tag.now_ns, r.write,
                   r.addr, r.bytes, r.ok});
  });
  return true;
}

bool SetModelNetObserver(std::function<void(const NetTransfer&)> fn) {
  if (!PlatformReady()) return false;
  if (!fn) {
    sim::Platform::SetNetObserver(nullptr);
    return true;
  }
  sim::Platform::SetNetObserver([fn = std::move(fn)](const sim::NetRecord& r) {
    const engine::Packet& p = *r.pkt;
    fn(NetTransfer{r.src_slot, r.dst_slot, engine::ToName(p.kind), p.src_qpn, p.dst_qpn, p.psn,
                   p.npkts, p.data.size(), r.wire_bytes, r.leave_ns, r.arrive_ns});
  });
  return true;
}

void ModelClearDmaErrors() {
  if (sim::Platform* p = sim::OnKernelThread() ? sim::Platform::Get() : nullptr) {
    p->memory().ClearErrors();
  }
}

SystemCRates MeasureSystemCRates(uint64_t activations) {
  const sim::RawActivationRates r = sim::MeasureRawActivations(activations);
  return SystemCRates{r.method_per_s, r.thread_per_s, r.method_per_cpu_s, r.thread_per_cpu_s};
}

std::vector<CacheCounter> ModelCacheCounters(Backend* backend, int device) {
  std::vector<CacheCounter> out;
  auto* m = dynamic_cast<ModelBackend*>(backend);
  if (!m || device < 0 || device >= m->world().nic_count()) return out;
  const engine::ContextCache& c = m->world().nic(device)->cache();
  if (!c.enabled()) return out;
  for (int k = 0; k < engine::kCacheKinds; ++k) {
    const auto kind = static_cast<engine::CacheKind>(k);
    out.push_back(CacheCounter{engine::ToName(kind), c.capacity(kind), c.stats(kind).hits,
                               c.stats(kind).misses});
  }
  return out;
}

bool AttachRoceBridge(Backend* backend, RoceBridge* bridge) {
  auto* m = dynamic_cast<ModelBackend*>(backend);
  if (!m) return false;
  m->Attach(bridge);
  return true;
}

int InjectRoceDatagram(Backend* backend, int device, uint32_t src_ip, uint16_t src_port,
                       const uint8_t* data, size_t len) {
  auto* m = dynamic_cast<ModelBackend*>(backend);
  if (!m || !m->roce()) return ENODEV;
  return m->roce()->Inject(device, src_ip, src_port, data, len);
}

RoceCounters ModelRoceCounters(Backend* backend) {
  auto* m = dynamic_cast<ModelBackend*>(backend);
  return m && m->roce() ? m->roce()->counters() : RoceCounters{};
}

bool FlushRoce(Backend* backend, uint64_t max_ns) {
  auto* m = dynamic_cast<ModelBackend*>(backend);
  if (!m) return true;
  engine::World& w = m->world();
  w.events().RunUntil([&w] { return w.outgoing() == 0; }, w.events().Now() + max_ns);
  w.WaitOutHostStall();  // the program wakes up when its CPU is free again, as in Advance
  return w.outgoing() == 0;  // the stall may have sent more
}

bool MoveModelThread(std::thread::id from, std::thread::id to) {
  return sim::MoveKernel(from, to);
}

std::vector<std::string> ProfileNames() { return KnownProfileNames(); }

int RunWithSystemC(int argc, char** argv, const std::function<int(int, char**)>& fn) {
  sim::PrepareSystemC();
  return fn(argc, argv);
}

}  // namespace qptwin::model
