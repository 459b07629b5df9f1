#include "tools/cli/check_judge.h"

#include <cstring>

namespace qptwin::cli {
namespace {

char* Put(std::string_view s, char* out) {
  std::memcpy(out, s.data(), s.size());
  return out + s.size();
}

}  // namespace

CheckJudge::CheckJudge() {
  for (int b = 0; b < 32; ++b) bit_names_[b] = FormatAttrMask(1u << b);
  for (QpState cur : AllQpStates()) {
    // Which states accept IBV_QP_CUR_STATE, and the reason text when one does not, come from
    // Judge(): Verdict::Reason() stays the one source of these words.
    const int c = static_cast<int>(cur);
    const Verdict v = Judge(QpType::kRc, cur, cur, attr::kCurState);
    cur_state_ok_[c] = !v.cur_state_misuse;
    const std::string reason = v.Reason();
    cur_state_misuse_[c] = reason.substr(0, reason.find(';'));
  }
  for (int t = 0; t < kQpTypeSlots; ++t) {
    const QpType type = static_cast<QpType>(t);
    for (QpState cur : AllQpStates()) {
      for (QpState next : AllQpStates()) {
        const Transition& tr = TransitionOf(cur, next);
        Cell& cell = cells_[t][static_cast<int>(cur)][static_cast<int>(next)];
        cell.valid = tr.valid;
        cell.required = tr.required[t];
        cell.allowed = tr.required[t] | tr.optional[t] | attr::kState;
        const std::string pair =
            std::string(ToName(cur)) + "->" + std::string(ToName(next));
        cell.invalid_pair = "invalid transition " + pair;
        cell.forbidden_note = " (not allowed for " + std::string(ToName(type)) + " " + pair + ")";
      }
    }
  }
}

char* CheckJudge::AppendMask(AttrMask mask, char* out) const {
  bool first = true;
  while (mask) {
    const int b = __builtin_ctz(mask);
    mask &= mask - 1;
    if (!first) *out++ = '|';
    first = false;
    out = Put(bit_names_[b], out);
  }
  return out;
}

// Mirrors Verdict::Reason(): the kernel's order of checks, reasons joined by "; ".
char* CheckJudge::AppendVerdict(QpType type, QpState cur, QpState next, AttrMask mask,
                                char* out) const {
  if (IsLegal(type, cur, next, mask)) return Put("legal", out);
  const Cell& c = CellOf(type, cur, next);
  out = Put("illegal ", out);
  const bool misuse = (mask & attr::kCurState) && !cur_state_ok_[static_cast<int>(cur)];
  bool any = false;
  auto separate = [&any, &out] {
    if (any) out = Put("; ", out);
    any = true;
  };
  if (misuse) {
    separate();
    out = Put(cur_state_misuse_[static_cast<int>(cur)], out);
  }
  if (!c.valid) {
    separate();
    return Put(c.invalid_pair, out);
  }
  if (const AttrMask missing = c.required & ~mask) {
    separate();
    out = AppendMask(missing, Put("missing required ", out));
  }
  AttrMask forbidden = mask & ~c.allowed;
  if (misuse) forbidden &= ~attr::kCurState;
  if (forbidden) {
    separate();
    out = Put(c.forbidden_note, AppendMask(forbidden, Put("forbidden ", out)));
  }
  return out;
}

}  // namespace qptwin::cli
