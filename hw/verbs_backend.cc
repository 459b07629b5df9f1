// The hw Backend: lists and opens libibverbs devices; real monotonic time.
#include "hw/verbs_backend.h"

#include <cerrno>
#include <cstdlib>
#include <thread>

#include "hw/handle_table.h"
#include "hw/verbs_device.h"

namespace qptwin::hw {
namespace {

class VerbsBackend : public Backend {
 public:
  explicit VerbsBackend(const VerbsOptions& opts)
      : opts_(opts), ids_(std::make_shared<IdSource>()) {}

  std::string Kind() const override { return "hw"; }

  std::vector<std::string> ListDevices() override {
    std::vector<std::string> names;
    int num = 0;
    ibv_device** list = ibv_get_device_list(&num);
    if (list == nullptr) return names;
    for (int i = 0; i < num; ++i) names.push_back(ibv_get_device_name(list[i]));
    ibv_free_device_list(list);
    return names;
  }

  // The device: `name`, else VerbsOptions::device, else $QPTWIN_DEVICE, else the first.
  int OpenDevice(const std::string& name, std::unique_ptr<Device>* out) override {
    if (out == nullptr) return EINVAL;
    std::string wanted = name;
    if (wanted.empty()) wanted = opts_.device;
    if (wanted.empty()) {
      const char* env = std::getenv("QPTWIN_DEVICE");
      if (env != nullptr) wanted = env;
    }
    int num = 0;
    ibv_device** list = ibv_get_device_list(&num);
    if (list == nullptr) return ENODEV;
    ibv_device* chosen = nullptr;
    for (int i = 0; i < num && chosen == nullptr; ++i) {
      if (wanted.empty() || wanted == ibv_get_device_name(list[i])) chosen = list[i];
    }
    int ret = ENODEV;
    if (chosen != nullptr) {
      errno = 0;
      ibv_context* context = ibv_open_device(chosen);
      if (context == nullptr) {
        ret = LastErrno();
      } else {
        *out = std::make_unique<VerbsDevice>(context, opts_, ids_, clock_);
        ret = 0;
      }
    }
    ibv_free_device_list(list);  // an opened context stays valid after this
    return ret;
  }

  uint64_t NowNs() override { return clock_.NowNs(); }

  void Advance(uint64_t ns) override { std::this_thread::sleep_for(std::chrono::nanoseconds(ns)); }

 private:
  VerbsOptions opts_;
  std::shared_ptr<IdSource> ids_;
  MonotonicClock clock_;
};

}  // namespace

std::unique_ptr<Backend> MakeVerbsBackend(const VerbsOptions& opts) {
  return std::make_unique<VerbsBackend>(opts);
}

}  // namespace qptwin::hw
