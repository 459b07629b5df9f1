#include "spec/reference/sequence_gen.h"

#include <gtest/gtest.h>

#include <map>
#include <random>
#include <sstream>

namespace qptwin::reference {
namespace {

std::string Show(const std::vector<SeqCommand>& cmds) {
  std::ostringstream os;
  for (const SeqCommand& c : cmds) {
    showValue(c, os);
    os << "\n";
  }
  return os.str();
}

std::vector<SeqCommand> Decode(const std::vector<uint8_t>& bytes, size_t max_len = 1000) {
  ByteSource src(bytes.data(), bytes.size());
  return DecodeSequence(src, max_len);
}

bool Valid(const SeqCommand& c) {
  return c.qp >= 0 && c.qp <= 1 && c.count >= 1 && c.count <= 4 && c.sges_last >= 1 &&
         c.sges_last <= 3 && static_cast<int>(c.kind) <= 4 &&
         static_cast<int>(c.target) <= static_cast<int>(QpState::kErr) &&
         (c.rnr_retry == 7 || c.rnr_retry == 0 || c.rnr_retry == 2);
}

TEST(SequenceDecoder, EveryByteValueOfEveryFieldDecodesToAValidCommand) {
  for (size_t field = 0; field < kBytesPerCommand; ++field) {
    for (int v = 0; v < 256; ++v) {
      std::vector<uint8_t> bytes(kBytesPerCommand, 0);
      bytes[field] = static_cast<uint8_t>(v);
      auto cmds = Decode(bytes);
      ASSERT_EQ(cmds.size(), 1u);
      EXPECT_TRUE(Valid(cmds[0])) << "field " << field << " value " << v << ": " << Show(cmds);
    }
  }
}

TEST(SequenceDecoder, RandomByteStringsOfAnyLengthDecodeOneCommandPerEightBytes) {
  std::mt19937 rng(7);
  for (int i = 0; i < 2000; ++i) {
    std::vector<uint8_t> bytes(rng() % 100);
    for (uint8_t& b : bytes) b = static_cast<uint8_t>(rng());
    auto cmds = Decode(bytes);
    ASSERT_EQ(cmds.size(), (bytes.size() + kBytesPerCommand - 1) / kBytesPerCommand);
    for (const SeqCommand& c : cmds) ASSERT_TRUE(Valid(c)) << Show(cmds);
  }
}

TEST(SequenceDecoder, SameBytesGiveTheSameCommands) {
  std::vector<uint8_t> bytes;
  for (int i = 0; i < 240; ++i) bytes.push_back(static_cast<uint8_t>(i * 37 + 11));
  EXPECT_EQ(Show(Decode(bytes)), Show(Decode(bytes)));
  EXPECT_NE(Show(Decode(bytes)), "");
}

TEST(SequenceDecoder, EmptyInputIsAnEmptySequenceAndMaxLenCaps) {
  EXPECT_TRUE(Decode({}).empty());
  EXPECT_EQ(Decode(std::vector<uint8_t>(80, 0xab), 3).size(), 3u);
}

TEST(SequenceDecoder, ZeroBytesAreAMinimumMaskModifyToInit) {
  auto cmds = Decode(std::vector<uint8_t>(3, 0));  // short: padded with zeros
  ASSERT_EQ(cmds.size(), 1u);
  EXPECT_EQ(cmds[0].kind, SeqCommand::Kind::kModify);
  EXPECT_EQ(cmds[0].qp, 0);
  EXPECT_EQ(cmds[0].target, QpState::kInit);
  EXPECT_TRUE(cmds[0].with_state);
  EXPECT_EQ(cmds[0].add, 0u);
  EXPECT_EQ(cmds[0].drop, 0u);
  EXPECT_FALSE(cmds[0].bad_port);
}

TEST(SequenceDecoder, EveryKindTargetAndMaskChangeIsReachable) {
  std::map<int, int> kinds, targets;
  int adds = 0, drops = 0, bad_ports = 0, writes = 0, no_state = 0;
  std::mt19937 rng(3);
  std::vector<uint8_t> bytes(8 * 4000);
  for (uint8_t& b : bytes) b = static_cast<uint8_t>(rng());
  for (const SeqCommand& c : Decode(bytes, 4000)) {
    ++kinds[static_cast<int>(c.kind)];
    ++targets[static_cast<int>(c.target)];
    adds += c.add != 0;
    drops += c.drop != 0;
    bad_ports += c.bad_port;
    writes += c.write;
    no_state += !c.with_state;
  }
  EXPECT_EQ(kinds.size(), 5u);
  EXPECT_EQ(targets.size(), 7u);
  // Weighted as the RapidCheck generator: modify 6/18, settle 1/18, add ~1/5, drop 1/8 ...
  EXPECT_NEAR(kinds[0] / 4000.0, 6 / 18.0, 0.03);
  EXPECT_NEAR(kinds[3] / 4000.0, 1 / 18.0, 0.02);
  EXPECT_NEAR(adds / 4000.0, 0.2, 0.03);
  EXPECT_NEAR(drops / 4000.0, 0.125, 0.03);
  EXPECT_NEAR(bad_ports / 4000.0, 0.05, 0.02);
  EXPECT_NEAR(writes / 4000.0, 1 / 3.0, 0.03);
  EXPECT_NEAR(no_state / 4000.0, 1 / 13.0, 0.02);
}

TEST(SequenceGenerator, TheSameSeedGivesTheSameSequence) {
  EXPECT_EQ(Show(RandomSequence(42, 20)), Show(RandomSequence(42, 20)));
  EXPECT_NE(Show(RandomSequence(42, 20)), Show(RandomSequence(43, 20)));
  EXPECT_EQ(SequenceSeed(5, 9), SequenceSeed(5, 9));
  EXPECT_NE(SequenceSeed(5, 9), SequenceSeed(5, 10));
  EXPECT_NE(SequenceSeed(5, 9), SequenceSeed(6, 9));
}

TEST(SequenceGenerator, LengthsStayWithinOneToMaxLen) {
  size_t shortest = 1000, longest = 0;
  for (uint64_t n = 0; n < 500; ++n) {
    size_t len = RandomSequence(SequenceSeed(1, n), 12).size();
    shortest = std::min(shortest, len);
    longest = std::max(longest, len);
  }
  EXPECT_EQ(shortest, 1u);
  EXPECT_EQ(longest, 12u);
  EXPECT_TRUE(RandomSequence(1, 0).empty());
}

TEST(SequenceGenerator, TextHasThePreambleAndOneBlockPerCommand) {
  auto cmds = RandomSequence(9, 5);
  std::string text = SequenceText(cmds);
  EXPECT_EQ(text.rfind(SequencePreamble(), 0), 0u);
  EXPECT_EQ(text.substr(SequencePreamble().size()), Show(cmds));
}

}  // namespace
}  // namespace qptwin::reference
