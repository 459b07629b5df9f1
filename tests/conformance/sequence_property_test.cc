// Random modify/post/poll sequences against the reference model (spec/reference/sequence.h):
// every return code predicted, completions in posting order, every WR accounted exactly once.
// A failure prints the shrunk sequence as .qps lines plus RapidCheck's seed
// (replay: RC_PARAMS="seed=N" bazel test ...).
#include <rapidcheck.h>

#include "tests/conformance/fixture.h"
#include "spec/reference/sequence.h"
#include "spec/reference/sequence_gen.h"

namespace qptwin::testing {
namespace {

using reference::SeqCommand;
using reference::SeqResult;
using reference::RunSequence;

// One command from kBytesPerCommand random bytes through the generator's one weight table
// (spec/reference/sequence_gen.cc DecodeCommand, also used by `qptwin fuzz` and libFuzzer);
// RapidCheck shrinks the bytes towards zero, i.e. towards "modify a to INIT".
rc::Gen<SeqCommand> GenCommand() {
  return rc::gen::map(
      rc::gen::container<std::vector<uint8_t>>(reference::kBytesPerCommand,
                                               rc::gen::arbitrary<uint8_t>()),
      [](const std::vector<uint8_t>& b) {
        reference::ByteSource src(b.data(), b.size());
        return reference::DecodeCommand(src);
      });
}

TEST_P(Conformance, RandomSequencesMatchTheReferenceAndLoseNothing) {
  const bool model = backend_->Kind() == "model";
  const uint64_t settle_ns = model ? 2'000'000 : 20'000'000;
  int runs = 0, commands = 0, completions = 0;
  const bool ok = rc::check("random modify/post/poll sequences", [&] {
    auto cmds = *rc::gen::container<std::vector<SeqCommand>>(GenCommand());
    std::string why;
    auto backend = GetParam().make(&why);
    RC_ASSERT(backend != nullptr);
    SeqResult r = RunSequence(*backend, cmds, settle_ns, GetParam().behaviour);
    ++runs;
    commands += r.commands;
    completions += r.completions;
    RC_LOG() << "replay as .qps (qptwin run):\n" << r.replay;
    RC_ASSERT(r.failure == "");
  });
  EXPECT_TRUE(ok);
  std::cout << "[ sequences ] " << runs << " sequences, " << commands << " commands, "
            << completions << " completions checked on " << GetParam().name << "\n";
}

}  // namespace
}  // namespace qptwin::testing
