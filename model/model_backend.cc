#include "model/model_backend.h"

#include <algorithm>
#include <cerrno>

#include "model/engine/nic.h"
#include "model/engine/world.h"
#include "model/model_device.h"
#include "model/profile.h"
#include "model/sim/kernel.h"
#include "model/thread_checked_device.h"

namespace qptwin::model {
namespace {

class ModelBackend : public Backend {
 public:
  ModelBackend(const Profile& profile, const ModelOptions& opts)
      : world_(std::make_shared<engine::World>(profile, std::max(1, opts.devices),
                                               std::clamp(opts.loss_rate, 0.0, 1.0),
                                               opts.seed)) {
    // The engine's clock drives SystemC's: every step of simulated time is an sc_start.
    world_->events().SetStepHook([](uint64_t delta) { (void)sim::Advance(delta); });
  }

  // Off the kernel's thread the world is deliberately leaked, not freed while that thread
  // may be using it (spec/backend.h, contract 5).
  ~ModelBackend() override {
    if (!sim::OnKernelThread()) new std::shared_ptr<engine::World>(std::move(world_));
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
    if (!sim::OnKernelThread()) return EPERM;
    for (int i = 0; i < world_->nic_count(); ++i) {
      if (name.empty() || world_->nic(i)->name() == name) {
        *out = CheckThread(std::make_unique<ModelDevice>(world_, i));
        return 0;
      }
    }
    return ENODEV;
  }

  engine::World& world() { return *world_; }

  uint64_t NowNs() override { return sim::OnKernelThread() ? world_->events().Now() : 0; }
  void Advance(uint64_t ns) override {
    if (sim::OnKernelThread()) world_->events().AdvanceBy(std::min(ns, kMaxWaitNs));
  }

 private:
  std::shared_ptr<engine::World> world_;
};

}  // namespace

std::unique_ptr<Backend> MakeModelBackend(const ModelOptions& opts, std::string* why) {
  const Profile* profile = FindProfile(opts.profile);
  if (profile == nullptr) {
    if (why) *why = "unknown model profile '" + opts.profile + "'";
    return nullptr;
  }
  sim::PrepareSystemC();
  if (!sim::ClaimKernel()) {
    if (why) {
      *why = "the SystemC kernel belongs to another thread: model Backends are used from the "
             "thread that made the first one (spec/backend.h, contract 5)";
    }
    return nullptr;
  }
  Profile chosen = *profile;
  chosen.timing.cache.enabled = chosen.timing.cache.enabled && opts.context_cache;
  return std::make_unique<ModelBackend>(chosen, opts);
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

std::vector<std::string> ProfileNames() { return KnownProfileNames(); }

int RunWithSystemC(int argc, char** argv, const std::function<int(int, char**)>& fn) {
  sim::PrepareSystemC();
  return fn(argc, argv);
}

}  // namespace qptwin::model
