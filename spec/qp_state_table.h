// The QP state-transition table and the legality oracle.
//
// The table reproduces Linux's qp_state_table (drivers/infiniband/core/verbs.c) and
// IsModifyOk() reproduces ib_modify_qp_is_ok() exactly, for every QP type the kernel lists.
// The model, the explanations, the diagrams and `qptwin check` all read this one table.
//
// Contract:
//  1. Pure functions over constant data: thread-safe, no allocation in IsModifyOk().
//  2. `next` is the state the kernel's caller derives: attr.qp_state when the mask has
//     IBV_QP_STATE, else the current state (use NextState()).
//  3. Judge() never says "legal" where IsModifyOk() says false, and vice versa.
#pragma once

#include <string>
#include <vector>

#include "spec/vocabulary.h"

namespace qptwin {

// One cell of the table: is cur->next valid, and which attributes are required/optional
// for each QP type (indexed by the type's value).
struct Transition {
  bool valid = false;
  AttrMask required[kQpTypeSlots] = {};
  AttrMask optional[kQpTypeSlots] = {};
};

const Transition& TransitionOf(QpState cur, QpState next);

// The state a modify moves to: attr.qp_state with IBV_QP_STATE in the mask, else cur.
constexpr QpState NextState(QpState cur, QpState requested, AttrMask mask) {
  return (mask & attr::kState) ? requested : cur;
}

// Exactly ib_modify_qp_is_ok(cur, next, type, mask).
bool IsModifyOk(QpState cur, QpState next, QpType type, AttrMask mask);

// A structured verdict: why a request is (il)legal and what the nearest legal one is.
struct Verdict {
  QpType type = QpType::kRc;
  QpState cur = QpState::kReset;
  QpState next = QpState::kReset;
  AttrMask mask = 0;

  bool legal = false;
  bool cur_state_misuse = false;  // IBV_QP_CUR_STATE given while cur is not RTR/RTS/SQD/SQE
  bool invalid_pair = false;      // cur->next is not in the table
  AttrMask missing = 0;           // required attributes absent from the mask
  AttrMask forbidden = 0;         // attributes neither required nor optional (STATE excepted)
  AttrMask required = 0;          // the table's required set for (cur, next, type)
  AttrMask optional = 0;          // the table's optional set for (cur, next, type)

  // The nearest legal request: for a valid pair, `fixed_mask` = mask + missing - forbidden
  // (- CUR_STATE when misused); for an invalid pair, `path` is the shortest chain of legal
  // transitions from cur to next, each with its minimum mask (empty when unreachable).
  AttrMask fixed_mask = 0;
  struct Step {
    QpState from;
    QpState to;
    AttrMask mask;
  };
  std::vector<Step> path;

  // One line: "legal" or the reasons joined by "; ", in the kernel's order of checks.
  std::string Reason() const;
  // Several lines for people: the verdict, the reasons, and the fix.
  std::string Explain() const;
};

Verdict Judge(QpType type, QpState cur, QpState next, AttrMask mask);

// The minimum legal mask for cur->next (STATE | required); 0 when the pair is invalid.
AttrMask MinimumMask(QpType type, QpState cur, QpState next);

// QP types that appear in the kernel table, in the order tools list them.
const std::vector<QpType>& TableQpTypes();
// States a type can be in per this table (SQE only for types that can reach it etc. is not
// modelled here: all seven states are listed for every type).
const std::vector<QpState>& AllQpStates();

}  // namespace qptwin
