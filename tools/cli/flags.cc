#include "tools/cli/flags.h"

#include "tools/cli/commands.h"
#include "tools/cli/escape.h"

namespace qptwin::cli {
namespace {

std::string ValidFlags(const std::vector<FlagSpec>& specs) {
  std::string out = "valid: ";
  for (const FlagSpec& s : specs) {
    out += s.name;
    out += s.takes_value ? " VALUE, " : ", ";
  }
  return out + "--help";
}

const FlagSpec* FindSpec(const std::vector<FlagSpec>& specs, std::string_view name) {
  for (const FlagSpec& s : specs) {
    if (s.name == name) return &s;
  }
  return nullptr;
}

}  // namespace

std::string Flags::Get(std::string_view name, std::string fallback) const {
  auto it = values_.find(std::string(name));
  return it == values_.end() ? fallback : it->second;
}

std::optional<Flags> ParseFlags(const std::vector<std::string>& args,
                                const std::vector<FlagSpec>& specs, std::string* error,
                                size_t max_positional) {
  Flags flags;
  for (size_t i = 0; i < args.size(); ++i) {
    std::string_view arg = args[i];
    if (arg == "--help" || arg == "-h") {
      flags.help = true;
      continue;
    }
    std::string_view name = arg;
    std::optional<std::string> value;
    if (size_t eq = arg.find('='); arg.rfind("--", 0) == 0 && eq != std::string_view::npos) {
      name = arg.substr(0, eq);
      value = std::string(arg.substr(eq + 1));
    }
    const bool is_flag = arg.size() > 1 && arg[0] == '-';
    if (!is_flag && flags.positional_.size() < max_positional) {
      flags.positional_.emplace_back(arg);
      continue;
    }
    const FlagSpec* spec = is_flag ? FindSpec(specs, name) : nullptr;
    if (spec == nullptr) {
      *error = (is_flag ? "unknown flag '" : "unexpected argument '") +
               std::string(arg) + "' (" + ValidFlags(specs) + ")";
      return std::nullopt;
    }
    if (spec->takes_value && !value) {
      if (i + 1 == args.size()) {
        *error = "flag " + std::string(name) + " needs a value";
        return std::nullopt;
      }
      value = args[++i];
    } else if (!spec->takes_value && value) {
      *error = "flag " + std::string(name) + " takes no value";
      return std::nullopt;
    }
    const std::string key(spec->alias_of.empty() ? spec->name : spec->alias_of);
    if (flags.values_.count(key)) {
      *error = "flag " + key + " given twice";
      return std::nullopt;
    }
    flags.values_[key] = value.value_or("");
  }
  return flags;
}

int BadInput(std::ostream& err, std::string_view message) {
  err << "qptwin: " << EscapeControl(message) << "\n";
  return kExitBadInput;
}

}  // namespace qptwin::cli
