#include "spec/differential/canonical.h"

#include <algorithm>
#include <vector>

#include "spec/scenario/transcript.h"

namespace qptwin::differential {
namespace {

using scenario::Outcome;
using scenario::Step;

// "qp/rq" or "qp/sq": the queue a completion came from (accounting's charge, else its opcode).
std::string QueueKey(const Outcome& o) {
  bool recv = o.wr_opcode == "RECV";
  if (o.wr_opcode.empty()) {
    recv = o.wc.status == WcStatus::kSuccess &&
           (o.wc.opcode == WcOpcode::kRecv || o.wc.opcode == WcOpcode::kRecvRdmaWithImm);
  }
  return o.qp + (recv ? "/rq" : "/sq");
}

std::string EventKey(const Outcome& o) { return o.object; }

// Appends the step's lines; runs of `kind` outcomes with several keys are sorted stably.
void AppendStep(const Step& s, std::string* out) {
  // Most steps have one outcome, or outcomes of one kind and one key: nothing to sort.
  const size_t n = s.outcomes.size();
  if (n == 1) {
    scenario::AppendCanonicalLine(s.line, s.outcomes[0], out);
    *out += '\n';
    return;
  }
  std::vector<const Outcome*> outcomes;
  for (Outcome::Kind kind : {Outcome::Kind::kWc, Outcome::Kind::kEvent}) {
    auto key = kind == Outcome::Kind::kWc ? QueueKey : EventKey;
    size_t i = 0;
    while (i < n) {
      const Outcome& first = outcomes.empty() ? s.outcomes[i] : *outcomes[i];
      if (first.kind != kind) {
        ++i;
        continue;
      }
      size_t j = i + 1;
      while (j < n && (outcomes.empty() ? s.outcomes[j] : *outcomes[j]).kind == kind) ++j;
      if (j - i < 2) {  // one outcome: nothing to order
        i = j;
        continue;
      }
      std::vector<std::string> keys;  // the run's keys, in order
      keys.reserve(j - i);
      size_t distinct = 0;
      for (size_t k = i; k < j; ++k) {
        keys.push_back(key(outcomes.empty() ? s.outcomes[k] : *outcomes[k]));
        bool seen = false;
        for (size_t m = 0; m + 1 < keys.size() && !seen; ++m) seen = keys[m] == keys.back();
        distinct += !seen;
      }
      if (distinct > 1) {
        if (outcomes.empty()) {
          outcomes.reserve(n);
          for (const Outcome& o : s.outcomes) outcomes.push_back(&o);
        }
        // Stable by key: positions i..j-1 reordered by their precomputed keys.
        std::vector<size_t> order(j - i);
        for (size_t k = 0; k < order.size(); ++k) order[k] = k;
        std::stable_sort(order.begin(), order.end(),
                         [&](size_t x, size_t y) { return keys[x] < keys[y]; });
        std::vector<const Outcome*> sorted(order.size());
        for (size_t k = 0; k < order.size(); ++k) sorted[k] = outcomes[i + order[k]];
        std::copy(sorted.begin(), sorted.end(), outcomes.begin() + i);
        *out += "# L" + std::to_string(s.line) + " " + std::to_string(j - i) +
                (kind == Outcome::Kind::kWc
                     ? " completions of " + std::to_string(distinct) +
                           " queues sorted by (qp, queue); each queue's order kept "
                           "(across queues the order is the wire's)\n"
                     : " events of " + std::to_string(distinct) +
                           " objects sorted by object; each object's order kept\n");
      }
      i = j;
    }
  }
  for (size_t k = 0; k < n; ++k) {
    scenario::AppendCanonicalLine(s.line, outcomes.empty() ? s.outcomes[k] : *outcomes[k], out);
    *out += '\n';
  }
}

bool NextLine(std::string_view* text, std::string_view* line) {
  if (text->empty()) return false;
  const size_t nl = text->find('\n');
  *line = text->substr(0, nl);
  *text = nl == std::string_view::npos ? std::string_view() : text->substr(nl + 1);
  return true;
}

}  // namespace

void AppendComparableStep(const scenario::Step& step, std::string* out) { AppendStep(step, out); }

std::string ComparableTranscript(const scenario::RunResult& result) {
  std::string out;
  out.reserve(result.steps.size() * 32);
  for (const Step& s : result.steps) AppendStep(s, &out);
  return out;
}

std::optional<Difference> FirstDifference(std::string_view a, std::string_view b) {
  std::string_view la, lb;
  // The window comments say how the lines after them were ordered; those lines decide.
  auto next = [](std::string_view* text, std::string_view* line, int* n) {
    while (NextLine(text, line)) {
      ++*n;
      if (line->rfind("# ", 0) != 0) return true;
    }
    return false;
  };
  for (int n = 0, m = 0;;) {
    const bool more_a = next(&a, &la, &n);
    const bool more_b = next(&b, &lb, &m);
    if (!more_a && !more_b) return std::nullopt;
    if (more_a && more_b && la == lb) continue;
    return Difference{more_a ? n : m, more_a ? std::string(la) : "(end)",
                      more_b ? std::string(lb) : "(end)"};
  }
}

}  // namespace qptwin::differential
