// The one backend factory: every way --backend/--profile/--device can be wrong is one line
// that names the valid choices.
#include "tools/cli/backend_factory.h"

#include <gtest/gtest.h>

#include "hw/verbs_backend.h"

namespace qptwin::cli {
namespace {

Flags Parse(const std::vector<std::string>& args) {
  std::string error;
  auto f = ParseFlags(args, BackendFlags(), &error);
  EXPECT_TRUE(f) << error;
  return f.value_or(Flags{});
}

TEST(BackendFactory, ModelWithProfileAndDevices) {
  BackendSpec spec;
  spec.devices = 2;
  std::string error;
  ASSERT_TRUE(BackendSpecFromFlags(Parse({"--profile", "ibta"}), &spec, &error)) << error;
  EXPECT_EQ(spec.kind, "model");
  auto backend = MakeBackend(spec, &error);
  ASSERT_NE(backend, nullptr) << error;
  EXPECT_EQ(backend->Kind(), "model");
  EXPECT_EQ(backend->ListDevices(), (std::vector<std::string>{"mdev0", "mdev1"}));
}

TEST(BackendFactory, UnknownKindAndProfileNameTheChoices) {
  BackendSpec spec;
  std::string error;
  EXPECT_FALSE(BackendSpecFromFlags(Parse({"--backend", "fpga"}), &spec, &error));
  EXPECT_EQ(error, "unknown backend 'fpga' (valid: model, hw)");
  spec = BackendSpec{};
  spec.profile = "cx7";
  EXPECT_EQ(MakeBackend(spec, &error), nullptr);
  EXPECT_EQ(error.rfind("unknown model profile 'cx7' (valid: rxe, ibta", 0), 0u) << error;
  spec = BackendSpec{};
  EXPECT_FALSE(BackendSpecFromFlags(Parse({"--backend", "hw", "--profile", "rxe"}), &spec, &error));
  EXPECT_EQ(error.rfind("--profile is for --backend model (valid: model profiles rxe, ibta", 0),
            0u)
      << error;
}

TEST(BackendFactory, ADeviceThatIsNotThereListsTheOnesThatAre) {
  BackendSpec spec;
  spec.device = "bogus\x1b";
  std::string error;
  EXPECT_EQ(MakeBackend(spec, &error), nullptr);
  EXPECT_EQ(error, "--backend model: no device 'bogus\\x1b' (found: mdev0)");
  spec.device = "mdev0";
  EXPECT_NE(MakeBackend(spec, &error), nullptr) << error;
}

TEST(BackendFactory, HwWithoutADeviceIsOneLine) {
  if (!hw::MakeVerbsBackend(hw::VerbsOptions{})->ListDevices().empty()) {
    GTEST_SKIP() << "an RDMA device is present; this case needs a machine without one";
  }
  BackendSpec spec;
  spec.kind = "hw";
  spec.device = "rxe0";
  std::string error;
  EXPECT_EQ(MakeBackend(spec, &error), nullptr);
  EXPECT_EQ(error.rfind("--backend hw: no RDMA device found (load Soft-RoCE", 0), 0u) << error;
  EXPECT_EQ(error.find('\n'), std::string::npos);
}

}  // namespace
}  // namespace qptwin::cli
