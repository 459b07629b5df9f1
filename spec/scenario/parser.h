// .qps text -> Scenario (FORMAT.md). Stops at the first problem and says which line and
// what was expected there.
//
// Contract:
//  1. Never throws, never crashes on any input.
//  2. On success every name a command uses was declared earlier with the right kind
//     (command.h invariants); names are unique per scenario (destroy does not free a name).
//  3. On failure `error.line` is the 1-based line and `error.message` names what was
//     expected ("mr NAME pd=PD len=N ...", "a QP declared before this line", ...).
#pragma once

#include <cstddef>
#include <istream>
#include <memory_resource>
#include <string>
#include <string_view>

#include "spec/scenario/command.h"
#include "spec/scenario/line_parser.h"

namespace qptwin::scenario {

struct ParseError {
  int line = 0;
  std::string message;
  std::string ToString() const;  // "line 7: ..."
};

[[nodiscard]] bool ParseScenario(std::string_view text, Scenario* out, ParseError* error);

struct ParseOptions {
  // false: Command::text stays empty, for a caller that never narrates (the differential
  // fuzzer runs with RunOptions::narrate false): one allocation less per line.
  bool keep_text = true;
};
[[nodiscard]] bool ParseScenario(std::string_view text, Scenario* out, ParseError* error,
                                 const ParseOptions& options);

// Limits of one scenario, so that endless input ends with an error and not bad_alloc.
inline constexpr size_t kMaxLineBytes = 64 * 1024;
inline constexpr size_t kMaxObjects = 1 << 18;  // 100,000 QPs or MRs fit (issue 15)

// The parser one line at a time: what a scenario costs while it streams is its names, not
// its lines.
class ScenarioParser {
 public:
  ScenarioParser();
  ~ScenarioParser();
  ScenarioParser(const ScenarioParser&) = delete;  // line_parser_ points at names_
  ScenarioParser& operator=(const ScenarioParser&) = delete;
  // Parses the next line (without its '\n'). *got: it held a command (else blank/comment).
  [[nodiscard]] bool Line(std::string_view raw, Command* out, bool* got, ParseError* error);
  // The same into *fresh, a default-constructed Command, without a move: on failure or a
  // line without a command (*got false) it is left partly filled.
  [[nodiscard]] bool LineInto(std::string_view raw, Command* fresh, bool* got,
                              ParseError* error);
  // device_lines and first_profile of the lines so far (commands stay empty).
  const Scenario& header() const { return header_; }
  int lines() const { return line_; }
  void set_keep_text(bool keep) { keep_text_ = keep; }

 private:
  // The names' map nodes, freed all at once with the parser (a scenario declares some 40
  // names, and a fuzzer parses thousands of scenarios a second).
  std::pmr::monotonic_buffer_resource arena_{8 * 1024};
  NameTable names_{&arena_};
  // Scratch reused from line to line (a line's words, its argument checker).
  std::vector<std::string_view> words_;
  LineParser line_parser_{0, &names_};
  std::string current_device_;
  Scenario header_;
  int line_ = 0;
  bool keep_text_ = true;
};

// Parses all of `text` keeping no command: its device_lines and first_profile (*header), or
// the first syntax error, before anything runs.
[[nodiscard]] bool ScanHeader(std::string_view text, Scenario* header, ParseError* error);

// Commands read one at a time from a stream (`qptwin run -`): memory stays bounded by the
// scenario's objects whatever the number of lines. A line longer than kMaxLineBytes or more
// than kMaxObjects names is an error (ParseError with its line).
class ScenarioStream {
 public:
  explicit ScenarioStream(std::istream* in);
  explicit ScenarioStream(std::string_view text);  // `text` must outlive the stream
  // The next command; false at the end or on an error (then failed() and *error say which).
  [[nodiscard]] bool Next(Command* out, ParseError* error);
  bool failed() const { return failed_; }
  const Scenario& header() const { return parser_.header(); }

 private:
  bool ReadLine(std::string* raw, bool* newline, bool* too_long);

  std::istream* in_ = nullptr;
  std::string_view text_;
  ScenarioParser parser_;
  bool failed_ = false;
};

}  // namespace qptwin::scenario
