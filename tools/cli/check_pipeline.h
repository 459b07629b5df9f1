// The streaming core of `qptwin check`: feed it input blocks of any size, it splits lines,
// judges each and writes one output line per request or malformed line through a large
// buffer.
//
// Contract:
//  1. Output order is input order; one line out per non-skipped line in.
//  2. Lines may be split across Feed() calls; Finish() judges a last line without '\n'.
//  3. No allocation per line once the buffers have grown (malformed lines excepted).
//  4. Not thread-safe; one pipeline per stream.
//  5. With a `diag` stream, each malformed line is also named there with its input line
//     number (blank and comment lines count): "qptwin: check: line 4: unknown QP type ...".
#pragma once

#include <cstdint>
#include <memory>
#include <ostream>
#include <string>
#include <string_view>

#include "tools/cli/check_judge.h"

namespace qptwin::cli {

class CheckPipeline {
 public:
  static constexpr size_t kOutBufferBytes = 1 << 20;

  CheckPipeline(const CheckJudge& judge, std::ostream& out, std::ostream* diag = nullptr);
  ~CheckPipeline();

  void Feed(std::string_view block);
  void Finish();  // also flushes
  void Flush();   // writes the buffered verdicts to the stream now

  uint64_t lines() const { return lines_; }    // requests + malformed lines
  uint64_t errors() const { return errors_; }  // malformed lines

 private:
  void Line(std::string_view line);
  void Carry(std::string_view part);

  const CheckJudge& judge_;
  std::ostream& out_;
  std::ostream* diag_;
  std::string carry_;  // an incomplete line from the previous block
  std::string error_;  // reused for malformed-line messages
  std::unique_ptr<char[]> buf_;  // kOutBufferBytes + room for one more line
  size_t used_ = 0;
  uint64_t lines_ = 0;
  uint64_t errors_ = 0;
  uint64_t input_line_ = 0;  // 1-based number of the line being judged
};

}  // namespace qptwin::cli
