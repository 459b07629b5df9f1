#include "tools/fuzz/known_bugs.h"

#include <gtest/gtest.h>

namespace qptwin::fuzz {
namespace {

TEST(KnownBugs, TheFixedSqdBugIsNoLongerExcused) {
  EXPECT_EQ(KnownOpenBug("modify b SQD->SQD mask 0: got EINVAL, expected ok (legal)"), nullptr);
}

TEST(KnownBugs, OtherFailuresAreNew) {
  EXPECT_EQ(KnownOpenBug("modify b SQD->SQD mask STATE: got EINVAL, expected ok (legal)"),
            nullptr);
  EXPECT_EQ(KnownOpenBug("modify b SQD->SQD mask CUR_STATE|STATE: got EINVAL, expected ok (x)"),
            nullptr);
  EXPECT_EQ(KnownOpenBug("modify b SQD->SQD mask 0: got ok, expected EINVAL (x)"), nullptr);
  EXPECT_EQ(KnownOpenBug("QP a: 1 send and 0 receive WRs never completed after ERR"), nullptr);
  EXPECT_EQ(KnownOpenBug(""), nullptr);
}

}  // namespace
}  // namespace qptwin::fuzz
