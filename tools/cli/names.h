// Command-line parsing of the verbs vocabulary, with the error texts every subcommand shares:
// each message names the offending token and the valid choices, and never contains a newline
// (`qptwin check` prints it after "error ").
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "spec/vocabulary.h"

namespace qptwin::cli {

std::string UnknownQpTypeMessage(std::string_view token);
std::string UnknownQpStateMessage(std::string_view token);
std::string BadAttrMaskMessage(std::string_view token);

// The spec parsers (any case, optional IBV_ prefixes, numeric values), with the message above
// stored in *error when the token is not valid.
std::optional<QpType> ParseQpTypeArg(std::string_view token, std::string* error);
std::optional<QpState> ParseQpStateArg(std::string_view token, std::string* error);
std::optional<AttrMask> ParseAttrMaskArg(std::string_view token, std::string* error);

}  // namespace qptwin::cli
