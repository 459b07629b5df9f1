// The judge behind `qptwin check`: IsModifyOk() and Verdict::Reason() for millions of lines,
// without allocating. Per (type, cur, next) it keeps the kernel table's required and allowed
// masks and the fixed parts of the reason text; only the attribute lists are formatted per line.
//
// Contract:
//  1. IsLegal(t, c, n, m) == IsModifyOk(c, n, t, m) for every input (tested exhaustively over
//     the bits that matter, see check_judge_test.cc).
//  2. AppendVerdict() writes exactly "legal" or "illegal " + Judge(t, c, n, m).Reason().
//  3. Immutable after construction: concurrent readers are safe.
#pragma once

#include <array>
#include <cstddef>
#include <string>

#include "spec/qp_state_table.h"
#include "spec/vocabulary.h"

namespace qptwin::cli {

class CheckJudge {
 public:
  // The longest text AppendVerdict() writes (all 32 mask bits named twice, plus fixed text).
  static constexpr size_t kMaxVerdictChars = 2048;

  CheckJudge();

  bool IsLegal(QpType type, QpState cur, QpState next, AttrMask mask) const {
    const Cell& c = CellOf(type, cur, next);
    if ((mask & attr::kCurState) && !cur_state_ok_[static_cast<int>(cur)]) return false;
    return c.valid && (mask & c.required) == c.required && (mask & ~c.allowed) == 0;
  }

  // Writes the verdict at `out` (which must have kMaxVerdictChars of room), returns the end.
  char* AppendVerdict(QpType type, QpState cur, QpState next, AttrMask mask, char* out) const;

 private:
  struct Cell {
    bool valid = false;
    AttrMask required = 0;
    AttrMask allowed = 0;        // required | optional | STATE
    std::string invalid_pair;    // "invalid transition RESET->RTR"
    std::string forbidden_note;  // " (not allowed for RC INIT->RTR)"
  };

  const Cell& CellOf(QpType type, QpState cur, QpState next) const {
    return cells_[static_cast<int>(type)][static_cast<int>(cur)][static_cast<int>(next)];
  }
  char* AppendMask(AttrMask mask, char* out) const;

  std::array<std::array<std::array<Cell, kNumQpStates>, kNumQpStates>, kQpTypeSlots> cells_;
  std::array<bool, kNumQpStates> cur_state_ok_{};
  std::array<std::string, kNumQpStates> cur_state_misuse_;  // "CUR_STATE not allowed from INIT ..."
  std::array<std::string, 32> bit_names_;                   // FormatAttrMask's name per bit
};

}  // namespace qptwin::cli
