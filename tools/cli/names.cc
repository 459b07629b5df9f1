#include "tools/cli/names.h"

#include "tools/cli/escape.h"

namespace qptwin::cli {
namespace {

std::string Quoted(std::string_view token) {
  std::string s = "'";
  s += EscapeControl(token);
  s += "'";
  return s;
}

// The first '|'- or ','-separated part of a mask that does not name an attribute, if any.
std::optional<std::string_view> FirstUnknownAttr(std::string_view mask) {
  while (true) {
    size_t cut = mask.find_first_of("|,");
    std::string_view part = mask.substr(0, cut);
    if (!ParseAttrBit(part)) return part;
    if (cut == std::string_view::npos) return std::nullopt;
    mask.remove_prefix(cut + 1);
  }
}

}  // namespace

std::string UnknownQpTypeMessage(std::string_view token) {
  return "unknown QP type " + Quoted(token) + " (valid: " + QpTypeChoices() +
         ", or the numeric value)";
}

std::string UnknownQpStateMessage(std::string_view token) {
  return "unknown QP state " + Quoted(token) + " (valid: " + QpStateChoices() +
         ", or the numeric value)";
}

std::string BadAttrMaskMessage(std::string_view token) {
  std::string what = "bad attribute mask " + Quoted(token);
  if (token.empty()) {
    what = "empty attribute mask";
  } else if (token[0] >= '0' && token[0] <= '9') {
    what = ParseUnsigned(token) ? "attribute mask " + Quoted(token) + " does not fit in 32 bits"
                                : "bad number " + Quoted(token) + " as attribute mask";
  } else if (auto part = FirstUnknownAttr(token)) {
    what = part->empty() ? "empty attribute name in mask " + Quoted(token)
                         : "unknown attribute " + Quoted(*part) + " in mask " + Quoted(token);
  }
  return what + " (valid: a number like 0x1a1, or names joined by | or , from " + AttrChoices() +
         ")";
}

std::optional<QpType> ParseQpTypeArg(std::string_view token, std::string* error) {
  auto v = ParseQpType(token);
  if (!v) *error = UnknownQpTypeMessage(token);
  return v;
}

std::optional<QpState> ParseQpStateArg(std::string_view token, std::string* error) {
  auto v = ParseQpState(token);
  if (!v) *error = UnknownQpStateMessage(token);
  return v;
}

std::optional<AttrMask> ParseAttrMaskArg(std::string_view token, std::string* error) {
  auto v = ParseAttrMask(token);
  if (!v) *error = BadAttrMaskMessage(token);
  return v;
}

}  // namespace qptwin::cli
