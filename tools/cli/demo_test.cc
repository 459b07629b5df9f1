#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <sstream>

#include "tools/cli/commands.h"
#include "tools/cli/graphviz.h"
#include "tools/cli/test_util.h"

namespace qptwin::cli {
namespace {

bool Has(const std::string& text, const std::string& needle) {
  return text.find(needle) != std::string::npos;
}

TEST(Demo, ShowsTheTableALegalAndAnIllegalModify) {
  const std::string path = ::testing::TempDir() + "/demo_rc.svg";
  const Outcome o = RunWith(RunDemo, {"-o", path});
  EXPECT_EQ(o.code, kExitOk) << o.err;
  EXPECT_TRUE(Has(o.out, "  RESET  INIT   ACCESS_FLAGS|PKEY_INDEX|PORT")) << o.out;
  EXPECT_TRUE(Has(o.out, "RC INIT->RTR with STATE|AV|PATH_MTU|RQ_PSN|MIN_RNR_TIMER|"
                         "MAX_DEST_RD_ATOMIC|DEST_QPN: legal"))
      << o.out;
  EXPECT_TRUE(Has(o.out, "RC RESET->RTR with STATE|AV|PATH_MTU|RQ_PSN|MIN_RNR_TIMER|"
                         "MAX_DEST_RD_ATOMIC|DEST_QPN: illegal"));
  EXPECT_TRUE(Has(o.out, "fix: go step by step:\n    RESET->INIT with "));
  if (!FindDot()) {
    EXPECT_TRUE(Has(o.out, "skipped the SVG: Graphviz's 'dot' is not on PATH"));
    GTEST_SKIP() << "Graphviz's dot is not on PATH: the SVG step was skipped (checked above)";
  }
  EXPECT_TRUE(Has(o.out, "wrote " + path)) << o.out;
  std::stringstream svg;
  svg << std::ifstream(path).rdbuf();
  EXPECT_TRUE(Has(svg.str(), "<svg"));
  std::remove(path.c_str());
}

TEST(Demo, OutputProblemsAreOneLineWithTheReason) {
  EXPECT_TRUE(IsBadInput(RunWith(RunDemo, {"-o", "-"}), "demo: -o needs a file name"));
  if (!FindDot()) GTEST_SKIP() << "Graphviz's dot is not on PATH: no SVG to write";
  const Outcome o = RunWith(RunDemo, {"-o", ::testing::TempDir()});
  EXPECT_EQ(o.code, kExitBadInput);
  EXPECT_EQ(o.err, "qptwin: demo: cannot write " + ::testing::TempDir() + ": is a directory\n");
}

TEST(Demo, UnknownFlagIsBadInput) {
  EXPECT_TRUE(IsBadInput(RunWith(RunDemo, {"--fast"}), "unknown flag '--fast' (valid: -o VALUE"));
}

}  // namespace
}  // namespace qptwin::cli
