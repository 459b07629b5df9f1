// libFuzzer target (OSS-Fuzz conventions): bytes -> a command sequence on two connected RC QPs
// of the model, run against the reference model (spec/reference/sequence.h).
//
//   byte 0      the model profile: even = rxe, odd = ibta
//   bytes 1...  commands, kBytesPerCommand each (spec/reference/sequence_gen.h); every byte
//               string is a valid sequence, at most kMaxCommands long
//
// A violated rule prints the profile, the rule and the sequence as .qps lines, then abort()s.
// Known open bugs (known_bugs.h) are reported once each and not treated as crashes, so that a
// run stops on new findings only; QPTWIN_FUZZ_STRICT=1 makes them crash too.
// QPTWIN_FUZZ_VERBOSE=1 prints every sequence and its outcome (to look at a corpus).
//
// Built outside Bazel by build.sh (clang, -fsanitize=fuzzer). libsystemc.so exports a main()
// of its own; libFuzzer's main() is linked statically into the executable, so it is the one
// that runs, and the model starts the SystemC kernel lazily on its first use. sc_main() below
// only satisfies libsystemc.so's reference and says so if it is ever called.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <string>

#include "model/model_backend.h"
#include "spec/reference/sequence.h"
#include "spec/reference/sequence_gen.h"
#include "tools/fuzz/known_bugs.h"

namespace {

constexpr size_t kMaxCommands = 64;
constexpr uint64_t kSettleNs = 2'000'000;  // as `qptwin fuzz --backend model`

bool EnvIs1(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr && std::string(v) == "1";
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int* /*argc*/, char*** /*argv*/) {
  setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 0);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  qptwin::model::ModelOptions opts;
  opts.profile = (data[0] & 1) ? "ibta" : "rxe";
  opts.devices = 1;
  qptwin::reference::ByteSource bytes(data + 1, size - 1);
  const auto cmds = qptwin::reference::DecodeSequence(bytes, kMaxCommands);
  auto backend = qptwin::model::MakeModelBackend(opts);
  if (!backend) return 0;  // unreachable: both profiles exist
  const qptwin::reference::SeqResult r = qptwin::reference::RunSequence(*backend, cmds, kSettleNs);
  static const bool verbose = EnvIs1("QPTWIN_FUZZ_VERBOSE");
  if (verbose) {
    std::fprintf(stderr, "sequence_fuzzer: profile %s, %zu commands: %s\n%s",
                 opts.profile.c_str(), cmds.size(), r.failure.empty() ? "ok" : r.failure.c_str(),
                 r.replay.c_str());
  }
  if (r.failure.empty()) return 0;

  static const bool strict = EnvIs1("QPTWIN_FUZZ_STRICT");
  const char* bug = qptwin::fuzz::KnownOpenBug(r.failure);
  if (bug != nullptr && !strict) {
    static std::set<std::string> reported;
    if (reported.insert(bug).second) {
      std::fprintf(stderr, "sequence_fuzzer: known open bug (not a crash; QPTWIN_FUZZ_STRICT=1 "
                           "to stop on it): %s\n  e.g. %s\n", bug, r.failure.c_str());
    }
    return 0;
  }
  std::fprintf(stderr,
               "sequence_fuzzer: profile %s broke a rule after %d of %zu commands:\n  %s\n"
               "# the sequence as the device got it (.qps, qptwin run replays it):\n%s",
               opts.profile.c_str(), r.commands, cmds.size(), r.failure.c_str(),
               r.replay.c_str());
  std::abort();
}

// libsystemc.so calls sc_main() from its own main(); this binary's main() is libFuzzer's.
extern "C" int sc_main(int, char**) {
  std::fprintf(stderr, "sequence_fuzzer: SystemC's main() ran instead of libFuzzer's (link "
                       "libFuzzer into the executable: -fsanitize=fuzzer)\n");
  return 1;
}
