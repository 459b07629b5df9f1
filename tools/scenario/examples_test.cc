// Runs every examples/*.qps on the model (profile rxe): each must meet all its expectations,
// and its canonical transcript must equal examples/golden/NAME.txt exactly.
// To refresh the goldens after an intended change:
//   bazel-bin/tools/scenario/qps run --canonical examples/NAME.qps > examples/golden/NAME.txt
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "model/model_backend.h"
#include "tools/scenario/parser.h"
#include "tools/scenario/run_command.h"
#include "tools/scenario/runner.h"
#include "tools/scenario/transcript.h"

namespace qptwin::scenario {
namespace {

namespace fs = std::filesystem;

fs::path ExamplesDir() {
  const char* srcdir = std::getenv("TEST_SRCDIR");
  const char* workspace = std::getenv("TEST_WORKSPACE");
  if (srcdir && workspace) return fs::path(srcdir) / workspace / "examples";
  return "examples";
}

std::vector<std::string> ExampleNames() {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(ExamplesDir(), ec)) {
    if (entry.path().extension() == ".qps") names.push_back(entry.path().stem().string());
  }
  std::sort(names.begin(), names.end());
  return names;
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
  for (const std::string& n : names) {
    EXPECT_TRUE(fs::exists(ExamplesDir() / "golden" / (n + ".txt"))) << n << " has no golden";
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
      MakeScenarioBackend(BackendChoice{"model", "rxe", std::max(1, sc.device_lines)}, &why);
  ASSERT_NE(backend, nullptr) << why;
  RunResult result = Runner(backend.get()).Run(sc);
  EXPECT_EQ(result.FailureCount(), 0) << FailureReport(result);
  std::string golden = ReadAll(ExamplesDir() / "golden" / (name + ".txt"));
  EXPECT_EQ(CanonicalTranscript(result), golden)
      << "canonical transcript of " << name << " differs from examples/golden/" << name
      << ".txt";
}

std::string TestName(const testing::TestParamInfo<std::string>& info) {
  std::string s = info.param;
  for (char& c : s) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return s;
}

INSTANTIATE_TEST_SUITE_P(All, ExampleTest, testing::ValuesIn(ExampleNames()), TestName);

}  // namespace
}  // namespace qptwin::scenario

namespace {
// Runs before libsystemc's main() prints its banner.
const bool kQuiet = (setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 0), true);
}  // namespace

// libsystemc.so owns main() and calls sc_main().
extern "C" int sc_main(int argc, char** argv) {
  testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
