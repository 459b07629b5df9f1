// Output of `qptwin bench`: perftest-style tables, JSON and CSV.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

#include "tools/bench/bench_options.h"
#include "tools/bench/bench_run.h"

namespace qptwin::bench {

struct RunHeader {
  std::string test;
  std::string backend;  // "model/cx6-100g" or "hw/rxe0"
  std::string clock;    // "simulated" or "real"
  std::string conn;     // RC, UC, UD
  int qps = 1;
  int tx_depth = 0;
  int post_list = 1;
  int cq_mod = 1;
  uint32_t mtu = 0;
  uint32_t inline_size = 0;
  bool events = false;
  int threads = 1;  // --threads (printed when > 1)
};

void PrintBwTable(std::ostream& out, const RunHeader& h, const std::vector<BwResult>& rows);
void PrintLatTable(std::ostream& out, const RunHeader& h, const std::vector<LatResult>& rows);
void PrintJson(std::ostream& out, const RunHeader& h, const std::vector<BwResult>& bw,
               const std::vector<LatResult>& lat);
void PrintCsv(std::ostream& out, const RunHeader& h, const std::vector<BwResult>& bw,
              const std::vector<LatResult>& lat);
// "1.23 M" style, for the simulation speed line.
std::string Si(double v);

}  // namespace qptwin::bench
