#include "tools/exec/preload.h"

#include <dlfcn.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "model/model_backend.h"
#include "tools/exec/bridge.h"

namespace qptwin::exec {
namespace {

int EnvInt(const char* name, int dflt) {
  const char* v = getenv(name);
  if (v == nullptr || *v == '\0') return dflt;
  char* end = nullptr;
  const long n = strtol(v, &end, 10);
  return *end == '\0' && n >= 0 && n <= kMaxDevices ? static_cast<int>(n) : dflt;
}

void Signal(int fd) {
  const uint64_t one = 1;
  if (write(fd, &one, sizeof(one)) < 0) {
    // An eventfd write fails only when the counter would overflow: it is readable anyway.
  }
}

enum class ThreadMode { kAuto, kCaller, kDedicated };

// QPTWIN_MODEL_THREAD (preload.h contract 2): unset or "auto", "caller", "dedicated".
ThreadMode ModelThreadFromEnv() {
  const char* v = getenv("QPTWIN_MODEL_THREAD");
  if (v == nullptr || *v == '\0' || std::strcmp(v, "auto") == 0) return ThreadMode::kAuto;
  if (std::strcmp(v, "caller") == 0) return ThreadMode::kCaller;
  if (std::strcmp(v, "dedicated") == 0) return ThreadMode::kDedicated;
  std::fprintf(stderr,
               "qptwin preload: QPTWIN_MODEL_THREAD=%s: expected auto, caller or dedicated; "
               "using auto\n",
               v);
  return ThreadMode::kAuto;
}

}  // namespace

Preload& Preload::Get() {
  static Preload* const preload = new Preload();  // never destroyed (contract 1)
  return *preload;
}

Preload::Preload() {
  const char* p = getenv("QPTWIN_PROFILE");
  profile_ = p != nullptr && *p != '\0' ? p : "rxe";
  devices_ = EnvInt("QPTWIN_DEVICES", 2);
  for (int i = 0; i < devices_; ++i) {
    ibv_device& d = device_[i];
    d.node_type = IBV_NODE_CA;
    d.transport_type = IBV_TRANSPORT_IB;
    std::snprintf(d.name, sizeof(d.name), "qptwin%d", i);
    std::snprintf(d.dev_name, sizeof(d.dev_name), "qptwin_uverbs%d", i);
    std::snprintf(d.dev_path, sizeof(d.dev_path), "/sys/class/infiniband_verbs/qptwin_uverbs%d", i);
    std::snprintf(d.ibdev_path, sizeof(d.ibdev_path), "/sys/class/infiniband/qptwin%d", i);
  }
  const ThreadMode mode = ModelThreadFromEnv();
  thread_ = std::make_unique<ModelThread>(mode == ThreadMode::kDedicated
                                              ? ModelThread::Mode::kDedicated
                                              : ModelThread::Mode::kCaller,
                                          [this] { Idle(); }, 1'000'000);
  thread_->Run([this, mode] {
    model::ModelOptions opts;
    opts.profile = profile_;
    opts.devices = std::max(devices_, 1);
    bridge_ = Bridge::Make(opts.devices);
    if (bridge_) opts.ipv4 = bridge_->addresses();
    // The preload maps memfd pages over region buffers (user_memory.h): no buffer reuse.
    model::KeepRegionMappings(false);
    backend_ = model::MakeModelBackend(opts, &error_);
    if (!backend_ && error_.empty()) error_ = "the model could not be made";
    if (backend_ && bridge_) {
      bridge_->on_activate = [this, mode] {
        if (mode == ThreadMode::kDedicated) thread_->SetIdlePeriod(kBridgeIdleNs);
        if (mode == ThreadMode::kAuto) StartProgress();
      };
      bridge_->Attach(backend_.get());
    }
    if (!backend_) bridge_.reset();
  });
  if (!backend_) {
    std::fprintf(stderr, "qptwin preload: %s; no model devices\n", error_.c_str());
    devices_ = 0;
  }
}

int Preload::DeviceIndex(const ibv_device* d) const {
  for (int i = 0; i < devices_; ++i) {
    if (d == &device_[i]) return i;
  }
  return -1;
}

void Preload::Harvest(ModelContext* mctx) {
  for (ModelChannel* ch : mctx->channels) {
    while (ch->armed > 0) {
      CqHandle h;
      if (mctx->dev->GetCqEvent(ch->h, 0, &h) != 0) break;
      auto it = mctx->cqs.find(h.id);
      if (it == mctx->cqs.end()) continue;
      it->second->armed = false;
      --ch->armed;
      ch->events.push_back(ibv_cq_ex_to_cq(&it->second->cq));
      Signal(ch->ch.fd);
    }
  }
  for (const AsyncEvent& e : mctx->dev->TakeAsyncEvents()) {
    ibv_async_event ev{};
    ev.event_type = static_cast<ibv_event_type>(e.type);
    if (e.qp) {
      auto it = mctx->qps.find(e.qp.id);
      if (it == mctx->qps.end()) continue;
      ev.element.qp = &it->second->qpx.qp_base;
    } else if (e.cq) {
      auto it = mctx->cqs.find(e.cq.id);
      if (it == mctx->cqs.end()) continue;
      ev.element.cq = ibv_cq_ex_to_cq(&it->second->cq);
    } else if (e.srq) {
      auto it = mctx->srqs.find(e.srq.id);
      if (it == mctx->srqs.end()) continue;
      ev.element.srq = &it->second->srq;
    } else {
      ev.element.port_num = e.port_num;
    }
    mctx->async_events.push_back(ev);
    Signal(mctx->vctx.context.async_fd);
  }
}

void Preload::HarvestAll() {
  for (ModelContext* c : contexts_) Harvest(c);
}

void Preload::StartProgress() {
  ModelThread::Progress p;
  p.pump = [this] { return Pump(); };
  p.wait = [this](uint64_t ns) { bridge_->WaitReadable(ns); };
  p.move = [](std::thread::id from, std::thread::id to) {
    (void)model::MoveModelThread(from, to);
  };
  p.period_ns = kBridgeIdleNs;
  p.max_period_ns = kProgressMaxPeriodNs;
  p.busy_max_ns = kProgressBusyPeriodNs;
  (void)thread_->StartProgress(std::move(p));
}

bool Preload::Pump() {
  const model::RoceCounters before = model::ModelRoceCounters(backend_.get());
  // Catch up with wall time (the bridge gives at most a 50 us slice per step, draining
  // the sockets before each), as far as it may run.
  for (int i = 0; i < kPumpSteps; ++i) {
    const uint64_t allowed = bridge_->Step(kIdleStepNs, /*may_sleep=*/false);
    backend_->Advance(allowed);
    if (allowed < kBridgeSliceNs) break;
  }
  HarvestAll();
  const model::RoceCounters after = model::ModelRoceCounters(backend_.get());
  return after.datagrams_sent != before.datagrams_sent ||
         after.datagrams_received != before.datagrams_received;
}

void Preload::Idle() {
  // Programs that sleep in poll()/select() on a channel fd: let simulated time pass so the
  // completions they wait for can happen (contract 4).
  bool armed = false;
  for (ModelContext* c : contexts_) {
    for (ModelChannel* ch : c->channels) armed = armed || ch->armed > 0;
  }
  if (backend_ && bridge_ && bridge_->active()) {
    // The bridge (bridge.h contract 6): the peer needs answers while this program does
    // something else (spins on memory, sleeps): drain, inject, catch up with wall time.
    backend_->Advance(bridge_->Step(kIdleStepNs, /*may_sleep=*/false));
    HarvestAll();
    return;
  }
  if (!armed || !backend_) return;
  backend_->Advance(TimeStep(kIdleStepNs));
  HarvestAll();
}

uint64_t Preload::TimeStep(uint64_t want) {
  if (!bridge_) return want;
  if (bridge_->active()) thread_->NoteProgress();
  return bridge_->Step(want);
}

void Preload::FlushBridge() {
  if (bridge_) bridge_->Flush();
}

void Preload::WaitWall(uint64_t ns) {
  if (bridge_) bridge_->WaitWall(ns);
}

void* RealSymbol(const char* name, const char* version) {
  void* f = dlvsym(RTLD_NEXT, name, version);
  return f != nullptr ? f : dlsym(RTLD_NEXT, name);
}

}  // namespace qptwin::exec
