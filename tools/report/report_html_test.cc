#include "tools/report/report_html.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "gtest/gtest.h"
#include "tools/cli/graphviz.h"
#include "tools/report/report_command.h"
#include "tools/report/timeline_svg.h"
#include "tools/scenario/run_command.h"

namespace qptwin::report {
namespace {

namespace fs = std::filesystem;

fs::path Examples() {
  const char* srcdir = std::getenv("TEST_SRCDIR");
  const char* ws = std::getenv("TEST_WORKSPACE");
  return srcdir && ws ? fs::path(srcdir) / ws / "examples" : fs::path("examples");
}

fs::path TmpDir() {
  const char* t = std::getenv("TEST_TMPDIR");
  return t ? fs::path(t) : fs::temp_directory_path();
}

std::string ReadAll(const fs::path& p) {
  std::ifstream f(p);
  std::ostringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

int Count(const std::string& haystack, const std::string& needle) {
  int n = 0;
  for (size_t pos = haystack.find(needle); pos != std::string::npos;
       pos = haystack.find(needle, pos + 1)) {
    ++n;
  }
  return n;
}

// Runs `report` on an example; returns the page (empty on failure) and the exit code.
std::string Report(const std::string& example, int* rc, std::string* err_text = nullptr) {
  const fs::path out = TmpDir() / (example + ".html");
  std::istringstream in;
  std::ostringstream out_s, err_s;
  *rc = RunReport({(Examples() / (example + ".qps")).string(), "-o", out.string()}, in, out_s,
                  err_s, scenario::MakeScenarioBackend);
  if (err_text) *err_text = err_s.str();
  return fs::exists(out) ? ReadAll(out) : "";
}

// Issue 14: with every wr_id 0, each WR still ends once and the right way in the WR table.
TEST(Report, RepeatedWrIdsEachWrEndsOnceInTheTable) {
  const fs::path qps = TmpDir() / "repeated_wr_ids.qps";
  std::ofstream(qps) << R"(device d0 profile=rxe
pd p
mr ma pd=p len=4096 access=LOCAL_WRITE
mr mb pd=p len=4096 access=LOCAL_WRITE|REMOTE_WRITE
cq ca
cq cb
qp a type=RC pd=p send_cq=ca recv_cq=ca
qp b type=RC pd=p send_cq=cb recv_cq=cb
modify a state=INIT pkey_index=0 port=1 access=0
modify b state=INIT pkey_index=0 port=1 access=REMOTE_WRITE
modify a state=RTR path_mtu=1024 dest=b rq_psn=0 max_dest_rd_atomic=0 min_rnr_timer=12
modify b state=RTR path_mtu=1024 dest=a rq_psn=0 max_dest_rd_atomic=0 min_rnr_timer=12
modify a state=RTS sq_psn=0 timeout=14 retry_cnt=7 rnr_retry=7 max_rd_atomic=0
modify b state=RTS sq_psn=0 timeout=14 retry_cnt=7 rnr_retry=7 max_rd_atomic=0
post_send a wr_id=0 op=WRITE sge=ma:0:8 remote=mb:0
post_send a wr_id=0 op=WRITE sge=ma:0:8 remote=mb:0 flags=SIGNALED
poll ca expect=SUCCESS
post_recv a wr_id=0 sge=ma:64:8
modify a state=ERR
poll ca expect=WR_FLUSH_ERR
)";
  const fs::path out = TmpDir() / "repeated_wr_ids.html";
  std::istringstream in;
  std::ostringstream out_s, err_s;
  ASSERT_EQ(RunReport({qps.string(), "-o", out.string()}, in, out_s, err_s,
                      scenario::MakeScenarioBackend),
            0)
      << err_s.str();
  const std::string html = ReadAll(out);
  EXPECT_EQ(Count(html, "class=\"wqe-row\""), 3);
  EXPECT_EQ(Count(html, "no CQE by the end"), 0) << "a WR lost to a wr_id match";
  EXPECT_EQ(Count(html, "implied by the later CQE of the same SQ, wr_id=0 at line 17"), 1);
  EXPECT_EQ(Count(html, "WR_FLUSH_ERR (CQE on ca)"), 1);
}

TEST(Report, PageIsSelfContained) {
  int rc = -1;
  std::string html = Report("13_remote_access_error", &rc);
  ASSERT_EQ(rc, 0);
  ASSERT_FALSE(html.empty());
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  // No network: nothing fetched or linked from elsewhere.
  for (const char* bad : {"http://", "https://", "src=", "<link", "@import", "url("}) {
    EXPECT_EQ(html.find(bad), std::string::npos) << "found " << bad;
  }
  EXPECT_NE(html.find("<style>"), std::string::npos);
  EXPECT_NE(html.find("<script>"), std::string::npos);
}

TEST(Report, HasTimelineRowPerPostedWrAndTheirEnds) {
  int rc = -1;
  std::string html = Report("13_remote_access_error", &rc);
  // Example 13 posts three WRs: WRITE ok, WRITE out of range, SEND flushed.
  EXPECT_EQ(Count(html, "class=\"wqe-row\""), 3);
  EXPECT_NE(html.find("REM_ACCESS_ERR (CQE on ca)"), std::string::npos);
  EXPECT_NE(html.find("WR_FLUSH_ERR (CQE on ca)"), std::string::npos);
  // The device-caused state changes are in the events table, with their cause.
  EXPECT_NE(html.find("RTS \u2192 ERR (remote access"), std::string::npos);
  // Narration of every step, anchored by line.
  EXPECT_NE(html.find("id=\"L29\""), std::string::npos);
  EXPECT_NE(html.find("the responder refused rkey, range or access"), std::string::npos);
}

TEST(Report, DiagramOfEachQpTypeWithThePathTaken) {
  int rc = -1;
  std::string html = Report("13_remote_access_error", &rc);
  EXPECT_EQ(Count(html, "<figure class=\"diagram\""), 1);  // RC only
  EXPECT_NE(html.find("a: RESET \u2192 INIT \u2192 RTR \u2192 RTS \u2192 ERR"), std::string::npos);
  if (!cli::FindDot()) GTEST_SKIP() << "Graphviz dot missing: " << cli::DotMissingMessage();
  EXPECT_EQ(Count(html, "<svg"), 2);  // the RC diagram and the timeline
  EXPECT_NE(html.find("class=\"node\""), std::string::npos);
}

TEST(Report, NarrationGivesThePostingRule) {
  int rc = -1;
  std::string html = Report("04_post_send_before_rts", &rc);
  ASSERT_EQ(rc, 0);
  EXPECT_NE(html.find("post_send needs RTS or later: the QP is in INIT (rdma-facts R2"),
            std::string::npos);
  EXPECT_NE(html.find("post_send needs RTS or later: the QP is in RTR"), std::string::npos);
}

TEST(Report, FailedExpectationIsShownAndExitsOne) {
  const fs::path qps = TmpDir() / "failing.qps";
  std::ofstream(qps) << "device d\npd p\ncq c\nqp a type=RC pd=p send_cq=c recv_cq=c\n"
                        "modify a state=RTR expect=ok\n";
  const fs::path out = TmpDir() / "failing.html";
  std::istringstream in;
  std::ostringstream o, e;
  EXPECT_EQ(RunReport({qps.string(), "-o", out.string()}, in, o, e, scenario::MakeScenarioBackend),
            1);
  std::string html = ReadAll(out);
  EXPECT_NE(html.find("<section id=\"summary\" class=\"fail\">"), std::string::npos);
  EXPECT_NE(html.find("expectation failed: expected ok, got EINVAL"), std::string::npos);
  EXPECT_NE(html.find("the legal route is RESET -&gt; INIT"), std::string::npos);
}

TEST(Report, UsageErrorsExitTwo) {
  std::istringstream in;
  std::ostringstream o, e;
  EXPECT_EQ(RunReport({}, in, o, e, scenario::MakeScenarioBackend), 2);
  EXPECT_EQ(RunReport({"x.qps"}, in, o, e, scenario::MakeScenarioBackend), 2);  // no -o
  EXPECT_EQ(RunReport({"/nonexistent.qps", "-o", (TmpDir() / "n.html").string()}, in, o, e,
                      scenario::MakeScenarioBackend),
            2);
  EXPECT_NE(e.str().find("cannot read"), std::string::npos);
}

TEST(InlineSvg, DropsPrologAndNamespaces) {
  std::string dot =
      "<?xml version=\"1.0\"?>\n<!DOCTYPE svg PUBLIC \"-//W3C//DTD SVG 1.1//EN\" "
      "\"http://www.w3.org/Graphics/SVG/1.1/DTD/svg11.dtd\">\n<svg width=\"10pt\" "
      "xmlns=\"http://www.w3.org/2000/svg\" xmlns:xlink=\"http://www.w3.org/1999/xlink\">"
      "<g/></svg>\n";
  std::string s = InlineSvg(dot);
  EXPECT_EQ(s.find("http"), std::string::npos);
  EXPECT_NE(s.find("<svg width=\"10pt\"><g/></svg>"), std::string::npos);
  EXPECT_EQ(InlineSvg("not svg"), "");
}

TEST(QpPaths, FollowTheStateChangesInOrder) {
  scenario::RunResult r;
  r.trace.states = {{"a", 0, 1, QpState::kReset, QpState::kReset, "created"},
                    {"a", 0, 2, QpState::kReset, QpState::kInit, "modify"},
                    {"a", 5, 3, QpState::kInit, QpState::kErr, "flush"},
                    {"b", 5, 3, QpState::kReset, QpState::kReset, "created"}};
  auto paths = QpPaths(r);
  EXPECT_EQ(paths["a"], (std::vector<QpState>{QpState::kReset, QpState::kInit, QpState::kErr}));
  EXPECT_EQ(paths["b"], (std::vector<QpState>{QpState::kReset}));
}

TEST(Escape, HtmlSpecials) { EXPECT_EQ(Escape("<a href=\"x\">&'"), "&lt;a href=&quot;x&quot;&gt;&amp;&#39;"); }

}  // namespace
}  // namespace qptwin::report
