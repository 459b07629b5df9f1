#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <sstream>

#include "tools/cli/commands.h"
#include "tools/cli/diagram_render.h"
#include "tools/cli/graphviz.h"
#include "tools/cli/test_util.h"

namespace qptwin::cli {
namespace {

bool Has(const std::string& text, const std::string& needle) {
  return text.find(needle) != std::string::npos;
}

TEST(DiagramRender, RcEdgesAreLabelledWithRequiredAttributes) {
  const std::string dot = RenderDot(QpType::kRc);
  EXPECT_EQ(dot.rfind("digraph \"qp_states_RC\" {", 0), 0u);
  EXPECT_TRUE(Has(dot, "\"RESET\" -> \"INIT\" [label=\"ACCESS_FLAGS\\nPKEY_INDEX\\nPORT\"]")) << dot;
  EXPECT_TRUE(Has(dot, "\"INIT\" -> \"RTR\" [label=\"AV\\nPATH_MTU\\nRQ_PSN\\nMIN_RNR_TIMER\\n"
                       "MAX_DEST_RD_ATOMIC\\nDEST_QPN\""))
      << dot;
  EXPECT_TRUE(Has(dot, "\"RTR\" -> \"RTS\" [label=\"TIMEOUT\\nRETRY_CNT\\nRNR_RETRY\\n"
                       "MAX_QP_RD_ATOMIC\\nSQ_PSN\""));
  EXPECT_TRUE(Has(dot, "\"SQD\" -> \"SQD\" [label=\"optional only\""));
  EXPECT_TRUE(Has(dot, "\"ERR\" -> \"ERR\" [label=\"no attributes\"]"));
  EXPECT_TRUE(Has(dot, "\"any state\" -> \"ERR\" [style=dashed"));
  EXPECT_FALSE(Has(dot, "\"RESET\" -> \"RTR\""));  // not a transition
  EXPECT_FALSE(Has(dot, "\"SQE\""));               // RC never enters SQE
}

TEST(DiagramRender, SqeOnlyForTypesThatCanBeInIt) {
  for (QpType t : TableQpTypes()) {
    const std::string dot = RenderDot(t);
    EXPECT_EQ(Has(dot, "\"RTS\" -> \"SQE\" [style=dashed, label=\"send error (device)\"]"),
              CanBeInSqe(t))
        << ToName(t);
    EXPECT_EQ(Has(dot, "\"SQE\" -> \"RTS\""), CanBeInSqe(t)) << ToName(t);
  }
  EXPECT_TRUE(CanBeInSqe(QpType::kUd));
  EXPECT_TRUE(CanBeInSqe(QpType::kUc));
  EXPECT_FALSE(CanBeInSqe(QpType::kXrcSend));
}

TEST(DiagramRender, HighlightsAPathAndMarksNonTransitions) {
  const std::string dot =
      RenderDot(QpType::kRc, {QpState::kReset, QpState::kInit, QpState::kRtr});
  EXPECT_TRUE(Has(dot, "\"RESET\" -> \"INIT\" [label=\"ACCESS_FLAGS\\nPKEY_INDEX\\nPORT\", "
                       "color=\"#d62728\""));
  EXPECT_TRUE(Has(dot, "\"INIT\" [color=\"#d62728\""));
  EXPECT_FALSE(Has(dot, "\"RTS\" [color"));
  const std::string bad = RenderDot(QpType::kRc, {QpState::kReset, QpState::kRtr});
  EXPECT_TRUE(Has(bad, "\"RESET\" -> \"RTR\" [style=dotted, label=\"not a transition\""));
}

Outcome Diagram(const Args& args) { return RunWith(RunDiagram, args); }

TEST(Diagram, PrintsDotByDefault) {
  const Outcome o = Diagram({"--type", "UD"});
  EXPECT_EQ(o.code, kExitOk);
  EXPECT_EQ(o.out, RenderDot(QpType::kUd));
}

TEST(Diagram, SvgRendersWhenGraphvizIsInstalled) {
  if (!FindDot()) GTEST_SKIP() << "Graphviz's dot is not on PATH (apt-get install graphviz)";
  const Outcome o = Diagram({"--type", "RC", "--format", "svg"});
  ASSERT_EQ(o.code, kExitOk) << o.err;
  EXPECT_TRUE(Has(o.out, "<svg")) << o.out.substr(0, 200);
  EXPECT_TRUE(Has(o.out, ">RTR</text>"));
  const std::string path = ::testing::TempDir() + "/rc.svg";
  const Outcome to_file = Diagram({"--type", "RC", "--format", "svg", "-o", path});
  ASSERT_EQ(to_file.code, kExitOk) << to_file.err;
  EXPECT_EQ(to_file.out, "wrote " + path + "\n");
  std::stringstream written;
  written << std::ifstream(path).rdbuf();
  EXPECT_EQ(written.str(), o.out);
  std::remove(path.c_str());
}

TEST(Diagram, MissingDotIsOneClearLineNamingGraphviz) {
  const char* old = std::getenv("PATH");
  const std::string saved = old ? old : "";
  setenv("PATH", "/nonexistent", 1);
  const Outcome o = Diagram({"--type", "RC", "--format", "svg"});
  setenv("PATH", saved.c_str(), 1);
  EXPECT_TRUE(IsBadInput(o, "install the package graphviz"));
}

TEST(Diagram, BadInputNamesTheChoices) {
  EXPECT_TRUE(IsBadInput(Diagram({}), "missing --type (valid: RC, UC"));
  EXPECT_TRUE(IsBadInput(Diagram({"--type", "RD"}), "unknown QP type 'RD'"));
  EXPECT_TRUE(IsBadInput(Diagram({"--type", "RC", "--format", "png"}), "(valid: dot, svg)"));
  EXPECT_TRUE(IsBadInput(Diagram({"--type", "RC", "-o", "/nonexistent/dir/x.dot"}),
                         "diagram: cannot write /nonexistent/dir/x.dot: no such file or directory"));
  const Outcome to_stdout = Diagram({"--type", "RC", "-o", "-"});
  EXPECT_EQ(to_stdout.code, kExitOk) << to_stdout.err;
  EXPECT_EQ(to_stdout.out.rfind("digraph \"qp_states_RC\"", 0), 0u) << "-o - is stdout";
}

}  // namespace
}  // namespace qptwin::cli
