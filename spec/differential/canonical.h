// The compared form of a canonical transcript (spec/scenario/transcript.h): what the
// differential fuzzer compares line by line between the model and a real device.
//
// Real rxe is nondeterministic in a few places that no scenario can order; the compared
// form keeps every field of every line and only sorts within a documented window, saying so
// in a comment line (`# L<n> ...`) in front of the window:
//  1. Completions of one poll on a CQ that serves several queues (the send and receive
//     queues of one QP, or queues of several QPs): each queue completes in order (IBTA
//     10.8.6, C10-70), but the interleaving of different queues is the wire's and the
//     tasklets' (rxe's requester, responder and completer run apart). Within one poll the
//     completions are stably sorted by (QP name, queue): each queue's order is kept.
//  2. The async events taken by one `events` line: events of different objects (QPs, CQs,
//     SRQs, ports) arrive from different contexts; they are stably sorted by object, each
//     object's own events keeping their order.
// Nothing else is reordered, and nothing is dropped: a completion that arrives in another
// poll, a different count, status, length or state is a difference.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "spec/scenario/runner.h"

namespace qptwin::differential {

// The canonical transcript of `result` in its compared form.
std::string ComparableTranscript(const scenario::RunResult& result);
// One step's part of it, appended to *out: ComparableTranscript is these, step by step.
void AppendComparableStep(const scenario::Step& step, std::string* out);

struct Difference {
  int line = 0;        // 1-based line of the compared transcript a (of b past a's end)
  std::string a, b;    // the two lines ("(end)" past the end of one)
};

// The first line where the two texts differ, window comments (`# ...`) aside (the lines
// under them decide); nullopt when they are the same.
std::optional<Difference> FirstDifference(std::string_view a, std::string_view b);

}  // namespace qptwin::differential
