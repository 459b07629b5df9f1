// Latency statistics as perftest prints them (t_min, t_max, t_typical = median, t_avg,
// t_stdev, 99% and 99.9% percentiles), in microseconds.
#pragma once

#include <cstddef>
#include <vector>

namespace qptwin::bench {

struct LatStats {
  size_t samples = 0;
  double t_min = 0;
  double t_max = 0;
  double t_typical = 0;  // median
  double t_avg = 0;
  double t_stdev = 0;
  double p99 = 0;
  double p999 = 0;
};

// `us` need not be sorted. An empty input gives all zeros.
LatStats Summarize(std::vector<double> us);

}  // namespace qptwin::bench
