#include "tools/bench/bench_stats.h"

#include <gtest/gtest.h>

namespace qptwin::bench {
namespace {

TEST(BenchStats, PercentilesOfAThousandSamples) {
  std::vector<double> v;
  for (int i = 1000; i >= 1; --i) v.push_back(i);  // unsorted on purpose
  LatStats s = Summarize(v);
  EXPECT_EQ(s.samples, 1000u);
  EXPECT_EQ(s.t_min, 1);
  EXPECT_EQ(s.t_max, 1000);
  EXPECT_EQ(s.t_typical, 501);
  EXPECT_DOUBLE_EQ(s.t_avg, 500.5);
  EXPECT_EQ(s.p99, 990);
  EXPECT_EQ(s.p999, 999);
}

TEST(BenchStats, EmptyAndSingle) {
  EXPECT_EQ(Summarize({}).samples, 0u);
  LatStats one = Summarize({2.5});
  EXPECT_EQ(one.t_min, 2.5);
  EXPECT_EQ(one.p999, 2.5);
  EXPECT_EQ(one.t_stdev, 0);
}

}  // namespace
}  // namespace qptwin::bench
