// Renders a RunResult: the canonical transcript (deterministic, comparable across
// backends) and the narrated trace (for people, with times).
//
// Canonical lines (FORMAT.md), one per outcome, no times, addresses or QP numbers:
//   L<line> ok | L<line> error EINVAL | L<line> state RTS
//   L<line> wc wr_id=N status=S [opcode=O] qp=NAME [len=N] [imm=N] [inv=KEY] [flags=F]
//           [src_qp=QP pkey_index=N slid=N sl=N dlid_path_bits=N]
//     (opcode and what follows qp=: SUCCESS only; src_qp...: receive opcodes only)
//   L<line> qp_attr ... | qp_ah ... | device_attr ... (queries: one line per group)
//   L<line> polled K | L<line> event SQ_DRAINED qp=NAME | L<line> mismatch at=OFF got=0xG want=0xW
#pragma once

#include <string>

#include "spec/scenario/runner.h"

namespace qptwin::scenario {

std::string CanonicalLine(int line, const Outcome& o);
// The same line (without '\n') appended to *out.
void AppendCanonicalLine(int line, const Outcome& o, std::string* out);
std::string CanonicalTranscript(const RunResult& result);
// `clock` names the time base in the header ("simulated" or "real"). With `explain`, each
// step is followed by its narration (Step::why: what changed, why, which rule).
std::string NarratedTranscript(const RunResult& result, const std::string& clock,
                               bool explain = false);
// "line 12: expected SUCCESS, got WR_FLUSH_ERR", one per failure.
std::string FailureReport(const RunResult& result);

// The same one step at a time, for a streamed run (StreamRun): the transcripts above are
// NarratedHeader + NarratedStep... + NarratedFooter, CanonicalStep..., StepFailures....
std::string CanonicalStep(const Step& s);
std::string NarratedHeader(const std::string& clock);
std::string NarratedStep(const Step& s, bool explain);
std::string NarratedFooter(size_t steps, int failures, uint64_t end_ns);
std::string StepFailures(const Step& s);

}  // namespace qptwin::scenario
