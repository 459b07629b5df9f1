// The shared pieces of every subcommand: the flag parser, escaping, and file/stream errors.
#include "tools/cli/cli_io.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <sstream>

#include "tools/cli/escape.h"
#include "tools/cli/flags.h"

namespace qptwin::cli {
namespace {

const std::vector<FlagSpec> kSpecs = {
    {"--type"}, {"--attrs"}, {"--mask", true, "--attrs"}, {"--json", false}, {"-o"}};

TEST(Flags, ValuesAliasesBooleansAndPositionals) {
  std::string error;
  auto f = ParseFlags({"a.qps", "--type", "RC", "--mask=0x1", "--json", "-", "-o", "-x"}, kSpecs,
                      &error, kAnyNumber);
  ASSERT_TRUE(f) << error;
  EXPECT_EQ(f->Get("--type"), "RC");
  EXPECT_EQ(f->Get("--attrs"), "0x1") << "an alias stores under its canonical name";
  EXPECT_TRUE(f->Has("--json"));
  EXPECT_EQ(f->Get("-o"), "-x") << "a value may start with '-'";
  EXPECT_EQ(f->positional(), (std::vector<std::string>{"a.qps", "-"})) << "'-' is stdin";
  EXPECT_FALSE(f->help);
}

TEST(Flags, ErrorsAreOneLineNamingTheValidFlags) {
  std::string error;
  EXPECT_FALSE(ParseFlags({"--bogus"}, kSpecs, &error));
  EXPECT_EQ(error, "unknown flag '--bogus' (valid: --type VALUE, --attrs VALUE, --mask VALUE, "
                   "--json, -o VALUE, --help)");
  EXPECT_FALSE(ParseFlags({"stray"}, kSpecs, &error));
  EXPECT_EQ(error.rfind("unexpected argument 'stray' (valid: ", 0), 0u) << error;
  EXPECT_FALSE(ParseFlags({"a", "b"}, kSpecs, &error, 1));
  EXPECT_EQ(error.rfind("unexpected argument 'b'", 0), 0u) << error;
  EXPECT_FALSE(ParseFlags({"--type"}, kSpecs, &error));
  EXPECT_EQ(error, "flag --type needs a value");
  EXPECT_FALSE(ParseFlags({"--json=1"}, kSpecs, &error));
  EXPECT_EQ(error, "flag --json takes no value");
  EXPECT_FALSE(ParseFlags({"--attrs", "1", "--mask", "2"}, kSpecs, &error));
  EXPECT_EQ(error, "flag --attrs given twice");
}

TEST(Flags, HelpAnywhere) {
  std::string error;
  auto f = ParseFlags({"--type", "RC", "-h"}, kSpecs, &error);
  ASSERT_TRUE(f) << error;
  EXPECT_TRUE(f->help);
}

TEST(BadInput, OneEscapedLineAndExitTwo) {
  std::ostringstream err;
  EXPECT_EQ(BadInput(err, "unknown QP type '\x1b[2J\n'"), 2);
  EXPECT_EQ(err.str(), "qptwin: unknown QP type '\\x1b[2J\\n'\n");
}

TEST(EscapeControl, ControlBytesBecomeCEscapes) {
  EXPECT_EQ(EscapeControl(std::string("a\0b", 3)), "a\\x00b");
  EXPECT_EQ(EscapeControl("\x1b\x7f\t\r"), "\\x1b\\x7f\\t\\x0d");
  EXPECT_EQ(EscapeControl("caf\xc3\xa9 RC|AV"), "caf\xc3\xa9 RC|AV") << "UTF-8 unchanged";
  EXPECT_EQ(EscapeControl(EscapeControl("\x1b")), EscapeControl("\x1b")) << "idempotent";
}

TEST(ErrnoText, StrerrorStartingLowerCase) {
  EXPECT_EQ(ErrnoText(EACCES), "permission denied");
  EXPECT_EQ(ErrnoText(EISDIR), "is a directory");
  EXPECT_EQ(ErrnoText(ENOSPC), "no space left on device");
  EXPECT_EQ(ErrnoText(ENOENT), "no such file or directory");
}

std::string Tmp(const std::string& name) { return ::testing::TempDir() + "/" + name; }

TEST(ReadInputFile, FileStdinAndTheErrorsByName) {
  std::ofstream(Tmp("in.txt")) << "pd p\n";
  std::istringstream in("from stdin");
  std::string text, error;
  ASSERT_TRUE(ReadInputFile(Tmp("in.txt"), in, &text, &error)) << error;
  EXPECT_EQ(text, "pd p\n");
  ASSERT_TRUE(ReadInputFile("-", in, &text, &error)) << error;
  EXPECT_EQ(text, "from stdin");
  EXPECT_FALSE(ReadInputFile(::testing::TempDir(), in, &text, &error));
  EXPECT_EQ(error, "cannot read " + ::testing::TempDir() + ": is a directory");
  EXPECT_FALSE(ReadInputFile(Tmp("none\x1b.qps"), in, &text, &error));
  EXPECT_EQ(error, "cannot read " + Tmp("none\\x1b.qps") + ": no such file or directory");
}

TEST(WriteOutputFile, FileStdoutAndTheErrorsByName) {
  std::ostringstream out;
  std::string error;
  ASSERT_TRUE(WriteOutputFile(Tmp("out.txt"), "page", out, &error)) << error;
  std::ifstream f(Tmp("out.txt"));
  std::string back;
  std::getline(f, back);
  EXPECT_EQ(back, "page");
  ASSERT_TRUE(WriteOutputFile("-", "page", out, &error)) << error;
  EXPECT_EQ(out.str(), "page");
  EXPECT_FALSE(WriteOutputFile("/dev/full", "page", out, &error));
  EXPECT_EQ(error, "cannot write /dev/full: no space left on device");
  EXPECT_FALSE(WriteOutputFile(::testing::TempDir(), "page", out, &error));
  EXPECT_EQ(error, "cannot write " + ::testing::TempDir() + ": is a directory");
  EXPECT_FALSE(WriteOutputFile(Tmp("no/dir/x"), "page", out, &error));
  EXPECT_EQ(error, "cannot write " + Tmp("no/dir/x") + ": no such file or directory");
}

TEST(FdBuf, RemembersTheFirstWriteError) {
  const int fd = open("/dev/full", O_WRONLY);
  ASSERT_GE(fd, 0);
  {
    FdBuf buf(fd, /*output=*/true);
    std::ostream out(&buf);
    out << "lost";
    EXPECT_EQ(StreamErrno(out), 0) << "buffered, not yet written";
    out.flush();
    EXPECT_EQ(StreamErrno(out), ENOSPC);
    std::string error;
    EXPECT_FALSE(WriteOutputFile("-", "more", out, &error));
    EXPECT_EQ(error, "cannot write standard output: no space left on device");
  }
  close(fd);
}

TEST(FdBuf, ReadsLargeAndSmallAndRemembersAReadError) {
  const std::string path = Tmp("big.txt");
  const std::string big(300000, 'x');
  std::ofstream(path) << big << "\nlast";
  const int fd = open(path.c_str(), O_RDONLY);
  ASSERT_GE(fd, 0);
  {
    FdBuf buf(fd, /*output=*/false);
    std::istream in(&buf);
    std::string text, error;
    ASSERT_TRUE(ReadInputFile("-", in, &text, &error)) << error;
    EXPECT_EQ(text, big + "\nlast");
  }
  close(fd);
  const int dir = open(::testing::TempDir().c_str(), O_RDONLY | O_DIRECTORY);
  ASSERT_GE(dir, 0);
  {
    FdBuf buf(dir, /*output=*/false);
    std::istream in(&buf);
    std::string line;
    EXPECT_FALSE(std::getline(in, line));
    EXPECT_EQ(StreamErrno(in), EISDIR);
  }
  close(dir);
}

}  // namespace
}  // namespace qptwin::cli
