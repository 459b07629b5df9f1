// `qptwin bench --backend hw` on a real device (rxe in tools/rxe-vm): the same loops as on
// the model, through spec/backend.h. Skipped, with the reason, where there is no device.
#include <gtest/gtest.h>

#include "tests/support/support.h"
#include "tools/bench/bench_session.h"

namespace qptwin::bench {
namespace {

BenchOptions Hw(std::vector<std::string> args) {
  args.push_back("--backend");
  args.push_back("hw");
  BenchOptions o;
  std::string error;
  EXPECT_TRUE(ParseBenchArgs(args, &o, &error)) << error;
  return o;
}

TEST(BenchHw, BandwidthAndLatencyLoopsRunOnARealDevice) {
  if (!testing::MakeBackendOrSkip(testing::HwChoice())) return;  // skipped, with the reason
  for (const char* t : {"write_bw", "read_bw", "send_bw", "atomic_bw"}) {
    SessionResult r;
    std::string error;
    ASSERT_EQ(RunSession(Hw({t, "-s", "1024", "-n", "50"}), &r, &error), 0) << t << ": " << error;
    ASSERT_EQ(r.bw.size(), 1u);
    EXPECT_GT(r.bw[0].gbps, 0) << t;
    EXPECT_EQ(r.header.clock, "real");
  }
  for (const char* t : {"write_lat", "read_lat", "send_lat", "atomic_lat"}) {
    SessionResult r;
    std::string error;
    ASSERT_EQ(RunSession(Hw({t, "-n", "20"}), &r, &error), 0) << t << ": " << error;
    ASSERT_EQ(r.lat.size(), 1u);
    EXPECT_GT(r.lat[0].stats.t_min, 0) << t;
  }
}

}  // namespace
}  // namespace qptwin::bench
