#include "tools/cli/graphviz.h"

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <vector>

extern char** environ;

namespace qptwin::cli {
namespace {

// A temporary file removed when it goes out of scope.
class TempFile {
 public:
  TempFile() {
    const char* dir = std::getenv("TMPDIR");
    path_ = std::string(dir && *dir ? dir : "/tmp") + "/qptwin-dot-XXXXXX";
    const int fd = mkstemp(path_.data());
    if (fd < 0) {
      path_.clear();
    } else {
      close(fd);
    }
  }
  ~TempFile() {
    if (!path_.empty()) unlink(path_.c_str());
  }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace

std::optional<std::string> FindDot() {
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path ? path : "/usr/bin:/bin");
  for (std::string dir; std::getline(dirs, dir, ':');) {
    const std::string candidate = (dir.empty() ? "." : dir) + "/dot";
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return std::nullopt;
}

std::string DotMissingMessage() {
  return "Graphviz's 'dot' is not on PATH: install the package graphviz (apt-get install "
         "graphviz), or use --format dot";
}

std::optional<std::string> RenderSvg(const std::string& dot_text, std::string* error) {
  const auto dot = FindDot();
  if (!dot) {
    *error = DotMissingMessage();
    return std::nullopt;
  }
  TempFile input, output;
  if (input.path().empty() || output.path().empty()) {
    *error = "cannot create a temporary file for dot (check TMPDIR)";
    return std::nullopt;
  }
  std::ofstream(input.path()) << dot_text;
  std::vector<std::string> argv_strings = {*dot, "-Tsvg", "-o", output.path(), input.path()};
  std::vector<char*> argv;
  for (std::string& s : argv_strings) argv.push_back(s.data());
  argv.push_back(nullptr);
  pid_t pid;
  if (posix_spawn(&pid, dot->c_str(), nullptr, nullptr, argv.data(), environ) != 0) {
    *error = "cannot run " + *dot;
    return std::nullopt;
  }
  int status = 0;
  if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    *error = *dot + " -Tsvg failed (exit status " + std::to_string(WEXITSTATUS(status)) + ")";
    return std::nullopt;
  }
  std::ifstream svg(output.path());
  std::stringstream text;
  text << svg.rdbuf();
  return text.str();
}

}  // namespace qptwin::cli
