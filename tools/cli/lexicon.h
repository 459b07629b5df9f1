// A small, allocation-free, case-insensitive name -> value lookup for the hot path of
// `qptwin check`: an open-addressed hash table of upper-case names, built once.
//
// Contract:
//  1. Find() accepts a name in any case, with or without one of the given prefixes, and
//     returns its value; anything else (numbers, unknown names, names longer than
//     kMaxNameChars) returns nullopt so the caller can fall back to the spec parsers.
//  2. Find() never allocates; a Lexicon is immutable after construction (thread-safe reads).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

namespace qptwin::cli {

class Lexicon {
 public:
  static constexpr size_t kMaxNameChars = 31;

  Lexicon(const std::vector<std::pair<std::string_view, uint32_t>>& names,
          const std::vector<std::string_view>& prefixes);

  std::optional<uint32_t> Find(std::string_view token) const;

  // The lexicons `qptwin check` uses, built from the spec's name tables.
  static const Lexicon& QpTypes();
  static const Lexicon& QpStates();
  static const Lexicon& AttrBits();

 private:
  static constexpr size_t kSlots = 128;  // power of two, > 4x the largest name table
  struct Slot {
    std::array<char, kMaxNameChars + 1> name{};
    uint8_t length = 0;  // 0: empty slot
    uint32_t value = 0;
  };

  static uint32_t Hash(const char* upper, size_t n);
  std::optional<uint32_t> FindUpper(const char* upper, size_t n) const;

  std::array<Slot, kSlots> slots_{};
  std::vector<std::array<char, kMaxNameChars + 1>> prefixes_;  // upper case
  std::vector<uint8_t> prefix_lengths_;
};

}  // namespace qptwin::cli
