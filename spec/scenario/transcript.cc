#include "spec/scenario/transcript.h"

#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <string_view>

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

// A line's pieces gathered on the stack and appended to the string at once: a transcript
// line has a dozen short pieces, and each append to a std::string is a call.
class LineAppender {
 public:
  explicit LineAppender(std::string* out) : out_(out) {}
  ~LineAppender() { Flush(); }
  LineAppender(const LineAppender&) = delete;
  LineAppender& operator=(const LineAppender&) = delete;

  LineAppender& operator+=(std::string_view s) {
    if (n_ + s.size() > sizeof buf_) {
      Flush();
      if (s.size() > sizeof buf_) {
        out_->append(s);
        return *this;
      }
    }
    std::memcpy(buf_ + n_, s.data(), s.size());
    n_ += s.size();
    return *this;
  }
  LineAppender& operator+=(char c) {
    if (n_ == sizeof buf_) Flush();
    buf_[n_++] = c;
    return *this;
  }
  void Number(uint64_t v) {
    char digits[24];
    char* const end = digits + sizeof digits;
    char* p = end;
    do {
      *--p = static_cast<char>('0' + v % 10);
      v /= 10;
    } while (v != 0);
    *this += std::string_view(p, static_cast<size_t>(end - p));
  }
  void Flush() {
    if (n_ > 0) out_->append(buf_, n_);
    n_ = 0;
  }

 private:
  std::string* out_;
  size_t n_ = 0;
  char buf_[256];
};

// The outcome without its "L<line> " prefix, appended to *out.
void AppendBody(const Outcome& o, LineAppender* line) {
  LineAppender& out = *line;
  switch (o.kind) {
    case Outcome::Kind::kOk:
      out += "ok";
      return;
    case Outcome::Kind::kError:
      out += "error ";
      out += ErrnoName(o.err);
      return;
    case Outcome::Kind::kState:
      out += "state ";
      out += ToName(o.state);
      return;
    case Outcome::Kind::kWc: {
      // ibv_poll_cq(3): only wr_id, status, qp_num and vendor_err are defined for an error
      // CQE; src_qp, pkey_index, slid, sl and dlid_path_bits for receive completions.
      const WorkCompletion& wc = o.wc;
      bool ok = wc.status == WcStatus::kSuccess;
      out += "wc wr_id=";
      out.Number(wc.wr_id);
      out += " status=";
      out += ToName(wc.status);
      if (ok) {
        out += " opcode=";
        out += ToName(wc.opcode);
      }
      out += " qp=";
      out += o.qp;
      if (!ok) return;
      out += " len=";
      out.Number(wc.byte_len);
      if (wc.wc_flags & wc_flag::kWithImm) {
        out += " imm=";
        out.Number(wc.imm_data);
      }
      if (wc.wc_flags & wc_flag::kWithInv) {
        out += " inv=";
        out += o.invalidated;
      }
      out += " flags=";
      if (wc.wc_flags == 0) {
        out += '0';  // FormatWcFlags(0), without a string
      } else {
        out += FormatWcFlags(wc.wc_flags);
      }
      if (wc.opcode >= WcOpcode::kRecv) {
        out += " src_qp=";
        out += o.src_qp;
        out += " pkey_index=";
        out.Number(wc.pkey_index);
        out += " slid=";
        out.Number(wc.slid);
        out += " sl=";
        out.Number(wc.sl);
        out += " dlid_path_bits=";
        out.Number(wc.dlid_path_bits);
      }
      return;
    }
    case Outcome::Kind::kPolled:
      out += "polled ";
      if (o.count >= 0) {
        out.Number(static_cast<uint64_t>(o.count));
      } else {
        out += std::to_string(o.count);
      }
      return;
    case Outcome::Kind::kEvent:
      out += "event ";
      out += ToName(o.event);
      out += ' ';
      out += o.object;
      return;
    case Outcome::Kind::kAttrs:
      out += o.text;
      return;
    case Outcome::Kind::kMismatch:
      out += "mismatch at=";
      out.Number(o.offset);
      out += " got=";
      out += Hex8(o.got);
      out += " want=";
      out += Hex8(o.want);
      return;
  }
  out += "?";
}

void AppendBody(const Outcome& o, std::string* out) {
  LineAppender line(out);
  AppendBody(o, &line);
}

std::string Body(const Outcome& o) {
  std::string out;
  AppendBody(o, &out);
  return out;
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
  std::string out;
  AppendCanonicalLine(line, o, &out);
  return out;
}

void AppendCanonicalLine(int line, const Outcome& o, std::string* out) {
  LineAppender text(out);
  text += 'L';
  if (line >= 0) {
    text.Number(static_cast<uint64_t>(line));
  } else {
    text += std::to_string(line);
  }
  text += ' ';
  AppendBody(o, &text);
}

std::string CanonicalStep(const Step& s) {
  std::string out;
  for (const Outcome& o : s.outcomes) {
    AppendCanonicalLine(s.line, o, &out);
    out += '\n';
  }
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
