#include "spec/scenario/line_parser.h"

#include <algorithm>
#include <cctype>

namespace qptwin::scenario {
namespace {

bool IsSpace(char c) {
  // c == ' ' || c == '\t' || c == '\r' as one compare and one bit test (words are mostly
  // letters, digits and punctuation, all above ' ').
  constexpr uint64_t kSpaces = (uint64_t{1} << ' ') | (uint64_t{1} << '\t') | (uint64_t{1} << '\r');
  const unsigned char u = static_cast<unsigned char>(c);
  return u <= ' ' && ((kSpaces >> u) & 1) != 0;
}

bool IsIdentifier(std::string_view s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.';
  });
}

std::string Join(const std::vector<std::string_view>& v) {
  std::string out;
  for (auto s : v) {
    if (!out.empty()) out += ", ";
    out += s;
  }
  return out;
}

bool Contains(const std::vector<std::string_view>& v, std::string_view s) {
  for (std::string_view x : v) {
    // Most keys differ in length or first letter: no memcmp call for them.
    if (x.size() == s.size() && (s.empty() || (x[0] == s[0] && x == s))) return true;
  }
  return false;
}

}  // namespace

std::vector<std::string_view> Words(std::string_view s) {
  std::vector<std::string_view> out;
  WordsInto(s, &out);
  return out;
}

void WordsInto(std::string_view s, std::vector<std::string_view>* out) {
  out->clear();
  const char* p = s.data();
  const char* const end = p + s.size();
  while (p != end) {
    while (p != end && IsSpace(*p)) ++p;
    const char* const start = p;
    while (p != end && !IsSpace(*p)) ++p;
    if (p != start) out->emplace_back(start, static_cast<size_t>(p - start));
  }
}

void LineParser::Fail(std::string message) {
  if (error_.empty()) error_ = std::move(message);
}

std::string LineParser::Usage() const { return "expected: " + std::string(spec_->usage); }

std::string_view LineParser::Value(std::string_view key) const {
  const std::string_view* v = Find(key);
  return v == nullptr ? std::string_view() : *v;
}

uint64_t LineParser::Lookup(const std::string_view* keys, size_t n,
                            std::string_view* values) const {
  uint64_t present = 0;
  for (const auto& [k, v] : kv_) {
    for (size_t i = 0; i < n; ++i) {
      if (k.size() == keys[i].size() && (k.empty() || (k[0] == keys[i][0] && k == keys[i]))) {
        present |= uint64_t{1} << i;
        values[i] = v;
        break;  // Bind lets no key in twice
      }
    }
  }
  return present;
}

void LineParser::Bind(const VerbSpec& spec, const std::vector<std::string_view>& words) {
  spec_ = &spec;
  for (size_t i = 1; i < words.size(); ++i) {
    std::string_view w = words[i];
    size_t eq = w.find('=');
    if (eq == w.npos) {
      if (!kv_.empty()) {
        return Fail("'" + std::string(w) + "' after key=value arguments; " + Usage());
      }
      positionals_.push_back(w);
      continue;
    }
    std::string_view key = w.substr(0, eq);
    if (key != "expect" && !Contains(spec.required, key) && !Contains(spec.optional, key)) {
      std::vector<std::string_view> keys = spec.required;
      keys.insert(keys.end(), spec.optional.begin(), spec.optional.end());
      keys.push_back("expect");
      return Fail("unknown key '" + std::string(key) + "' for " + std::string(spec.name) +
                  "; expected one of: " + Join(keys));
    }
    if (Has(key)) return Fail("key '" + std::string(key) + "' given twice");
    if (eq + 1 == w.size()) return Fail("key '" + std::string(key) + "' has no value");
    kv_.emplace_back(key, w.substr(eq + 1));
  }
  if (static_cast<int>(positionals_.size()) != spec.positionals) {
    return Fail("expected " + std::to_string(spec.positionals) + " word(s) after '" +
                std::string(spec.name) + "', got " + std::to_string(positionals_.size()) + "; " +
                Usage());
  }
  for (auto key : spec.required) {
    if (!Has(key)) return Fail("missing " + std::string(key) + "=; " + Usage());
  }
}

void LineParser::Declare(std::string_view name, ObjectKind kind) {
  if (!IsIdentifier(name)) {
    return Fail("bad name '" + std::string(name) +
                "': expected letters, digits, '_', '-', '.' starting with a letter");
  }
  // One walk down the tree: where the name is, or where it goes.
  auto it = names_->lower_bound(name);
  if (it != names_->end() && !NameLess::Less(name, it->first)) {
    return Fail("name '" + std::string(name) + "' already declared at line " +
                std::to_string(it->second.line) + " (names are unique per scenario)");
  }
  names_->emplace_hint(it, std::string(name), Declared{kind, line_});
}

void LineParser::Ref(std::string_view name, std::initializer_list<ObjectKind> kinds,
                     std::string* out) {
  auto wanted = [&kinds] {
    std::string want;
    for (ObjectKind k : kinds) want += (want.empty() ? "" : " or ") + std::string(ToName(k));
    return want;
  };
  auto it = names_->find(name);
  if (it == names_->end()) {
    return Fail("unknown name '" + std::string(name) + "': expected a " + wanted() +
                " declared before this line");
  }
  if (std::find(kinds.begin(), kinds.end(), it->second.kind) == kinds.end()) {
    return Fail("'" + std::string(name) + "' is a " + std::string(ToName(it->second.kind)) +
                " (line " + std::to_string(it->second.line) + "), expected a " + wanted());
  }
  out->assign(name.data(), name.size());
}

}  // namespace qptwin::scenario
