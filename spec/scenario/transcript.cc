#include "spec/scenario/transcript.h"

#include <cinttypes>
#include <cstdio>

namespace qptwin::scenario {
namespace {

std::string Hex8(uint8_t b) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "0x%02x", b);
  return buf;
}

std::string Micros(uint64_t ns) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%12.3f us", static_cast<double>(ns) / 1000.0);
  return buf;
}

// The outcome without its "L<line> " prefix.
std::string Body(const Outcome& o) {
  switch (o.kind) {
    case Outcome::Kind::kOk:
      return "ok";
    case Outcome::Kind::kError:
      return "error " + std::string(ErrnoName(o.err));
    case Outcome::Kind::kState:
      return "state " + std::string(ToName(o.state));
    case Outcome::Kind::kWc: {
      // ibv_poll_cq(3): only wr_id, status, qp_num and vendor_err are defined for an error
      // CQE; src_qp, pkey_index, slid, sl and dlid_path_bits for receive completions.
      const WorkCompletion& wc = o.wc;
      bool ok = wc.status == WcStatus::kSuccess;
      std::string s = "wc wr_id=" + std::to_string(wc.wr_id) +
                      " status=" + std::string(ToName(wc.status));
      if (ok) s += " opcode=" + std::string(ToName(wc.opcode));
      s += " qp=" + o.qp;
      if (!ok) return s;
      s += " len=" + std::to_string(wc.byte_len);
      if (wc.wc_flags & wc_flag::kWithImm) s += " imm=" + std::to_string(wc.imm_data);
      if (wc.wc_flags & wc_flag::kWithInv) s += " inv=" + o.invalidated;
      s += " flags=" + FormatWcFlags(wc.wc_flags);
      if (wc.opcode >= WcOpcode::kRecv) {
        s += " src_qp=" + o.src_qp + " pkey_index=" + std::to_string(wc.pkey_index) +
             " slid=" + std::to_string(wc.slid) + " sl=" + std::to_string(wc.sl) +
             " dlid_path_bits=" + std::to_string(wc.dlid_path_bits);
      }
      return s;
    }
    case Outcome::Kind::kPolled:
      return "polled " + std::to_string(o.count);
    case Outcome::Kind::kEvent:
      return "event " + std::string(ToName(o.event)) + " " + o.object;
    case Outcome::Kind::kAttrs:
      return o.text;
    case Outcome::Kind::kMismatch:
      return "mismatch at=" + std::to_string(o.offset) + " got=" + Hex8(o.got) +
             " want=" + Hex8(o.want);
  }
  return "?";
}

// Extra facts for people that the canonical line leaves out.
std::string WcDetail(const WorkCompletion& wc) {
  std::string s = "qp_num=" + std::to_string(wc.qp_num);
  if (wc.opcode >= WcOpcode::kRecv && wc.status == WcStatus::kSuccess) {
    s += " src_qp=" + std::to_string(wc.src_qp);
  }
  if (wc.wc_flags & wc_flag::kWithInv) s += " rkey=" + std::to_string(wc.imm_data);
  if (wc.vendor_err) s += " vendor_err=" + std::to_string(wc.vendor_err);
  return s;
}

}  // namespace

std::string CanonicalLine(int line, const Outcome& o) {
  return "L" + std::to_string(line) + " " + Body(o);
}

std::string CanonicalStep(const Step& s) {
  std::string out;
  for (const Outcome& o : s.outcomes) out += CanonicalLine(s.line, o) + "\n";
  return out;
}

std::string CanonicalTranscript(const RunResult& result) {
  std::string out;
  for (const Step& s : result.steps) out += CanonicalStep(s);
  return out;
}

std::string NarratedHeader(const std::string& clock) {
  return "# time is " + clock + ", from the start of the scenario\n";
}

std::string NarratedStep(const Step& s, bool explain) {
  std::string out;
  const std::string indent(20, ' ');
  std::string head = "[" + Micros(s.start_ns) + "] L" + std::to_string(s.line) + "  " + s.text;
  // Single-outcome steps print on one line; poll and events list their results below.
  bool listed = s.outcomes.size() != 1 || s.outcomes.front().kind == Outcome::Kind::kEvent ||
                s.outcomes.front().kind == Outcome::Kind::kPolled ||
                s.outcomes.front().kind == Outcome::Kind::kAttrs;
  if (!listed) {
    out += head + "  -> " + Body(s.outcomes.front());
    if (!s.note.empty()) out += "  (" + s.note + ")";
    out += "\n";
  } else {
    out += head + "\n";
    for (const Outcome& o : s.outcomes) {
      out += indent + Body(o);
      if (o.kind == Outcome::Kind::kWc) out += "  (" + WcDetail(o.wc) + ")";
      out += "\n";
    }
    if (!s.note.empty()) out += indent + "(" + s.note + ")\n";
    if (s.end_ns != s.start_ns) out += indent + "until " + Micros(s.end_ns) + "\n";
  }
  if (explain) {
    for (const std::string& w : s.why) out += indent + "- " + w + "\n";
  }
  for (const std::string& f : s.failures) {
    out += indent + "!! expectation failed: " + f + "\n";
  }
  return out;
}

std::string NarratedFooter(size_t steps, int failures, uint64_t end_ns) {
  return "# " + std::to_string(steps) + " steps, " + std::to_string(failures) +
         " failed expectation(s), ended at" + Micros(end_ns) + "\n";
}

std::string NarratedTranscript(const RunResult& result, const std::string& clock,
                               bool explain) {
  std::string out = NarratedHeader(clock);
  for (const Step& s : result.steps) out += NarratedStep(s, explain);
  uint64_t end = result.steps.empty() ? 0 : result.steps.back().end_ns;
  return out + NarratedFooter(result.steps.size(), result.FailureCount(), end);
}

std::string StepFailures(const Step& s) {
  std::string out;
  for (const std::string& f : s.failures) {
    out += "line " + std::to_string(s.line) + ": " + f + "  [" + s.text + "]\n";
  }
  return out;
}

std::string FailureReport(const RunResult& result) {
  std::string out;
  for (const Step& s : result.steps) out += StepFailures(s);
  return out;
}

}  // namespace qptwin::scenario
