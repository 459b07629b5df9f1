#include "tools/cli/lexicon.h"

#include <cstring>

#include "spec/qp_state_table.h"
#include "spec/vocabulary.h"

namespace qptwin::cli {
namespace {

inline char Upper(char c) { return (c >= 'a' && c <= 'z') ? static_cast<char>(c - 32) : c; }

}  // namespace

Lexicon::Lexicon(const std::vector<std::pair<std::string_view, uint32_t>>& names,
                 const std::vector<std::string_view>& prefixes) {
  for (std::string_view p : prefixes) {
    std::array<char, kMaxNameChars + 1> up{};
    const size_t n = std::min(p.size(), kMaxNameChars);
    for (size_t i = 0; i < n; ++i) up[i] = Upper(p[i]);
    prefixes_.push_back(up);
    prefix_lengths_.push_back(static_cast<uint8_t>(n));
  }
  for (const auto& [name, value] : names) {
    if (name.empty() || name.size() > kMaxNameChars) continue;
    char up[kMaxNameChars + 1] = {};
    for (size_t i = 0; i < name.size(); ++i) up[i] = Upper(name[i]);
    if (FindUpper(up, name.size())) continue;  // first spelling wins
    for (uint32_t h = Hash(up, name.size());; ++h) {
      Slot& s = slots_[h & (kSlots - 1)];
      if (s.length != 0) continue;
      std::memcpy(s.name.data(), up, name.size());
      s.length = static_cast<uint8_t>(name.size());
      s.value = value;
      break;
    }
  }
}

uint32_t Lexicon::Hash(const char* upper, size_t n) {
  uint32_t h = 2166136261u;  // FNV-1a
  for (size_t i = 0; i < n; ++i) h = (h ^ static_cast<uint8_t>(upper[i])) * 16777619u;
  return h ^ (h >> 15);
}

std::optional<uint32_t> Lexicon::FindUpper(const char* upper, size_t n) const {
  for (uint32_t h = Hash(upper, n);; ++h) {
    const Slot& s = slots_[h & (kSlots - 1)];
    if (s.length == 0) return std::nullopt;
    if (s.length == n && std::memcmp(s.name.data(), upper, n) == 0) return s.value;
  }
}

std::optional<uint32_t> Lexicon::Find(std::string_view token) const {
  if (token.empty() || token.size() > kMaxNameChars) return std::nullopt;
  char up[kMaxNameChars + 1];
  for (size_t i = 0; i < token.size(); ++i) up[i] = Upper(token[i]);
  if (auto v = FindUpper(up, token.size())) return v;
  for (size_t p = 0; p < prefixes_.size(); ++p) {
    const size_t k = prefix_lengths_[p];
    if (token.size() > k && std::memcmp(up, prefixes_[p].data(), k) == 0) {
      return FindUpper(up + k, token.size() - k);
    }
  }
  return std::nullopt;
}

const Lexicon& Lexicon::QpTypes() {
  static const Lexicon lexicon = [] {
    std::vector<std::pair<std::string_view, uint32_t>> names;
    for (QpType t : TableQpTypes()) names.emplace_back(ToName(t), static_cast<uint32_t>(t));
    names.emplace_back("XRC_INI", static_cast<uint32_t>(QpType::kXrcSend));  // kernel names
    names.emplace_back("XRC_TGT", static_cast<uint32_t>(QpType::kXrcRecv));
    return Lexicon(names, {"IBV_QPT_", "IB_QPT_"});
  }();
  return lexicon;
}

const Lexicon& Lexicon::QpStates() {
  static const Lexicon lexicon = [] {
    std::vector<std::pair<std::string_view, uint32_t>> names;
    for (QpState s : AllQpStates()) names.emplace_back(ToName(s), static_cast<uint32_t>(s));
    names.emplace_back("ERROR", static_cast<uint32_t>(QpState::kErr));
    return Lexicon(names, {"IBV_QPS_"});
  }();
  return lexicon;
}

const Lexicon& Lexicon::AttrBits() {
  static const Lexicon lexicon = [] {
    std::vector<std::pair<std::string_view, uint32_t>> names;
    for (int b = 0; b < 32; ++b) {
      std::string_view name = AttrBitName(1u << b);
      if (name != "?") names.emplace_back(name, 1u << b);
    }
    return Lexicon(names, {"IBV_QP_"});
  }();
  return lexicon;
}

}  // namespace qptwin::cli
