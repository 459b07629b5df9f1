// Command sequences from bytes: the deterministic decoder behind the libFuzzer target
// (tools/fuzz/sequence_fuzzer.cc) and the seeded generator behind `qptwin fuzz`.
//
// Contract:
//  1. Every byte string decodes: bytes past the end read as 0, and every byte value maps to
//     a valid SeqCommand. The same bytes give the same commands on every platform.
//  2. One command takes exactly kBytesPerCommand bytes, so a mutation of one byte changes
//     one field of one command (libFuzzer's mutations stay local).
//  3. DecodeCommand holds the one weight table of every sequence generator (the RapidCheck
//     property decodes random bytes with it too): mostly modifies and posts, some bring-ups,
//     a few settles; now and then a bit added to or dropped from the minimum mask.
//  4. RandomSequence(seed, ...) is a pure function of its arguments (std::mt19937_64, whose
//     output the C++ standard fixes), so a seed replays its sequence exactly.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "spec/reference/sequence.h"

namespace qptwin::reference {

inline constexpr size_t kBytesPerCommand = 8;

// Reads bytes in order; 0 after the end.
class ByteSource {
 public:
  ByteSource(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  uint8_t Next() { return pos_ < size_ ? data_[pos_++] : (++pos_, 0); }
  size_t Remaining() const { return pos_ < size_ ? size_ - pos_ : 0; }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
};

// Takes kBytesPerCommand bytes from `bytes`. All-zero bytes decode to "modify a to INIT
// with the minimum mask".
SeqCommand DecodeCommand(ByteSource& bytes);

// Decodes commands until the bytes run out (a partial last command is padded with zeros),
// at most `max_len` of them. Empty input gives an empty sequence.
std::vector<SeqCommand> DecodeSequence(ByteSource& bytes, size_t max_len);

// A sequence of 1..max_len commands decoded from random bytes seeded by `seed`.
std::vector<SeqCommand> RandomSequence(uint64_t seed, size_t max_len);

// The seed of sequence number `n` of a run seeded with `run_seed` (SplitMix64 of both), so
// that one failing sequence replays without the ones before it.
uint64_t SequenceSeed(uint64_t run_seed, uint64_t n);

// The whole sequence as .qps-like text: SequencePreamble() and one showValue() per command.
std::string SequenceText(const std::vector<SeqCommand>& cmds);

}  // namespace qptwin::reference
