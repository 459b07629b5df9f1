// A tiny flag parser shared by the subcommands: "--name value", "--name=value", boolean
// "--name", and "--help"/"-h". Unknown flags and stray arguments are errors whose message
// lists the valid flags.
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

 private:
  friend std::optional<Flags> ParseFlags(const std::vector<std::string>&,
                                         const std::vector<FlagSpec>&, std::string*);
  std::map<std::string, std::string> values_;  // keyed by the canonical name
};

// nullopt with *error set (one line, naming the valid flags) on a bad argument list.
std::optional<Flags> ParseFlags(const std::vector<std::string>& args,
                                const std::vector<FlagSpec>& specs, std::string* error);

// Writes "qptwin: <message>\n" to err and returns the bad-input exit code (2).
int BadInput(std::ostream& err, std::string_view message);

}  // namespace qptwin::cli
