#include "spec/reference/sequence_gen.h"

#include <array>
#include <random>
#include <sstream>
#include <utility>

namespace qptwin::reference {
namespace {

// A choice weighted as RapidCheck's weightedElement: byte b picks the entry whose cumulative
// weight range holds b * total / 256.
template <typename T, size_t N>
T Weighted(uint8_t b, const std::array<std::pair<int, T>, N>& table) {
  int total = 0;
  for (const auto& [w, v] : table) total += w;
  int point = b * total / 256;
  for (const auto& [w, v] : table) {
    if (point < w) return v;
    point -= w;
  }
  return table[N - 1].second;  // unreachable: point < total
}

constexpr std::array<std::pair<int, SeqCommand::Kind>, 5> kKinds = {{
    {6, SeqCommand::Kind::kModify},
    {4, SeqCommand::Kind::kPostSend},
    {4, SeqCommand::Kind::kPostRecv},
    {1, SeqCommand::Kind::kSettle},
    {3, SeqCommand::Kind::kBringUp},
}};

constexpr std::array<std::pair<int, QpState>, 7> kTargets = {{
    {3, QpState::kInit}, {3, QpState::kRtr}, {3, QpState::kRts}, {2, QpState::kSqd},
    {2, QpState::kErr}, {2, QpState::kReset}, {1, QpState::kSqe},
}};

// The bits a modify may add or drop (ALT_PATH and PATH_MIG_STATE carry values the harness
// does not generate; bits above DEST_QPN are device settings, tested elsewhere).
constexpr std::array<AttrMask, 18> kBits = {
    attr::kCurState,      attr::kEnSqdAsyncNotify, attr::kAccessFlags, attr::kPkeyIndex,
    attr::kPort,          attr::kQkey,             attr::kAv,          attr::kPathMtu,
    attr::kTimeout,       attr::kRetryCnt,         attr::kRnrRetry,    attr::kRqPsn,
    attr::kMaxQpRdAtomic, attr::kMinRnrTimer,      attr::kSqPsn,       attr::kMaxDestRdAtomic,
    attr::kCap,           attr::kDestQpn};

constexpr std::array<uint8_t, 4> kRnrRetry = {7, 7, 0, 2};

}  // namespace

SeqCommand DecodeCommand(ByteSource& bytes) {
  uint8_t b[kBytesPerCommand];
  for (uint8_t& x : b) x = bytes.Next();
  SeqCommand c;
  c.kind = Weighted(b[0], kKinds);
  c.qp = b[1] & 1;
  c.with_state = ((b[1] >> 1) % 13) != 12;  // 12 in 13: a modify names its target state
  c.target = Weighted(b[2], kTargets);
  if (b[3] >= 205) c.add = kBits[b[3] % kBits.size()];   // ~1 in 5
  if (b[4] >= 224) c.drop = kBits[b[4] % kBits.size()];  // 1 in 8
  c.bad_port = b[5] >= 243;                              // ~1 in 20
  c.count = 1 + (b[6] & 3);
  c.sges_last = Weighted(static_cast<uint8_t>(b[6] & 0xfc),
                         std::array<std::pair<int, int>, 3>{{{8, 1}, {2, 2}, {1, 3}}});
  c.write = b[7] % 3 == 2;  // 1 in 3 sends are RDMA WRITEs
  c.rnr_retry = kRnrRetry[(b[7] / 3) % kRnrRetry.size()];
  return c;
}

std::vector<SeqCommand> DecodeSequence(ByteSource& bytes, size_t max_len) {
  std::vector<SeqCommand> cmds;
  while (bytes.Remaining() > 0 && cmds.size() < max_len) cmds.push_back(DecodeCommand(bytes));
  return cmds;
}

std::vector<SeqCommand> RandomSequence(uint64_t seed, size_t max_len) {
  if (max_len == 0) return {};
  std::mt19937_64 rng(seed);
  const size_t len = 1 + rng() % max_len;
  std::vector<uint8_t> bytes(len * kBytesPerCommand);
  for (size_t i = 0; i < bytes.size(); i += 8) {
    uint64_t r = rng();
    for (size_t k = 0; k < 8; ++k) bytes[i + k] = static_cast<uint8_t>(r >> (8 * k));
  }
  ByteSource src(bytes.data(), bytes.size());
  return DecodeSequence(src, len);
}

uint64_t SequenceSeed(uint64_t run_seed, uint64_t n) {
  // SplitMix64 (Steele, Lea, Flood 2014) over the run seed advanced n+1 steps.
  uint64_t z = run_seed + (n + 1) * 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

std::string SequenceText(const std::vector<SeqCommand>& cmds) {
  std::ostringstream os;
  os << SequencePreamble();
  for (const SeqCommand& c : cmds) {
    showValue(c, os);
    os << "\n";
  }
  return os.str();
}

}  // namespace qptwin::reference
