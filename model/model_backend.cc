#include "model/model_backend.h"

#include <algorithm>
#include <cerrno>

#include "model/engine/world.h"
#include "model/model_device.h"
#include "model/profile.h"
#include "model/sim/kernel.h"

namespace qptwin::model {
namespace {

class ModelBackend : public Backend {
 public:
  ModelBackend(const Profile& profile, const ModelOptions& opts)
      : world_(std::make_shared<engine::World>(profile, std::max(1, opts.devices),
                                               std::clamp(opts.loss_rate, 0.0, 1.0),
                                               opts.seed)) {
    // The engine's clock drives SystemC's: every step of simulated time is an sc_start.
    world_->events().SetStepHook([](uint64_t delta) { sim::Advance(delta); });
  }

  std::string Kind() const override { return "model"; }

  std::vector<std::string> ListDevices() override {
    std::vector<std::string> out;
    for (int i = 0; i < world_->nic_count(); ++i) out.push_back(world_->nic(i)->name());
    return out;
  }

  int OpenDevice(const std::string& name, std::unique_ptr<Device>* out) override {
    if (!out) return EINVAL;
    for (int i = 0; i < world_->nic_count(); ++i) {
      if (name.empty() || world_->nic(i)->name() == name) {
        *out = std::make_unique<ModelDevice>(world_, i);
        return 0;
      }
    }
    return ENODEV;
  }

  uint64_t NowNs() override { return world_->events().Now(); }
  void Advance(uint64_t ns) override { world_->events().AdvanceBy(std::min(ns, kMaxWaitNs)); }

 private:
  std::shared_ptr<engine::World> world_;
};

}  // namespace

std::unique_ptr<Backend> MakeModelBackend(const ModelOptions& opts) {
  const Profile* profile = FindProfile(opts.profile);
  if (profile == nullptr) return nullptr;
  sim::PrepareSystemC();
  return std::make_unique<ModelBackend>(*profile, opts);
}

std::vector<std::string> ProfileNames() { return KnownProfileNames(); }

int RunWithSystemC(int argc, char** argv, const std::function<int(int, char**)>& fn) {
  sim::PrepareSystemC();
  return fn(argc, argv);
}

}  // namespace qptwin::model
