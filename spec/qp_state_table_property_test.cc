// RapidCheck properties of the legality oracle.
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include "spec/qp_state_table.h"

namespace qptwin {
namespace {

rc::Gen<QpType> GenType() { return rc::gen::elementOf(TableQpTypes()); }
rc::Gen<QpState> GenState() { return rc::gen::elementOf(AllQpStates()); }
rc::Gen<AttrMask> GenMask() { return rc::gen::inRange<AttrMask>(0, 1u << 21); }

RC_GTEST_PROP(QpStateTableProperty, JudgeAgreesWithIsModifyOk, ()) {
  QpType t = *GenType();
  QpState a = *GenState(), b = *GenState();
  AttrMask m = *GenMask();
  RC_ASSERT(Judge(t, a, b, m).legal == IsModifyOk(a, b, t, m));
}

RC_GTEST_PROP(QpStateTableProperty, AddingAnOptionalBitKeepsLegal, ()) {
  QpType t = *GenType();
  QpState a = *GenState(), b = *GenState();
  const Transition& tr = TransitionOf(a, b);
  RC_PRE(tr.valid);
  AttrMask opt = tr.optional[static_cast<int>(t)];
  RC_PRE(opt != 0);
  AttrMask base = MinimumMask(t, a, b) | (*GenMask() & opt);
  if (a != QpState::kRtr && a != QpState::kRts && a != QpState::kSqd && a != QpState::kSqe) {
    base &= ~attr::kCurState;
  }
  RC_PRE(IsModifyOk(a, b, t, base));
  int bit = *rc::gen::inRange(0, 26);
  AttrMask add = (1u << bit) & opt;
  if (add == attr::kCurState && (a == QpState::kReset || a == QpState::kInit)) return;
  RC_ASSERT(IsModifyOk(a, b, t, base | add));
}

RC_GTEST_PROP(QpStateTableProperty, FixedMaskIsLegalForValidPairs, ()) {
  QpType t = *GenType();
  QpState a = *GenState(), b = *GenState();
  AttrMask m = *GenMask() | attr::kState;
  Verdict v = Judge(t, a, b, m);
  if (v.invalid_pair) {
    for (const auto& step : v.path) RC_ASSERT(IsModifyOk(step.from, step.to, t, step.mask));
    if (!v.path.empty()) {
      RC_ASSERT(v.path.front().from == a);
      RC_ASSERT(v.path.back().to == b);
    }
  } else {
    RC_ASSERT(IsModifyOk(a, b, t, v.fixed_mask));
  }
}

RC_GTEST_PROP(QpStateTableProperty, IllegalHasAReasonLegalHasNone, ()) {
  QpType t = *GenType();
  QpState a = *GenState(), b = *GenState();
  Verdict v = Judge(t, a, b, *GenMask());
  RC_ASSERT((v.Reason() == "legal") == v.legal);
}

}  // namespace
}  // namespace qptwin
