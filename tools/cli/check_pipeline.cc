#include "tools/cli/check_pipeline.h"

#include <cstring>

#include "spec/qp_state_table.h"
#include "tools/cli/check_line.h"

namespace qptwin::cli {
namespace {

// Room one output line may need: a verdict or an error message (bounded by the input line,
// which is at most kMaxEcho characters when quoted back, plus the choices text).
constexpr size_t kMaxEcho = 1 << 12;
constexpr size_t kLineRoom = CheckJudge::kMaxVerdictChars + 2 * kMaxEcho + 4096;

}  // namespace

CheckPipeline::CheckPipeline(const CheckJudge& judge, std::ostream& out, std::ostream* diag)
    : judge_(judge), out_(out), diag_(diag), buf_(new char[kOutBufferBytes + kLineRoom]) {}

CheckPipeline::~CheckPipeline() { Flush(); }

void CheckPipeline::Flush() {
  if (used_ == 0) return;
  out_.write(buf_.get(), static_cast<std::streamsize>(used_));
  used_ = 0;
}

void CheckPipeline::Line(std::string_view line) {
  ++input_line_;
  CheckRequest r;
  LineKind kind = LineKind::kError;
  if (line.size() > kMaxEcho) {
    error_ = "line longer than " + std::to_string(kMaxEcho) +
             " characters (valid: 'TYPE FROM TO MASK', e.g. 'RC INIT RTR 0x1a1')";
  } else {
    kind = ParseCheckLine(line, &r, &error_);
  }
  switch (kind) {
    case LineKind::kSkip:
      return;
    case LineKind::kRequest: {
      const QpState next = NextState(r.cur, r.requested, r.mask);
      char* end = judge_.AppendVerdict(r.type, r.cur, next, r.mask, buf_.get() + used_);
      *end++ = '\n';
      used_ = end - buf_.get();
      break;
    }
    case LineKind::kError: {
      ++errors_;
      if (diag_ != nullptr) {
        *diag_ << "qptwin: check: line " << input_line_ << ": " << error_ << "\n";
      }
      std::memcpy(buf_.get() + used_, "error ", 6);
      used_ += 6;
      const size_t n = std::min(error_.size(), kLineRoom - 8);
      std::memcpy(buf_.get() + used_, error_.data(), n);
      used_ += n;
      buf_[used_++] = '\n';
      break;
    }
  }
  ++lines_;
  if (used_ >= kOutBufferBytes) Flush();
}

// Keeps at most kMaxEcho + 1 characters of a partial line: enough to know it is too long.
void CheckPipeline::Carry(std::string_view part) {
  const size_t room = kMaxEcho + 1 - std::min(carry_.size(), kMaxEcho + 1);
  carry_.append(part.substr(0, room));
}

void CheckPipeline::Feed(std::string_view block) {
  if (!carry_.empty()) {
    const size_t nl = block.find('\n');
    Carry(block.substr(0, nl));
    if (nl == std::string_view::npos) return;
    Line(carry_);
    carry_.clear();
    block.remove_prefix(nl + 1);
  }
  const char* p = block.data();
  const char* const end = p + block.size();
  while (p < end) {
    const char* nl = static_cast<const char*>(std::memchr(p, '\n', end - p));
    if (nl == nullptr) {
      Carry(std::string_view(p, end - p));  // non-empty: p < end
      return;
    }
    Line(std::string_view(p, nl - p));
    p = nl + 1;
  }
}

void CheckPipeline::Finish() {
  if (!carry_.empty()) Line(carry_);
  carry_.clear();
  Flush();
  out_.flush();
}

}  // namespace qptwin::cli
