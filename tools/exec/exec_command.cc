#include "tools/exec/exec_command.h"

#include <limits.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <ostream>

#include "model/model_backend.h"
#include "tools/cli/cli_io.h"
#include "tools/cli/commands.h"
#include "tools/cli/flags.h"

namespace qptwin::exec {
namespace {

constexpr int kMaxDevices = 16;  // preload.h kMaxDevices

constexpr char kUsage[] =
    "usage: qptwin exec [--profile P] [--devices N] -- PROGRAM [ARGS...]\n"
    "  runs an unmodified libibverbs program with model devices qptwin0..qptwin<N-1>\n"
    "  (LD_PRELOAD of libqptwin_verbs.so; real devices keep working beside them)\n"
    "  --profile P   the model's device profile (default rxe)\n"
    "  --devices N   how many model devices, 1..16 (default 2)\n";

int Bad(std::ostream& err, const std::string& what) {
  return cli::BadInput(err, "exec: " + what);
}

std::string Join(const std::vector<std::string>& v) {
  std::string s;
  for (const std::string& x : v) s += (s.empty() ? "" : ", ") + x;
  return s;
}

bool Readable(const std::string& path) { return !path.empty() && ::access(path.c_str(), R_OK) == 0; }

std::string Absolute(const std::string& path) {
  char buf[PATH_MAX];
  return realpath(path.c_str(), buf) != nullptr ? std::string(buf) : std::string();
}

}  // namespace

std::string FindPreload(const std::string& exe) {
  if (const char* env = getenv("QPTWIN_PRELOAD"); env != nullptr && *env != '\0') {
    return Readable(env) ? Absolute(env) : std::string();
  }
  const std::string dir = exe.substr(0, exe.rfind('/') == std::string::npos ? 0 : exe.rfind('/'));
  for (const std::string& p : {dir + "/exec/libqptwin_verbs.so",
                               exe + ".runfiles/qptwin/tools/exec/libqptwin_verbs.so"}) {
    if (Readable(p)) return Absolute(p);
  }
  return {};
}

int RunExecCli(const std::vector<std::string>& args, std::istream&, std::ostream& out,
               std::ostream& err) {
  const auto dashes = std::find(args.begin(), args.end(), "--");
  const std::vector<std::string> own(args.begin(), dashes);
  std::string error;
  const auto flags = cli::ParseFlags(own, {{"--profile"}, {"--devices"}}, &error);
  if (!flags) return Bad(err, error);
  if (flags->help) {
    out << kUsage;
    return cli::kExitOk;
  }
  if (dashes == args.end() || dashes + 1 == args.end()) {
    return Bad(err, "no program: qptwin exec [--profile P] [--devices N] -- PROGRAM [ARGS...]");
  }
  const std::string profile = flags->Get("--profile", "rxe");
  const std::vector<std::string> profiles = model::ProfileNames();
  if (std::find(profiles.begin(), profiles.end(), profile) == profiles.end()) {
    return Bad(err, "unknown profile '" + profile + "' (valid: " + Join(profiles) + ")");
  }
  const std::string devices = flags->Get("--devices", "2");
  char* end = nullptr;
  const long n = strtol(devices.c_str(), &end, 10);
  if (devices.empty() || *end != '\0' || n < 1 || n > kMaxDevices) {
    return Bad(err, "--devices '" + devices + "' is not a number from 1 to 16");
  }
  char exe[PATH_MAX];
  const ssize_t len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
  const std::string preload = FindPreload(len > 0 ? std::string(exe, len) : std::string());
  if (preload.empty()) {
    return Bad(err, "cannot find libqptwin_verbs.so (set QPTWIN_PRELOAD, or build "
                    "//tools/exec:libqptwin_verbs.so)");
  }
  std::string ld = preload;
  if (const char* old = getenv("LD_PRELOAD"); old != nullptr && *old != '\0') ld += ":" + std::string(old);
  setenv("LD_PRELOAD", ld.c_str(), 1);
  setenv("QPTWIN_PROFILE", profile.c_str(), 1);
  setenv("QPTWIN_DEVICES", std::to_string(n).c_str(), 1);
  std::vector<char*> argv;
  for (auto it = dashes + 1; it != args.end(); ++it) argv.push_back(const_cast<char*>(it->c_str()));
  argv.push_back(nullptr);
  out.flush();
  execvp(argv[0], argv.data());
  return Bad(err, "cannot run '" + *(dashes + 1) + "': " + cli::ErrnoText(errno));
}

}  // namespace qptwin::exec
