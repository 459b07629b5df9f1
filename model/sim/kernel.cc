#include "model/sim/kernel.h"

#include <cstdio>
#include <cstdlib>

#include <systemc>

namespace qptwin::model::sim {
namespace {

bool& Started() {
  static bool started = false;
  return started;
}

}  // namespace

void PrepareSystemC() { setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 0); }

void Advance(uint64_t ns) {
  if (!Started()) {
    PrepareSystemC();
    try {
      sc_core::sc_set_time_resolution(1, sc_core::SC_NS);
    } catch (...) {
      // Someone already made sc_time objects: keep SystemC's default (1 ps).
    }
    Started() = true;
  }
  if (ns == 0) return;
  sc_core::sc_start(sc_core::sc_time(static_cast<double>(ns), sc_core::SC_NS));
}

uint64_t KernelNowNs() {
  if (!Started()) return 0;
  return static_cast<uint64_t>(sc_core::sc_time_stamp().to_seconds() * 1e9 + 0.5);
}

}  // namespace qptwin::model::sim

// libsystemc.so refers to sc_main (its own main() calls it), so every binary linking SystemC
// must define one. Binaries with their own main() (the CLI, the benchmark) get this weak
// fallback and never call it; test binaries override it with //model/sim:test_main.
extern "C" __attribute__((weak)) int sc_main(int, char**) {
  std::fprintf(stderr, "qptwin: this binary has no main(); link //model/sim:test_main or define main()\n");
  return 1;
}
