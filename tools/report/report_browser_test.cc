// Opens a generated report in headless Chromium: the DOM after the page's JS ran must hold the
// diagram's nodes, the timeline rows and the narration; a screenshot is kept in the test's
// undeclared outputs (bazel-testlogs/tools/report/report_browser_test/test.outputs/).
// Skips, saying why, when chromium is not installed (tools/install-deps --browser).
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>

#include "gtest/gtest.h"
#include "tools/report/report_command.h"
#include "tools/scenario/run_command.h"

namespace qptwin::report {
namespace {

namespace fs = std::filesystem;

std::optional<std::string> FindChromium() {
  const char* path = std::getenv("PATH");
  std::istringstream dirs(path ? path : "/usr/bin:/bin");
  for (std::string dir; std::getline(dirs, dir, ':');) {
    for (const char* name : {"chromium", "chromium-browser", "google-chrome"}) {
      fs::path p = fs::path(dir) / name;
      if (::access(p.c_str(), X_OK) == 0) return p.string();
    }
  }
  return std::nullopt;
}

fs::path Dir(const char* var) {
  const char* t = std::getenv(var);
  return t ? fs::path(t) : fs::temp_directory_path();
}

std::string Quote(const std::string& s) { return "'" + s + "'"; }

// Runs chromium headless with the flags the project uses; returns stdout ("" on failure).
std::string Chromium(const std::string& exe, const std::string& extra, const fs::path& page,
                     int* status) {
  static int run = 0;
  const fs::path profile = Dir("TEST_TMPDIR") / ("chromium-profile-" + std::to_string(run++));
  fs::create_directories(profile);
  std::string cmd = "HOME=" + Quote(profile.string()) + " timeout 120 " + Quote(exe) +
                    " --headless --no-sandbox --disable-gpu --disable-background-networking"
                    " --disable-component-update --no-first-run --disable-sync"
                    " --user-data-dir=" + Quote(profile.string()) + " " + extra + " " +
                    Quote("file://" + page.string()) + " 2>/dev/null";
  std::string out;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return "";
  char buf[4096];
  for (size_t n; (n = fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
  *status = pclose(p);
  return out;
}

int Count(const std::string& s, const std::string& needle) {
  int n = 0;
  for (size_t pos = s.find(needle); pos != std::string::npos; pos = s.find(needle, pos + 1)) ++n;
  return n;
}

class BrowserTest : public testing::Test {
 protected:
  void SetUp() override {
    std::optional<std::string> exe = FindChromium();
    if (!exe) GTEST_SKIP() << "chromium not installed (install it with tools/install-deps --browser)";
    exe_ = *exe;
    const char* srcdir = std::getenv("TEST_SRCDIR");
    const char* ws = std::getenv("TEST_WORKSPACE");
    fs::path examples = srcdir && ws ? fs::path(srcdir) / ws / "examples" : fs::path("examples");
    page_ = Dir("TEST_TMPDIR") / "report.html";
    std::istringstream in;
    std::ostringstream out, err;
    ASSERT_EQ(RunReport({(examples / "13_remote_access_error.qps").string(), "-o", page_.string()},
                        in, out, err, scenario::MakeScenarioBackend),
              0)
        << err.str();
  }
  std::string exe_;
  fs::path page_;
};

TEST_F(BrowserTest, RenderedDomHasDiagramTimelineAndNarration) {
  int status = -1;
  std::string dom = Chromium(exe_, "--dump-dom", page_, &status);
  ASSERT_EQ(status, 0) << "chromium failed";
  ASSERT_FALSE(dom.empty());
  // The page's script ran: it marks the body and writes the summary from the DOM's counts.
  EXPECT_NE(dom.find("data-js=\"ready\""), std::string::npos);
  EXPECT_NE(dom.find("3 CQEs and 10 state changes over 25 narrated steps"), std::string::npos);
  // The QP filter got one option per QP.
  EXPECT_NE(dom.find("<option value=\"a\">a</option>"), std::string::npos);
  EXPECT_NE(dom.find("<option value=\"b\">b</option>"), std::string::npos);
  // The RC diagram's nodes (Graphviz puts each state's name in the node's <title>).
  for (const char* state : {"RESET", "INIT", "RTR", "RTS", "SQD", "ERR"}) {
    EXPECT_NE(dom.find(std::string("<title>") + state + "</title>"), std::string::npos) << state;
  }
  EXPECT_EQ(Count(dom, "class=\"wqe-row\""), 3);
  EXPECT_NE(dom.find("REM_ACCESS_ERR (CQE on ca)"), std::string::npos);
  EXPECT_NE(dom.find("wr_id=2 on a: REM_ACCESS_ERR: the responder refused rkey"), std::string::npos);
  EXPECT_NE(dom.find("b moved RTS -&gt; ERR"), std::string::npos);
}

TEST_F(BrowserTest, TakesAScreenshot) {
  const fs::path png = Dir("TEST_UNDECLARED_OUTPUTS_DIR") / "report_13.png";
  int status = -1;
  Chromium(exe_, "--screenshot=" + Quote(png.string()) + " --window-size=1280,2000", page_,
           &status);
  ASSERT_EQ(status, 0);
  ASSERT_TRUE(fs::exists(png));
  EXPECT_GT(fs::file_size(png), 20000u);  // a blank 1280x2000 page compresses far below this
  std::ifstream f(png, std::ios::binary);
  char sig[8] = {};
  f.read(sig, 8);
  EXPECT_EQ(std::string(sig + 1, 3), "PNG");
}

}  // namespace
}  // namespace qptwin::report
