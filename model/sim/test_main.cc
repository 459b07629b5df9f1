// The main of every model test binary. libsystemc.so exports its own main(), which calls
// sc_main(): defining sc_main here (in an alwayslink library) makes the GoogleTest suite
// the program, so the tests really run.
//
// With QPTWIN_TEST_IN_SIMULATION set (to anything), the suite runs inside a simulation this
// sc_main starts itself, in one SC_THREAD, as a SystemC user's program would make its model
// calls (model/model_backend.h contract 6, model/sim/sc_clock.h contract 8): every wait of
// the model is then that thread's wait(), not an sc_start of the model's.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>

#ifndef SC_INCLUDE_DYNAMIC_PROCESSES
#define SC_INCLUDE_DYNAMIC_PROCESSES
#endif
#include <systemc>

#include "model/sim/kernel.h"

namespace {
// Runs before libsystemc's main() prints its banner.
const bool kQuiet = (qptwin::model::sim::PrepareSystemC(), true);
}  // namespace

extern "C" int sc_main(int argc, char** argv) {
  qptwin::model::sim::PrepareSystemC();
  testing::InitGoogleTest(&argc, argv);
  if (std::getenv("QPTWIN_TEST_IN_SIMULATION") == nullptr) return RUN_ALL_TESTS();
  (void)qptwin::model::sim::Advance(0);  // the kernel and the platform, before sc_start
  int rc = 1;
  sc_core::sc_spawn_options opts;
  opts.set_stack_size(64 << 20);  // GoogleTest and the model's deepest calls
  sc_core::sc_spawn(
      [&rc] {
        rc = RUN_ALL_TESTS();
        sc_core::sc_stop();
      },
      "suite", &opts);
  sc_core::sc_start();
  std::fprintf(stderr, "test_main: the suite ran inside the simulation, in one SC_THREAD, until %s\n",
               sc_core::sc_time_stamp().to_string().c_str());
  return rc;
}
