// The main of every model test binary. libsystemc.so exports its own main(), which calls
// sc_main(): defining sc_main here (in an alwayslink library) makes the GoogleTest suite
// the program, so the tests really run.
#include <gtest/gtest.h>

#include "model/sim/kernel.h"

namespace {
// Runs before libsystemc's main() prints its banner.
const bool kQuiet = (qptwin::model::sim::PrepareSystemC(), true);
}  // namespace

extern "C" int sc_main(int argc, char** argv) {
  qptwin::model::sim::PrepareSystemC();
  testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
