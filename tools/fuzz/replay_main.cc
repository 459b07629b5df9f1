// A main() for the libFuzzer target without libFuzzer (as OSS-Fuzz's standalone reproducer):
// runs LLVMFuzzerTestOneInput once on every file named on the command line, or in a named
// directory. Built by Bazel with gcc, so `bazel test` keeps sequence_fuzzer.cc compiling and
// its seed corpus clean, and a crash file replays without clang:
//   bazel-bin/tools/fuzz/sequence_fuzzer_replay crash-1234abcd
// With no arguments it replays tools/fuzz/corpus/ from the test's runfiles.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerInitialize(int* argc, char*** argv);
extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

void Collect(const std::filesystem::path& p, std::vector<std::filesystem::path>* files) {
  if (std::filesystem::is_directory(p)) {
    for (const auto& e : std::filesystem::directory_iterator(p)) files->push_back(e.path());
  } else {
    files->push_back(p);
  }
}

}  // namespace

int main(int argc, char** argv) {
  LLVMFuzzerInitialize(&argc, &argv);
  std::vector<std::filesystem::path> files;
  for (int i = 1; i < argc; ++i) Collect(argv[i], &files);
  if (argc == 1) {
    const char* srcdir = std::getenv("TEST_SRCDIR");
    const char* workspace = std::getenv("TEST_WORKSPACE");
    if (srcdir == nullptr || workspace == nullptr) {
      std::fprintf(stderr, "usage: sequence_fuzzer_replay FILE_OR_DIR...\n");
      return 2;
    }
    Collect(std::filesystem::path(srcdir) / workspace / "tools/fuzz/corpus", &files);
  }
  if (files.empty()) {
    std::fprintf(stderr, "sequence_fuzzer_replay: no inputs\n");
    return 2;
  }
  for (const auto& f : files) {
    std::ifstream in(f, std::ios::binary);
    if (!in) {
      std::fprintf(stderr, "sequence_fuzzer_replay: cannot read %s\n", f.c_str());
      return 2;
    }
    const std::vector<char> bytes((std::istreambuf_iterator<char>(in)),
                                  std::istreambuf_iterator<char>());
    LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
    std::printf("ok %s (%zu bytes)\n", f.filename().c_str(), bytes.size());
  }
  return 0;
}
