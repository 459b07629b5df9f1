// The main of the SystemC layer's test binaries. libsystemc.so exports its own main(), which
// calls sc_main(): this sc_main (in an alwayslink library) runs GoogleTest, so the tests
// really run. Time resolution: SystemC's default, 1 ps (wire.h's times are exact in ps).
#include <gtest/gtest.h>

#include <cstdlib>

namespace {
// Runs before libsystemc's main() prints its banner (as model/sim/test_main.cc does).
const bool kQuiet = (setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 0), true);
}  // namespace

extern "C" int sc_main(int argc, char** argv) {
  testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
