// Memory of a benchmark run, measured (issue 15): the process's resident set after the QPs
// are set up, and at its peak, per QP and per WR kept outstanding.
//
// Contract:
//  1. CurrentRssBytes() is /proc/self/statm's resident pages (0 where it cannot be read);
//     PeakRssBytes() is getrusage's ru_maxrss. Both cover the whole process.
//  2. HeapInUseBytes() is malloc's bytes in use (mallinfo2: arenas + mmapped blocks): unlike
//     the RSS it does not depend on memory freed earlier in the process, so the per-QP figure
//     (heap growth over setup / QPs) holds in a process that ran other sessions before (the
//     report). The per-WR figure is the peak RSS's growth over the RSS after setup, per WR in
//     flight: meaningful in a fresh process (the CLI) or for its largest run. A figure whose
//     count is 0 stays 0.
#pragma once

#include <cstdint>
#include <string>

namespace qptwin::bench {

uint64_t CurrentRssBytes();
uint64_t PeakRssBytes();
uint64_t HeapInUseBytes();

struct MemoryStats {
  uint64_t before_setup = 0;  // RSS before the devices were opened
  uint64_t after_setup = 0;   // RSS once every QP is connected
  uint64_t heap_before_setup = 0;  // HeapInUseBytes() then
  uint64_t heap_after_setup = 0;
  uint64_t peak = 0;          // peak RSS after the runs
  uint64_t qps = 0;           // QPs created, both sides
  uint64_t outstanding = 0;   // WRs kept in flight at most (QPs x depth of the first run)
  double bytes_per_qp() const;
  double bytes_per_wr() const;
};

// " memory: peak RSS 41.2 MiB; 2.9 KiB per QP (2048 QPs); 0.6 KiB per outstanding WR
// (131072)" — one line, no newline.
std::string FormatMemory(const MemoryStats& m);

}  // namespace qptwin::bench
