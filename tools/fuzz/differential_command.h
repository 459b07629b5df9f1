// `qptwin fuzz --differential`: the whole-surface differential fuzzer's front end.
//
//   qptwin fuzz --differential [--backend model] [--profile P] [--against hw|model[:P]]
//               [--device D] [--seed S] [--sequences K] [--seconds N] [--shard I/N]
//               [--max-len A] [--poll-ms T] [--out DIR] [--replay n]
//
// Side a is the model (profile P, default rxe); side b is --against: hw (the real device),
// model:P2 (another profile), or, without --against, the same model again (determinism).
// Exit codes: 0 no difference; 1 at least one (the first kMaxSaved saved as DIR/S-n.qps);
// 2 bad input, an unwritable DIR, no device (one `qptwin: ...` line).
// Sharding: --shard I/N; else TEST_SHARD_INDEX/TEST_TOTAL_SHARDS when Bazel runs it as a
// sharded test (TEST_SHARD_STATUS_FILE is touched to say the test shards).
#pragma once

#include <functional>
#include <iosfwd>
#include <memory>
#include <string>

#include "spec/backend.h"
#include "tools/cli/backend_factory.h"
#include "tools/cli/flags.h"

namespace qptwin::fuzz {

using SpecFactory =
    std::function<std::unique_ptr<Backend>(const cli::BackendSpec& spec, std::string* error)>;

// The flags the differential mode adds to `qptwin fuzz`.
std::vector<cli::FlagSpec> DifferentialFlags();
extern const char kDifferentialUsage[];

int RunDifferentialFuzz(const cli::Flags& flags, std::ostream& out, std::ostream& err,
                        const SpecFactory& make);

}  // namespace qptwin::fuzz
