// qptwin check: judge "TYPE FROM TO MASK" lines from stdin, one verdict line each.
//   qptwin check                      < lines
//   qptwin check --sweep RC INIT RTR  (prints the 2^21 lines of every standard mask)
//   qptwin check --bench N            (judges N generated lines in memory, reports lines/s)
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <iostream>
#include <memory>
#include <ostream>
#include <streambuf>

#include "spec/qp_state_table.h"
#include "tools/cli/check_judge.h"
#include "tools/cli/check_pipeline.h"
#include "tools/cli/cli_io.h"
#include "tools/cli/commands.h"
#include "tools/cli/flags.h"
#include "tools/cli/names.h"

namespace qptwin::cli {
namespace {

constexpr char kUsage[] =
    "usage: qptwin check [--sweep TYPE FROM TO | --bench N] < lines\n"
    "  reads 'TYPE FROM TO MASK' lines (e.g. 'RC INIT RTR 0x1a1' or 'rc init rtr STATE|AV'),\n"
    "  prints 'legal', 'illegal <reason>' or 'error <what is wrong>' per line;\n"
    "  blank and '#' lines are skipped. A malformed line is also named on stderr\n"
    "  ('qptwin: check: line N: ...'). Exit 2 if any line was malformed, else 0.\n"
    "  --sweep TYPE FROM TO  print the 2^21 input lines of every standard mask\n"
    "  --bench N             judge N generated lines in memory and report lines/s\n";

const std::vector<FlagSpec> kFlags = {{"--sweep", false}, {"--bench"}};

constexpr size_t kReadBlock = 1 << 20;

// Swallows output: the benchmark measures parsing and judging, not the terminal.
class DiscardBuf : public std::streambuf {
 protected:
  std::streamsize xsputn(const char*, std::streamsize n) override { return n; }
  int_type overflow(int_type c) override { return traits_type::not_eof(c); }
};

// Reads `in` to the end; a read error (stdin a directory, EIO) is one line and exit 2.
int Stream(std::istream& in, std::ostream& out, std::ostream& err, bool interactive) {
  const CheckJudge judge;
  CheckPipeline pipeline(judge, out, &err);
  if (interactive) {  // a person typing: answer each line at once
    for (std::string line; std::getline(in, line);) {
      pipeline.Feed(line + "\n");
      pipeline.Flush();
      out.flush();
    }
  } else {
    std::unique_ptr<char[]> block(new char[kReadBlock]);
    while (in) {
      in.read(block.get(), kReadBlock);
      const std::streamsize n = in.gcount();
      if (n <= 0) break;
      pipeline.Feed(std::string_view(block.get(), static_cast<size_t>(n)));
    }
  }
  pipeline.Finish();
  if (const int e = StreamErrno(in)) {
    return BadInput(err, "check: cannot read standard input: " + ErrnoText(e));
  }
  return pipeline.errors() ? kExitBadInput : kExitOk;
}

int Sweep(const Args& names, std::ostream& out, std::ostream& err) {
  std::string error;
  auto type = ParseQpTypeArg(names[0], &error);
  auto from = type ? ParseQpStateArg(names[1], &error) : std::nullopt;
  auto to = from ? ParseQpStateArg(names[2], &error) : std::nullopt;
  if (!to) return BadInput(err, "check: " + error);
  const std::string prefix = std::string(ToName(*type)) + " " + std::string(ToName(*from)) +
                             " " + std::string(ToName(*to)) + " ";
  std::string buf;
  buf.reserve(kReadBlock + 64);
  char hex[16];
  for (AttrMask m = 0; m <= attr::kStandardBits; ++m) {
    buf += prefix;
    buf.append(hex, std::snprintf(hex, sizeof hex, "0x%x\n", m));
    if (buf.size() >= kReadBlock) {
      out.write(buf.data(), static_cast<std::streamsize>(buf.size()));
      buf.clear();
      if (!out) break;  // a write error: stop, and say so below
    }
  }
  if (out) out.write(buf.data(), static_cast<std::streamsize>(buf.size()));
  out.flush();
  if (const int e = StreamErrno(out)) {
    return BadInput(err, "check: cannot write standard output: " + ErrnoText(e));
  }
  return kExitOk;
}

// A deterministic mix over all table types, all 49 state pairs and standard masks, written
// as a user would (names for type and states, hex masks).
std::string BenchInput(size_t lines) {
  std::string text;
  uint64_t x = 0x9e3779b97f4a7c15ull;
  char hex[16];
  for (size_t i = 0; i < lines; ++i) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;  // xorshift64
    const auto& types = TableQpTypes();
    const auto& states = AllQpStates();
    text += ToName(types[x % types.size()]);
    text += ' ';
    text += ToName(states[(x >> 8) % states.size()]);
    text += ' ';
    text += ToName(states[(x >> 16) % states.size()]);
    text += ' ';
    text.append(hex, std::snprintf(hex, sizeof hex, "0x%x\n",
                                   static_cast<AttrMask>(x >> 24) & attr::kStandardBits));
  }
  return text;
}

int Bench(const std::string& count, std::ostream& out, std::ostream& err) {
  auto n = ParseUnsigned(count);
  if (!n || *n == 0 || *n > (1ull << 40)) {
    return BadInput(err, "check: bad --bench count '" + count +
                             "' (valid: a line count from 1 to 2^40, e.g. 10000000)");
  }
  constexpr size_t kChunkLines = 1 << 20;
  const std::string chunk = BenchInput(std::min<uint64_t>(*n, kChunkLines));
  const CheckJudge judge;
  DiscardBuf discard;
  std::ostream sink(&discard);
  CheckPipeline pipeline(judge, sink);
  const auto start = std::chrono::steady_clock::now();
  for (uint64_t done = 0; done < *n; done += kChunkLines) {
    if (*n - done >= kChunkLines) {
      pipeline.Feed(chunk);
    } else {  // the first (*n - done) lines of the chunk
      size_t end = 0;
      for (uint64_t k = 0; k < *n - done; ++k) end = chunk.find('\n', end) + 1;
      pipeline.Feed(std::string_view(chunk).substr(0, end));
    }
  }
  pipeline.Finish();
  const double s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const double rate = static_cast<double>(pipeline.lines()) / s;
  char line[256];
  std::snprintf(line, sizeof line,
                "check --bench: %llu lines in %.3f s = %.2f M lines/s = %.0f M lines/min "
                "(parse + judge + format, one core, output discarded)\n",
                static_cast<unsigned long long>(pipeline.lines()), s, rate / 1e6,
                rate * 60 / 1e6);
  out << line;
  return pipeline.errors() ? kExitBadInput : kExitOk;
}

}  // namespace

int RunCheck(const Args& args, std::istream& in, std::ostream& out, std::ostream& err) {
  std::string error;
  auto flags = ParseFlags(args, kFlags, &error, /*max_positional=*/3);
  if (!flags) return BadInput(err, "check: " + error);
  if (flags->help) {
    out << kUsage;
    return kExitOk;
  }
  const Args& names = flags->positional();
  if (flags->Has("--sweep") && flags->Has("--bench")) {
    return BadInput(err, "check: --sweep and --bench exclude each other");
  }
  if (flags->Has("--sweep")) {
    if (names.size() != 3) {
      return BadInput(err, "check: --sweep needs TYPE FROM TO (valid: e.g. --sweep RC INIT RTR)");
    }
    return Sweep(names, out, err);
  }
  if (!names.empty()) {
    return BadInput(err, "check: unexpected argument '" + names[0] +
                             "' (valid: --sweep TYPE FROM TO, --bench N, --help; input on stdin)");
  }
  if (flags->Has("--bench")) return Bench(flags->Get("--bench"), out, err);
  return Stream(in, out, err, &in == &std::cin && isatty(STDIN_FILENO));
}

}  // namespace qptwin::cli
