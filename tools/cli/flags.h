// The one flag parser of the qptwin subcommands: "--name value", "--name=value", boolean
// "--name", short "-s value", positional arguments ("-" is one: stdin), and "--help"/"-h".
// Unknown flags and surplus arguments are errors whose message lists the valid flags.
//
// Contract:
//  1. ParseFlags never throws; on a bad list it returns nullopt and sets *error to one line.
//  2. A flag may be given once; an alias (FlagSpec::alias_of) counts as its canonical flag.
//  3. A flag that takes a value always takes the next argument, even one starting with '-'
//     (so `--seconds -1` reaches the value check, which names the valid range).
//  4. --help anywhere sets Flags::help; the caller prints its usage to `out` and exits 0.
#pragma once

#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

namespace qptwin::cli {

struct FlagSpec {
  std::string_view name;  // "--type", "-o"
  bool takes_value = true;
  std::string_view alias_of = {};  // e.g. --mask is an alias of --attrs
};

class Flags {
 public:
  bool help = false;

  bool Has(std::string_view name) const { return values_.count(std::string(name)) != 0; }
  // The value of a flag given with a value; `fallback` when absent.
  std::string Get(std::string_view name, std::string fallback = {}) const;
  // The arguments that are not flags, in order (FILE..., a test name).
  const std::vector<std::string>& positional() const { return positional_; }

 private:
  friend std::optional<Flags> ParseFlags(const std::vector<std::string>&,
                                         const std::vector<FlagSpec>&, std::string*, size_t);
  std::map<std::string, std::string> values_;  // keyed by the canonical name
  std::vector<std::string> positional_;
};

// Accepts at most `max_positional` non-flag arguments (0: none).
std::optional<Flags> ParseFlags(const std::vector<std::string>& args,
                                const std::vector<FlagSpec>& specs, std::string* error,
                                size_t max_positional = 0);

inline constexpr size_t kAnyNumber = static_cast<size_t>(-1);

// Writes "qptwin: <message>\n" to err, control bytes escaped (escape.h), and returns the
// bad-input exit code (2).
int BadInput(std::ostream& err, std::string_view message);

}  // namespace qptwin::cli
