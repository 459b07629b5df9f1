#include "tools/bench/bench_stats.h"

#include <algorithm>
#include <cmath>

namespace qptwin::bench {

LatStats Summarize(std::vector<double> us) {
  LatStats s;
  s.samples = us.size();
  if (us.empty()) return s;
  std::sort(us.begin(), us.end());
  s.t_min = us.front();
  s.t_max = us.back();
  s.t_typical = us[us.size() / 2];  // perftest: delta[iters / 2] of the sorted deltas
  double sum = 0;
  for (double v : us) sum += v;
  s.t_avg = sum / static_cast<double>(us.size());
  double var = 0;
  for (double v : us) var += (v - s.t_avg) * (v - s.t_avg);
  s.t_stdev = std::sqrt(var / static_cast<double>(us.size()));
  auto pct = [&](double p) {
    size_t i = static_cast<size_t>(std::ceil(p * static_cast<double>(us.size()))) ;
    if (i > 0) --i;
    return us[std::min(i, us.size() - 1)];
  };
  s.p99 = pct(0.99);
  s.p999 = pct(0.999);
  return s;
}

}  // namespace qptwin::bench
