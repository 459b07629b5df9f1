// The verbs of the .qps format: their usage line, positional arguments and keys.
#pragma once

#include <string_view>
#include <vector>

#include "spec/scenario/command.h"

namespace qptwin::scenario {

struct VerbSpec {
  Verb verb;
  std::string_view name;
  int positionals;  // words after the verb that are not key=value (NAME counts)
  std::vector<std::string_view> required;
  std::vector<std::string_view> optional;  // `expect` is allowed everywhere, not listed
  std::string_view usage;
};

const VerbSpec& SpecOf(Verb v);
// "device, pd, mr, ..."
std::string VerbChoices();

}  // namespace qptwin::scenario
