// Transition legality on a live QP: every (from, to) pair of RC, UC and UD with the minimum
// mask is accepted exactly when the kernel's table says so, and a rejected modify changes
// nothing (ibv_modify_qp(3) NOTES).
#include "tests/conformance/fixture.h"

namespace qptwin::testing {
namespace {

const QpType kTypes[] = {QpType::kRc, QpType::kUc, QpType::kUd};
// States a QP can be driven to by modify alone (SQE is entered only by the device).
const QpState kReachable[] = {QpState::kReset, QpState::kInit, QpState::kRtr,
                              QpState::kRts,   QpState::kSqd,  QpState::kErr};

TEST_P(Conformance, EveryPairWithItsMinimumMaskMatchesTheTable) {
  int legal = 0, illegal = 0;
  for (QpType type : kTypes) {
    for (QpState from : kReachable) {
      for (QpState to : AllQpStates()) {
        SCOPED_TRACE(std::string(ToName(type)) + " " + std::string(ToName(from)) + "->" +
                     std::string(ToName(to)));
        QpHandle qp = Qp(type);
        Drive(type, qp, from);
        ASSERT_EQ(StateOf(qp), from);
        QpAttr a = FullAttr(qp, {});
        a.qp_state = to;
        AttrMask mask = TransitionOf(from, to).valid ? MinimumMask(type, from, to) : attr::kState;
        bool ok = IsModifyOk(from, to, type, mask);
        int rc = dev_->ModifyQp(qp, a, mask);
        if (ok) {
          EXPECT_EQ(rc, 0);
          ++legal;
          if (to == QpState::kSqd) {  // let the (empty) SQ drain; the event is tested elsewhere
            (void)dev_->WaitForAsyncEvent(EventType::kSqDrained, qp, kSecond / 10);
          }
          EXPECT_EQ(StateOf(qp), to);
        } else {
          EXPECT_EQ(rc, EINVAL);
          EXPECT_EQ(StateOf(qp), from) << "a rejected modify must leave the QP unchanged";
          ++illegal;
        }
        ASSERT_EQ(dev_->DestroyQp(qp), 0);
      }
    }
  }
  EXPECT_EQ(legal + illegal, 3 * 6 * 7);
  EXPECT_GT(legal, 50);
}

TEST_P(Conformance, RemovingEachRequiredAttributeOfRcInitToRtrIsEinval) {
  QpHandle qp = Qp(QpType::kRc);
  Drive(QpType::kRc, qp, QpState::kInit);
  QpAttr a = FullAttr(qp, {});
  a.qp_state = QpState::kRtr;
  AttrMask full = MinimumMask(QpType::kRc, QpState::kInit, QpState::kRtr);
  for (int b = 1; b < 21; ++b) {
    AttrMask bit = 1u << b;
    if (!(full & bit)) continue;
    EXPECT_EQ(dev_->ModifyQp(qp, a, full & ~bit), EINVAL) << AttrBitName(bit);
    EXPECT_EQ(StateOf(qp), QpState::kInit);
  }
  EXPECT_EQ(dev_->ModifyQp(qp, a, full), 0);
  EXPECT_EQ(StateOf(qp), QpState::kRtr);
}

TEST_P(Conformance, ForbiddenAttributeIsEinvalAndChangesNothing) {
  QpHandle qp = Qp(QpType::kRc);
  Drive(QpType::kRc, qp, QpState::kInit);
  QpAttr a = FullAttr(qp, {});
  a.qp_state = QpState::kRtr;
  // QKEY is not an RC attribute on INIT->RTR; SQ_PSN belongs to RTR->RTS.
  for (AttrMask extra : {attr::kQkey, attr::kSqPsn, attr::kTimeout}) {
    EXPECT_EQ(dev_->ModifyQp(qp, a, MinimumMask(QpType::kRc, QpState::kInit, QpState::kRtr) | extra),
              EINVAL)
        << AttrBitName(extra);
    EXPECT_EQ(StateOf(qp), QpState::kInit);
  }
}

TEST_P(Conformance, ResetToErrAndResetToRtrAreRejected) {
  QpHandle qp = Qp(QpType::kRc);
  QpAttr a = FullAttr(qp, {});
  a.qp_state = QpState::kErr;
  EXPECT_EQ(dev_->ModifyQp(qp, a, attr::kState), EINVAL);  // IBTA allows it; Linux does not
  a.qp_state = QpState::kRtr;
  EXPECT_EQ(dev_->ModifyQp(qp, a, MinimumMask(QpType::kRc, QpState::kInit, QpState::kRtr)), EINVAL);
  EXPECT_EQ(StateOf(qp), QpState::kReset);
}

TEST_P(Conformance, RejectedModifyKeepsAttributes) {
  QpHandle qp = Qp(QpType::kRc);
  Drive(QpType::kRc, qp, QpState::kRts);
  QpAttr before;
  QpInitAttr init;
  ASSERT_EQ(dev_->QueryQp(qp, &before, &init), 0);
  QpAttr a = before;
  a.min_rnr_timer = 3;
  a.qp_access_flags = access::kLocalWrite;
  a.path_mtu = Mtu::k256;
  // PATH_MTU is not modifiable in RTS->RTS: the whole call fails, MIN_RNR_TIMER included.
  EXPECT_EQ(dev_->ModifyQp(qp, a, attr::kMinRnrTimer | attr::kAccessFlags | attr::kPathMtu), EINVAL);
  QpAttr after;
  ASSERT_EQ(dev_->QueryQp(qp, &after, &init), 0);
  EXPECT_EQ(after.qp_state, QpState::kRts);
  EXPECT_EQ(after.min_rnr_timer, before.min_rnr_timer);
  EXPECT_EQ(after.qp_access_flags, before.qp_access_flags);
  EXPECT_EQ(after.path_mtu, before.path_mtu);
  // Without PATH_MTU the same change is accepted and visible.
  EXPECT_EQ(dev_->ModifyQp(qp, a, attr::kMinRnrTimer | attr::kAccessFlags), 0);
  ASSERT_EQ(dev_->QueryQp(qp, &after, &init), 0);
  EXPECT_EQ(after.min_rnr_timer, 3);
  EXPECT_EQ(after.qp_access_flags, access::kLocalWrite);
}

TEST_P(Conformance, OutOfRangeValuesAreEinval) {
  QpHandle qp = Qp(QpType::kRc);
  QpAttr a = FullAttr(qp, {});
  a.qp_state = QpState::kInit;
  a.port_num = dattr_.phys_port_cnt + 1;  // uverbs/rxe: rdma_is_port_valid
  EXPECT_EQ(dev_->ModifyQp(qp, a, MinimumMask(QpType::kRc, QpState::kReset, QpState::kInit)), EINVAL);
  EXPECT_EQ(StateOf(qp), QpState::kReset);
  Drive(QpType::kRc, qp, QpState::kInit);
  a = FullAttr(qp, {});
  a.qp_state = QpState::kRtr;
  if (pattr_.max_mtu != Mtu::k4096) {  // rxe_qp_chk_attr: path_mtu above the port's max MTU
    a.path_mtu = Mtu::k4096;
    EXPECT_EQ(dev_->ModifyQp(qp, a, MinimumMask(QpType::kRc, QpState::kInit, QpState::kRtr)), EINVAL);
    EXPECT_EQ(StateOf(qp), QpState::kInit);
    a.path_mtu = pattr_.active_mtu;
  }
  ASSERT_EQ(dev_->ModifyQp(qp, a, MinimumMask(QpType::kRc, QpState::kInit, QpState::kRtr)), 0);
  a.qp_state = QpState::kRts;
  if (dattr_.max_qp_rd_atom < 255) {  // rxe_qp_chk_attr: max_rd_atomic above max_qp_rd_atom
    a.max_rd_atomic = static_cast<uint8_t>(dattr_.max_qp_rd_atom + 1);
    EXPECT_EQ(dev_->ModifyQp(qp, a, MinimumMask(QpType::kRc, QpState::kRtr, QpState::kRts)), EINVAL);
    EXPECT_EQ(StateOf(qp), QpState::kRtr);
  }
}

}  // namespace
}  // namespace qptwin::testing
