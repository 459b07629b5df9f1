// The argument checker behind parser.cc: binds one line's words to a verb's spec and
// converts values, keeping the first problem as the line's error message.
//
// Contract: methods never throw; after the first Fail() later calls change nothing.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <map>
#include <memory_resource>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "spec/scenario/command.h"
#include "spec/scenario/parse_values.h"
#include "spec/scenario/verb_table.h"

namespace qptwin::scenario {

struct Declared {
  ObjectKind kind;
  int line;
};
// Its nodes from a memory resource (the parser's arena: names are never erased).
using NameTable = std::pmr::map<std::string, Declared, NameLess>;

// Whitespace-separated words of `s`.
std::vector<std::string_view> Words(std::string_view s);
// The same into *out (replaced; its capacity is kept for the next line).
void WordsInto(std::string_view s, std::vector<std::string_view>* out);

class LineParser {
 public:
  LineParser(int line, NameTable* names) : line_(line), names_(names) {}
  // As if constructed anew for `line` (the vectors keep their capacity).
  void Reset(int line) {
    line_ = line;
    spec_ = nullptr;
    error_.clear();
    positionals_.clear();
    kv_.clear();
  }

  bool failed() const { return !error_.empty(); }
  const std::string& error() const { return error_; }
  void Fail(std::string message);

  // Splits words[1..] into positionals and key=value pairs and checks them against `spec`:
  // word count, unknown and duplicate keys, empty values, required keys.
  void Bind(const VerbSpec& spec, const std::vector<std::string_view>& words);

  std::string Usage() const;
  std::string_view Positional(size_t i) const { return positionals_.at(i); }
  bool Has(std::string_view key) const { return Find(key) != nullptr; }
  std::string_view Value(std::string_view key) const;
  // Has/Value for `n` keys at once (one pass over the line's pairs, not a search per key):
  // bit i of the result is Has(keys[i]), and then values[i] is Value(keys[i]). n <= 64.
  uint64_t Lookup(const std::string_view* keys, size_t n, std::string_view* values) const;

  // key=N into *out when given (0..max).
  template <typename T>
  void Number(std::string_view key, uint64_t max, T* out) {
    if (Has(key)) NumberText(key, Value(key), max, out);
  }
  template <typename T>
  void NumberText(std::string_view what, std::string_view text, uint64_t max, T* out) {
    if (auto v = ParseNumberAtMost(text, max)) {
      *out = static_cast<T>(*v);
    } else {
      Fail("bad " + std::string(what) + " '" + std::string(text) + "': expected a number 0.." +
           std::to_string(max));
    }
  }

  // Declares a new object name on this line.
  void Declare(std::string_view name, ObjectKind kind);
  // `name` must be declared earlier with one of `kinds`; copies it to *out.
  void Ref(std::string_view name, std::initializer_list<ObjectKind> kinds, std::string* out);
  void RefKey(std::string_view key, std::initializer_list<ObjectKind> kinds, std::string* out) {
    if (Has(key)) Ref(Value(key), kinds, out);
  }

 private:
  int line_;
  NameTable* names_;
  const VerbSpec* spec_ = nullptr;
  std::string error_;
  // The value of `key`, or null. A line has a handful of keys: a linear search beats a map.
  const std::string_view* Find(std::string_view key) const {
    for (const auto& [k, v] : kv_) {
      // Most keys differ in length or first letter: no memcmp call for them.
      if (k.size() == key.size() && (key.empty() || (k[0] == key[0] && k == key))) return &v;
    }
    return nullptr;
  }

  std::vector<std::string_view> positionals_;
  std::vector<std::pair<std::string_view, std::string_view>> kv_;  // in line order
};

}  // namespace qptwin::scenario
