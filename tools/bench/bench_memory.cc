#include "tools/bench/bench_memory.h"

#include <malloc.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>

namespace qptwin::bench {
namespace {

std::string Bytes(double b) {
  char s[32];
  if (b >= 1024.0 * 1024 * 1024) {
    std::snprintf(s, sizeof s, "%.2f GiB", b / (1024.0 * 1024 * 1024));
  } else if (b >= 1024.0 * 1024) {
    std::snprintf(s, sizeof s, "%.1f MiB", b / (1024.0 * 1024));
  } else if (b >= 1024.0) {
    std::snprintf(s, sizeof s, "%.1f KiB", b / 1024.0);
  } else {
    std::snprintf(s, sizeof s, "%.0f B", b);
  }
  return s;
}

double PerItem(uint64_t hi, uint64_t lo, uint64_t n) {
  return n == 0 || hi <= lo ? 0.0 : static_cast<double>(hi - lo) / static_cast<double>(n);
}

}  // namespace

uint64_t CurrentRssBytes() {
  FILE* f = std::fopen("/proc/self/statm", "r");
  if (!f) return 0;
  unsigned long long size = 0, resident = 0;
  int got = std::fscanf(f, "%llu %llu", &size, &resident);
  std::fclose(f);
  if (got != 2) return 0;
  return resident * static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
}

uint64_t PeakRssBytes() {
  struct rusage u {};
  if (getrusage(RUSAGE_SELF, &u) != 0) return 0;
  return static_cast<uint64_t>(u.ru_maxrss) * 1024;  // Linux: kilobytes
}

uint64_t HeapInUseBytes() {
  const struct mallinfo2 m = mallinfo2();
  return static_cast<uint64_t>(m.uordblks) + static_cast<uint64_t>(m.hblkhd);
}

double MemoryStats::bytes_per_qp() const {
  return PerItem(heap_after_setup, heap_before_setup, qps);
}
double MemoryStats::bytes_per_wr() const { return PerItem(peak, after_setup, outstanding); }

std::string FormatMemory(const MemoryStats& m) {
  return " memory: peak RSS " + Bytes(static_cast<double>(m.peak)) + "; " +
         Bytes(m.bytes_per_qp()) + " per QP (" + std::to_string(m.qps) + " QPs); " +
         Bytes(m.bytes_per_wr()) + " per outstanding WR (" + std::to_string(m.outstanding) + ")";
}

}  // namespace qptwin::bench
