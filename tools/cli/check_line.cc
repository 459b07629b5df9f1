#include "tools/cli/check_line.h"

#include <array>

#include "tools/cli/lexicon.h"
#include "tools/cli/names.h"

namespace qptwin::cli {
namespace {

constexpr int kFields = 4;

inline bool IsBlank(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; }

std::optional<QpType> FastType(std::string_view s) {
  if (auto v = Lexicon::QpTypes().Find(s)) return static_cast<QpType>(*v);
  return ParseQpType(s);
}

std::optional<QpState> FastState(std::string_view s) {
  if (auto v = Lexicon::QpStates().Find(s)) return static_cast<QpState>(*v);
  return ParseQpState(s);
}

// Hex or decimal without allocation; nullopt if not a number or above 32 bits.
std::optional<AttrMask> FastNumber(std::string_view s) {
  uint64_t v = 0;
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
    if (s.size() > 10) return std::nullopt;
    for (size_t i = 2; i < s.size(); ++i) {
      const char c = s[i];
      int d;
      if (c >= '0' && c <= '9') {
        d = c - '0';
      } else if ((c | 0x20) >= 'a' && (c | 0x20) <= 'f') {
        d = (c | 0x20) - 'a' + 10;
      } else {
        return std::nullopt;
      }
      v = (v << 4) | d;
    }
    return static_cast<AttrMask>(v);
  }
  if (s.empty() || s.size() > 10) return std::nullopt;
  for (char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + (c - '0');
  }
  if (v > 0xffffffffu) return std::nullopt;
  return static_cast<AttrMask>(v);
}

std::optional<AttrMask> FastMask(std::string_view s) {
  if (!s.empty() && s[0] >= '0' && s[0] <= '9') {
    if (auto v = FastNumber(s)) return v;
    return ParseAttrMask(s);
  }
  AttrMask mask = 0;
  for (std::string_view rest = s;;) {
    const size_t cut = rest.find_first_of("|,");
    auto bit = Lexicon::AttrBits().Find(rest.substr(0, cut));
    if (!bit) return ParseAttrMask(s);  // the spec decides unusual spellings
    mask |= *bit;
    if (cut == std::string_view::npos) return mask;
    rest.remove_prefix(cut + 1);
  }
}

}  // namespace

LineKind ParseCheckLine(std::string_view line, CheckRequest* request, std::string* error) {
  std::array<std::string_view, kFields> field;
  int n = 0;
  size_t i = 0;
  while (true) {
    while (i < line.size() && IsBlank(line[i])) ++i;
    if (i == line.size()) break;
    if (n == 0 && line[i] == '#') return LineKind::kSkip;
    const size_t start = i;
    while (i < line.size() && !IsBlank(line[i])) ++i;
    if (n < kFields) field[n] = line.substr(start, i - start);
    ++n;
  }
  if (n == 0) return LineKind::kSkip;
  if (n != kFields) {
    *error = "expected 4 fields 'TYPE FROM TO MASK' (e.g. 'RC INIT RTR 0x1a1'), got " +
             std::to_string(n);
    return LineKind::kError;
  }
  auto type = FastType(field[0]);
  if (!type) {
    *error = UnknownQpTypeMessage(field[0]);
    return LineKind::kError;
  }
  auto cur = FastState(field[1]);
  if (!cur) {
    *error = UnknownQpStateMessage(field[1]);
    return LineKind::kError;
  }
  auto requested = FastState(field[2]);
  if (!requested) {
    *error = UnknownQpStateMessage(field[2]);
    return LineKind::kError;
  }
  auto mask = FastMask(field[3]);
  if (!mask) {
    *error = BadAttrMaskMessage(field[3]);
    return LineKind::kError;
  }
  *request = {*type, *cur, *requested, *mask};
  return LineKind::kRequest;
}

}  // namespace qptwin::cli
