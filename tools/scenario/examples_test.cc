// Runs every examples/*.qps and examples/gallery/*.qps on the model (profile rxe): each must
// meet all its expectations, and its canonical transcript must equal DIR/golden/NAME.txt.
// To refresh the goldens after an intended change:
//   bazel-bin/tools/qptwin run --canonical examples/NAME.qps > examples/golden/NAME.txt
//   (gallery: examples/gallery/NAME.qps > examples/gallery/golden/NAME.txt)
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "model/model_backend.h"
#include "spec/scenario/parser.h"
#include "spec/scenario/stream_run.h"
#include "tools/scenario/run_command.h"
#include "spec/scenario/runner.h"
#include "spec/scenario/transcript.h"

namespace qptwin::scenario {
namespace {

namespace fs = std::filesystem;

fs::path ExamplesDir() {
  const char* srcdir = std::getenv("TEST_SRCDIR");
  const char* workspace = std::getenv("TEST_WORKSPACE");
  if (srcdir && workspace) return fs::path(srcdir) / workspace / "examples";
  return "examples";
}

// Names relative to examples/ without ".qps": "01_rc_setup", "gallery/g01_setup_minimal_masks".
std::vector<std::string> ExampleNames(const std::string& subdir = "") {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(ExamplesDir() / subdir, ec)) {
    if (entry.path().extension() != ".qps") continue;
    names.push_back((fs::path(subdir) / entry.path().stem()).string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::vector<std::string> AllExampleNames() {
  std::vector<std::string> names = ExampleNames();
  for (const std::string& n : ExampleNames("gallery")) names.push_back(n);
  return names;
}

fs::path GoldenOf(const std::string& name) {
  fs::path p(name);
  return ExamplesDir() / p.parent_path() / "golden" / (p.filename().string() + ".txt");
}

std::string ReadAll(const fs::path& p) {
  std::ifstream f(p);
  std::ostringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

TEST(Examples, AtLeastFifteenWithGoldens) {
  std::vector<std::string> names = ExampleNames();
  EXPECT_GE(names.size(), 15u) << "looked in " << ExamplesDir();
  for (const std::string& n : AllExampleNames()) {
    EXPECT_TRUE(fs::exists(GoldenOf(n))) << n << " has no golden";
  }
}

TEST(Examples, GalleryHasFifteenSeedScenariosEachWithAVerdict) {
  std::vector<std::string> names = ExampleNames("gallery");
  EXPECT_GE(names.size(), 15u);
  for (const std::string& n : names) {
    std::string text = ReadAll(ExamplesDir() / (n + ".qps"));
    EXPECT_EQ(text.rfind("# Seed ", 0), 0u) << n << " must start by quoting its seed";
    EXPECT_NE(text.find("# Verdict: "), std::string::npos) << n << " has no verdict";
  }
}

class ExampleTest : public testing::TestWithParam<std::string> {};

TEST_P(ExampleTest, MeetsItsExpectationsAndMatchesGolden) {
  const std::string name = GetParam();
  Scenario sc;
  ParseError pe;
  ASSERT_TRUE(ParseScenario(ReadAll(ExamplesDir() / (name + ".qps")), &sc, &pe))
      << name << ".qps:" << pe.line << ": " << pe.message;
  std::string why;
  std::unique_ptr<Backend> backend =
      MakeScenarioBackend(BackendChoice{"model", "rxe", std::max(1, sc.device_lines), ""}, &why);
  ASSERT_NE(backend, nullptr) << why;
  RunResult result = Runner(backend.get()).Run(sc);
  EXPECT_EQ(result.FailureCount(), 0) << FailureReport(result);
  std::string golden = ReadAll(GoldenOf(name));
  EXPECT_EQ(CanonicalTranscript(result), golden)
      << "canonical transcript of " << name << " differs from " << GoldenOf(name);
  // Issue 14: every polled CQE is charged to exactly one posted WR (trace.h invariant 1).
  int wcs = 0, charged = 0;
  for (const Step& s : result.steps) {
    for (const Outcome& o : s.outcomes) wcs += o.kind == Outcome::Kind::kWc;
  }
  for (const Wqe& w : result.trace.wqes) charged += w.end == Wqe::End::kCqe;
  EXPECT_EQ(charged, wcs) << name << ": CQEs polled vs WRs that ended with a CQE";
}

// The streamed run (stream_run.h, what `qptwin run` does) writes what the whole run renders.
TEST_P(ExampleTest, StreamedRunWritesTheSameTranscripts) {
  const std::string name = GetParam();
  const std::string text = ReadAll(ExamplesDir() / (name + ".qps"));
  Scenario sc;
  ParseError pe;
  ASSERT_TRUE(ParseScenario(text, &sc, &pe));
  auto make = [&](const Scenario& header) {
    std::string why;
    return MakeScenarioBackend(BackendChoice{"model", "rxe", std::max(1, header.device_lines), ""},
                               &why);
  };
  RunResult whole = Runner(make(sc).get()).Run(sc);
  for (bool canonical : {true, false}) {
    Scenario header;
    ASSERT_TRUE(ScanHeader(text, &header, &pe));
    EXPECT_EQ(header.device_lines, sc.device_lines);
    ScenarioStream stream{std::string_view(text)};
    std::ostringstream out;
    int failures = 0;
    StreamResult r = StreamRun(&stream, [&](const Scenario&) { return make(header); },
                               StreamOptions{canonical, /*explain=*/true}, out,
                               [&](const std::string&) { ++failures; });
    EXPECT_TRUE(r.syntax_ok && r.backend_ok);
    EXPECT_EQ(r.steps, whole.steps.size());
    EXPECT_EQ(failures, whole.FailureCount());
    EXPECT_EQ(out.str(), canonical ? CanonicalTranscript(whole)
                                   : NarratedTranscript(whole, "simulated", /*explain=*/true))
        << name << (canonical ? " canonical" : " narrated");
  }
}

std::string TestName(const testing::TestParamInfo<std::string>& info) {
  std::string s = info.param;
  for (char& c : s) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return s;
}

INSTANTIATE_TEST_SUITE_P(All, ExampleTest, testing::ValuesIn(AllExampleNames()), TestName);

}  // namespace
}  // namespace qptwin::scenario
