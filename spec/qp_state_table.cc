#include "spec/qp_state_table.h"

#include <array>
#include <deque>

namespace qptwin {
namespace {

using S = QpState;
using T = QpType;

// Short names for the attribute bits, only to keep the table below readable.
constexpr AttrMask kCur = attr::kCurState, kSqdNotify = attr::kEnSqdAsyncNotify,
                   kAcc = attr::kAccessFlags, kPkey = attr::kPkeyIndex, kPort = attr::kPort,
                   kQkey = attr::kQkey, kAv = attr::kAv, kMtu = attr::kPathMtu,
                   kTimeout = attr::kTimeout, kRetry = attr::kRetryCnt, kRnr = attr::kRnrRetry,
                   kRqPsn = attr::kRqPsn, kMaxRd = attr::kMaxQpRdAtomic, kAlt = attr::kAltPath,
                   kRnrTimer = attr::kMinRnrTimer, kSqPsn = attr::kSqPsn,
                   kMaxDestRd = attr::kMaxDestRdAtomic, kMig = attr::kPathMigState,
                   kDestQpn = attr::kDestQpn, kRate = attr::kRateLimit;

// The valid (cur, next) pairs: 22 in all. Linux forbids RESET->ERR (IBTA 10.3.1 allows it).
constexpr std::array<std::pair<S, S>, 22> kValidPairs{{
    {S::kReset, S::kReset}, {S::kReset, S::kInit},
    {S::kInit, S::kReset},  {S::kInit, S::kErr},   {S::kInit, S::kInit}, {S::kInit, S::kRtr},
    {S::kRtr, S::kReset},   {S::kRtr, S::kErr},    {S::kRtr, S::kRts},
    {S::kRts, S::kReset},   {S::kRts, S::kErr},    {S::kRts, S::kRts},   {S::kRts, S::kSqd},
    {S::kSqd, S::kReset},   {S::kSqd, S::kErr},    {S::kSqd, S::kRts},   {S::kSqd, S::kSqd},
    {S::kSqe, S::kReset},   {S::kSqe, S::kErr},    {S::kSqe, S::kRts},
    {S::kErr, S::kReset},   {S::kErr, S::kErr},
}};

// One row per (cur, next, type) that has required or optional attributes.
struct Row {
  S cur;
  S next;
  T type;
  AttrMask required;
  AttrMask optional;
};

constexpr Row kRows[] = {
    // RESET -> INIT
    {S::kReset, S::kInit, T::kUd, kPkey | kPort | kQkey, 0},
    {S::kReset, S::kInit, T::kRawPacket, kPort, 0},
    {S::kReset, S::kInit, T::kUc, kPkey | kPort | kAcc, 0},
    {S::kReset, S::kInit, T::kRc, kPkey | kPort | kAcc, 0},
    {S::kReset, S::kInit, T::kXrcSend, kPkey | kPort | kAcc, 0},
    {S::kReset, S::kInit, T::kXrcRecv, kPkey | kPort | kAcc, 0},
    {S::kReset, S::kInit, T::kSmi, kPkey | kQkey, 0},
    {S::kReset, S::kInit, T::kGsi, kPkey | kQkey, 0},
    // INIT -> INIT
    {S::kInit, S::kInit, T::kUd, 0, kPkey | kPort | kQkey},
    {S::kInit, S::kInit, T::kUc, 0, kPkey | kPort | kAcc},
    {S::kInit, S::kInit, T::kRc, 0, kPkey | kPort | kAcc},
    {S::kInit, S::kInit, T::kXrcSend, 0, kPkey | kPort | kAcc},
    {S::kInit, S::kInit, T::kXrcRecv, 0, kPkey | kPort | kAcc},
    {S::kInit, S::kInit, T::kSmi, 0, kPkey | kQkey},
    {S::kInit, S::kInit, T::kGsi, 0, kPkey | kQkey},
    // INIT -> RTR
    {S::kInit, S::kRtr, T::kUd, 0, kPkey | kQkey},
    {S::kInit, S::kRtr, T::kUc, kAv | kMtu | kDestQpn | kRqPsn, kAlt | kAcc | kPkey},
    {S::kInit, S::kRtr, T::kRc, kAv | kMtu | kDestQpn | kRqPsn | kMaxDestRd | kRnrTimer,
     kAlt | kAcc | kPkey},
    {S::kInit, S::kRtr, T::kXrcSend, kAv | kMtu | kDestQpn | kRqPsn, kAlt | kAcc | kPkey},
    {S::kInit, S::kRtr, T::kXrcRecv, kAv | kMtu | kDestQpn | kRqPsn | kMaxDestRd | kRnrTimer,
     kAlt | kAcc | kPkey},
    {S::kInit, S::kRtr, T::kSmi, 0, kPkey | kQkey},
    {S::kInit, S::kRtr, T::kGsi, 0, kPkey | kQkey},
    // RTR -> RTS
    {S::kRtr, S::kRts, T::kUd, kSqPsn, kCur | kQkey},
    {S::kRtr, S::kRts, T::kUc, kSqPsn, kCur | kAlt | kAcc | kMig},
    {S::kRtr, S::kRts, T::kRc, kTimeout | kRetry | kRnr | kSqPsn | kMaxRd,
     kCur | kAlt | kAcc | kRnrTimer | kMig},
    {S::kRtr, S::kRts, T::kXrcSend, kTimeout | kRetry | kRnr | kSqPsn | kMaxRd,
     kCur | kAlt | kAcc | kMig},
    {S::kRtr, S::kRts, T::kXrcRecv, kTimeout | kSqPsn, kCur | kAlt | kAcc | kRnrTimer | kMig},
    {S::kRtr, S::kRts, T::kSmi, kSqPsn, kCur | kQkey},
    {S::kRtr, S::kRts, T::kGsi, kSqPsn, kCur | kQkey},
    {S::kRtr, S::kRts, T::kRawPacket, 0, kRate},
    // RTS -> RTS
    {S::kRts, S::kRts, T::kUd, 0, kCur | kQkey},
    {S::kRts, S::kRts, T::kUc, 0, kCur | kAcc | kAlt | kMig},
    {S::kRts, S::kRts, T::kRc, 0, kCur | kAcc | kAlt | kMig | kRnrTimer},
    {S::kRts, S::kRts, T::kXrcSend, 0, kCur | kAcc | kAlt | kMig},
    {S::kRts, S::kRts, T::kXrcRecv, 0, kCur | kAcc | kAlt | kMig | kRnrTimer},
    {S::kRts, S::kRts, T::kSmi, 0, kCur | kQkey},
    {S::kRts, S::kRts, T::kGsi, 0, kCur | kQkey},
    {S::kRts, S::kRts, T::kRawPacket, 0, kRate},
    // RTS -> SQD
    {S::kRts, S::kSqd, T::kUd, 0, kSqdNotify},
    {S::kRts, S::kSqd, T::kUc, 0, kSqdNotify},
    {S::kRts, S::kSqd, T::kRc, 0, kSqdNotify},
    {S::kRts, S::kSqd, T::kXrcSend, 0, kSqdNotify},
    {S::kRts, S::kSqd, T::kXrcRecv, 0, kSqdNotify},
    {S::kRts, S::kSqd, T::kSmi, 0, kSqdNotify},
    {S::kRts, S::kSqd, T::kGsi, 0, kSqdNotify},
    // SQD -> RTS
    {S::kSqd, S::kRts, T::kUd, 0, kCur | kQkey},
    {S::kSqd, S::kRts, T::kUc, 0, kCur | kAlt | kAcc | kMig},
    {S::kSqd, S::kRts, T::kRc, 0, kCur | kAlt | kAcc | kRnrTimer | kMig},
    {S::kSqd, S::kRts, T::kXrcSend, 0, kCur | kAlt | kAcc | kMig},
    {S::kSqd, S::kRts, T::kXrcRecv, 0, kCur | kAlt | kAcc | kRnrTimer | kMig},
    {S::kSqd, S::kRts, T::kSmi, 0, kCur | kQkey},
    {S::kSqd, S::kRts, T::kGsi, 0, kCur | kQkey},
    // SQD -> SQD
    {S::kSqd, S::kSqd, T::kUd, 0, kPkey | kQkey},
    {S::kSqd, S::kSqd, T::kUc, 0, kAv | kAlt | kAcc | kPkey | kMig},
    {S::kSqd, S::kSqd, T::kRc, 0,
     kPort | kAv | kTimeout | kRetry | kRnr | kMaxRd | kMaxDestRd | kAlt | kAcc | kPkey |
         kRnrTimer | kMig},
    {S::kSqd, S::kSqd, T::kXrcSend, 0,
     kPort | kAv | kTimeout | kRetry | kRnr | kMaxRd | kAlt | kAcc | kPkey | kMig},
    {S::kSqd, S::kSqd, T::kXrcRecv, 0,
     kPort | kAv | kTimeout | kMaxDestRd | kAlt | kAcc | kPkey | kRnrTimer | kMig},
    {S::kSqd, S::kSqd, T::kSmi, 0, kPkey | kQkey},
    {S::kSqd, S::kSqd, T::kGsi, 0, kPkey | kQkey},
    // SQE -> RTS
    {S::kSqe, S::kRts, T::kUd, 0, kCur | kQkey},
    {S::kSqe, S::kRts, T::kUc, 0, kCur | kAcc},
    {S::kSqe, S::kRts, T::kSmi, 0, kCur | kQkey},
    {S::kSqe, S::kRts, T::kGsi, 0, kCur | kQkey},
};

using Table = std::array<std::array<Transition, kNumQpStates>, kNumQpStates>;

Table BuildTable() {
  Table t{};
  for (const auto& [cur, next] : kValidPairs) {
    t[static_cast<int>(cur)][static_cast<int>(next)].valid = true;
  }
  for (const Row& r : kRows) {
    Transition& cell = t[static_cast<int>(r.cur)][static_cast<int>(r.next)];
    cell.required[static_cast<int>(r.type)] = r.required;
    cell.optional[static_cast<int>(r.type)] = r.optional;
  }
  return t;
}

const Table& TheTable() {
  static const Table table = BuildTable();
  return table;
}

// IBTA 10.3.1 / kernel: IBV_QP_CUR_STATE is accepted only from RTR, RTS, SQD and SQE.
constexpr bool CurStateAllowedFrom(S cur) {
  return cur == S::kRtr || cur == S::kRts || cur == S::kSqd || cur == S::kSqe;
}

std::string Pair(S a, S b) {
  std::string s(ToName(a));
  s += "->";
  s += ToName(b);
  return s;
}

// Shortest chain of valid, state-changing transitions from `from` to `to` (BFS).
std::vector<Verdict::Step> ShortestPath(T type, S from, S to) {
  std::array<int, kNumQpStates> prev;
  prev.fill(-1);
  prev[static_cast<int>(from)] = static_cast<int>(from);
  std::deque<S> queue{from};
  while (!queue.empty()) {
    S s = queue.front();
    queue.pop_front();
    if (s == to) break;
    for (const auto& [a, b] : kValidPairs) {
      if (a != s || a == b || prev[static_cast<int>(b)] != -1) continue;
      prev[static_cast<int>(b)] = static_cast<int>(a);
      queue.push_back(b);
    }
  }
  std::vector<Verdict::Step> path;
  if (prev[static_cast<int>(to)] == -1 || from == to) return path;
  for (S s = to; s != from; s = static_cast<S>(prev[static_cast<int>(s)])) {
    S p = static_cast<S>(prev[static_cast<int>(s)]);
    path.insert(path.begin(), {p, s, MinimumMask(type, p, s)});
  }
  return path;
}

}  // namespace

const Transition& TransitionOf(QpState cur, QpState next) {
  static const Transition kInvalid{};
  if (static_cast<int>(cur) >= kNumQpStates || static_cast<int>(next) >= kNumQpStates) {
    return kInvalid;  // not a state: no transition from or to it
  }
  return TheTable()[static_cast<int>(cur)][static_cast<int>(next)];
}

bool IsModifyOk(QpState cur, QpState next, QpType type, AttrMask mask) {
  if (static_cast<int>(type) >= kQpTypeSlots) return false;
  if ((mask & attr::kCurState) && !CurStateAllowedFrom(cur)) return false;
  const Transition& t = TransitionOf(cur, next);
  if (!t.valid) return false;
  const AttrMask req = t.required[static_cast<int>(type)];
  const AttrMask opt = t.optional[static_cast<int>(type)];
  if ((mask & req) != req) return false;
  if (mask & ~(req | opt | attr::kState)) return false;
  return true;
}

AttrMask MinimumMask(QpType type, QpState cur, QpState next) {
  const Transition& t = TransitionOf(cur, next);
  if (!t.valid || static_cast<int>(type) >= kQpTypeSlots) return 0;
  return attr::kState | t.required[static_cast<int>(type)];
}

Verdict Judge(QpType type, QpState cur, QpState next, AttrMask mask) {
  Verdict v;
  v.type = type;
  v.cur = cur;
  v.next = next;
  v.mask = mask;
  v.cur_state_misuse = (mask & attr::kCurState) && !CurStateAllowedFrom(cur);
  const Transition& t = TransitionOf(cur, next);
  v.invalid_pair = !t.valid || static_cast<int>(type) >= kQpTypeSlots;
  if (!v.invalid_pair) {
    v.required = t.required[static_cast<int>(type)];
    v.optional = t.optional[static_cast<int>(type)];
    v.missing = v.required & ~mask;
    v.forbidden = mask & ~(v.required | v.optional | attr::kState);
    if (v.cur_state_misuse) v.forbidden &= ~attr::kCurState;  // reported once, as misuse
    v.fixed_mask = (mask | v.missing) & ~v.forbidden;
    if (v.cur_state_misuse) v.fixed_mask &= ~attr::kCurState;
  } else {
    if (static_cast<int>(cur) < kNumQpStates && static_cast<int>(next) < kNumQpStates) {
      v.path = ShortestPath(type, cur, next);
    }
  }
  v.legal = !v.cur_state_misuse && !v.invalid_pair && v.missing == 0 && v.forbidden == 0;
  return v;
}

std::string Verdict::Reason() const {
  if (legal) return "legal";
  std::string out;
  auto add = [&out](const std::string& s) {
    if (!out.empty()) out += "; ";
    out += s;
  };
  if (cur_state_misuse) {
    add("CUR_STATE not allowed from " + std::string(ToName(cur)) +
        " (only from RTR, RTS, SQD, SQE)");
  }
  if (invalid_pair) {
    add("invalid transition " + Pair(cur, next));
    return out;
  }
  if (missing) add("missing required " + FormatAttrMask(missing));
  if (forbidden) {
    add("forbidden " + FormatAttrMask(forbidden) + " (not allowed for " +
        std::string(ToName(type)) + " " + Pair(cur, next) + ")");
  }
  return out;
}

std::string Verdict::Explain() const {
  std::string out = std::string(ToName(type)) + " " + Pair(cur, next) + " with " +
                    FormatAttrMask(mask) + ": " + (legal ? "legal" : "illegal") + "\n";
  if (!invalid_pair) {
    out += "  required: " + (required ? FormatAttrMask(required) : std::string("(none)")) + "\n";
    out += "  optional: " + (optional ? FormatAttrMask(optional) : std::string("(none)")) + "\n";
  }
  if (legal) return out;
  if (cur_state_misuse) {
    out += "  - IBV_QP_CUR_STATE may only be given from RTR, RTS, SQD or SQE, not from " +
           std::string(ToName(cur)) + "\n";
  }
  if (invalid_pair) {
    out += "  - " + Pair(cur, next) + " is not a transition of the QP state machine";
    if (cur == S::kReset && next == S::kErr) {
      out += " (IBTA allows RESET->ERR, Linux's ib_modify_qp_is_ok does not)";
    }
    out += "\n";
    if (!path.empty()) {
      out += "  fix: go step by step:";
      for (const Step& s : path) {
        out += "\n    " + Pair(s.from, s.to) + " with " + FormatAttrMask(s.mask);
      }
      out += "\n";
    } else if (next == S::kSqe) {
      out += "  fix: none: only the device moves a QP to SQE (a send error on UC/UD)\n";
    }
    return out;
  }
  if (missing) out += "  - missing required attribute(s): " + FormatAttrMask(missing) + "\n";
  if (forbidden) {
    out += "  - attribute(s) not allowed on this transition: " + FormatAttrMask(forbidden) + "\n";
  }
  out += "  fix:";
  if (missing) out += " add " + FormatAttrMask(missing);
  if (forbidden || cur_state_misuse) {
    AttrMask drop = forbidden | (cur_state_misuse ? attr::kCurState : 0);
    out += std::string(missing ? "," : "") + " drop " + FormatAttrMask(drop);
  }
  out += " -> " + FormatAttrMask(fixed_mask) + "\n";
  return out;
}

const std::vector<QpType>& TableQpTypes() {
  static const std::vector<QpType> types{T::kRc,      T::kUc,       T::kUd,  T::kXrcSend,
                                         T::kXrcRecv, T::kRawPacket, T::kSmi, T::kGsi};
  return types;
}

const std::vector<QpState>& AllQpStates() {
  static const std::vector<QpState> states{S::kReset, S::kInit, S::kRtr, S::kRts,
                                           S::kSqd,   S::kSqe,  S::kErr};
  return states;
}

}  // namespace qptwin
