// A program that starts SystemC's simulation before its first model Backend: the model's
// platform (model/sim/platform.h contract 1) can no longer be elaborated, and
// MakeModelBackend says so instead of running without it.
#include <gtest/gtest.h>

#include <systemc>

#include "model/model_backend.h"

namespace qptwin::model {
namespace {

TEST(LateStart, NoModelBackendAfterTheProgramsOwnSimulationStarted) {
  sc_core::sc_start(sc_core::sc_time(1, sc_core::SC_NS));  // the program's own simulation
  std::string why;
  EXPECT_EQ(MakeModelBackend(ModelOptions{}, &why), nullptr);
  EXPECT_NE(why.find("before calling sc_start"), std::string::npos) << why;
  EXPECT_FALSE(ModelInjectDmaError(&why, 1));
  EXPECT_EQ(ModelDmaCounters(0).reads, 0u);
}

}  // namespace
}  // namespace qptwin::model
