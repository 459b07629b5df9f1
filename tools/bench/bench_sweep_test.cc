#include "tools/bench/bench_sweep.h"

#include <gtest/gtest.h>

#include <sstream>

#include "tools/bench/bench_options.h"

namespace qptwin::bench {
namespace {

SweepResult Sweep(const std::string& cmd) {
  std::vector<std::string> args;
  std::istringstream is(cmd);
  for (std::string a; is >> a;) args.push_back(a);
  BenchOptions o;
  std::string error;
  SweepResult r;
  EXPECT_TRUE(ParseBenchArgs(args, &o, &error)) << error;
  EXPECT_EQ(RunSweep(o, &r, &error), 0) << error;
  return r;
}

constexpr const char* kBase = "write_bw -s 64 -t 16 -l 16 -Q 16 -n 40000 --profile cx6-100g";

TEST(BenchSweep, ManyQpsCutTheRateOnceMissesOutrunTheFetchUnits) {
  // cx6 is calibrated to SMART (ASPLOS 2024) Fig. 4b: 32 WQE re-fetches in flight, 64 M
  // per second per NIC (model/profile_cx6.cc). 16 QPs x 16 WQEs fit the WQE cache: the same
  // rate as without caches. 4,096 QPs x 16 are evicted before their ACK and read again at
  // the send and at the retirement: the re-fetch unit caps the rate under the caches-off one.
  SweepResult on = Sweep(std::string(kBase) + " --sweep-qps 16,4096");
  SweepResult off = Sweep(std::string(kBase) + " --sweep-qps 16,4096 --cache off");
  ASSERT_EQ(on.points.size(), 2u);
  ASSERT_EQ(off.points.size(), 2u);
  EXPECT_NEAR(on.points[0].bw.mpps, off.points[0].bw.mpps, 0.01 * off.points[0].bw.mpps);
  EXPECT_GT(MissRate(on.points[1].cache, "WQE"), 0.9);
  EXPECT_LT(on.points[1].bw.mpps, 0.8 * off.points[1].bw.mpps);
  EXPECT_TRUE(off.points[1].cache.empty());
}

TEST(BenchSweep, WithManyPostingThreadsTheQpCountCliffIsInTheRate) {
  // 32 simulated posting threads (bench_run.h contract 6), 4 WRs outstanding per QP: 256
  // QPs fit every cache (2,048 WQEs, 2,048 QPCs), 8,192 QPs fit neither; the caches-off
  // rate is the same at both.
  const std::string cmd = "write_bw -s 64 -t 4 -l 4 -Q 4 --threads 32 -n 40000 "
                          "--profile cx6-100g --sweep-qps 128,8192";
  SweepResult on = Sweep(cmd);
  SweepResult off = Sweep(cmd + " --cache off");
  ASSERT_EQ(on.points.size(), 2u);
  ASSERT_EQ(off.points.size(), 2u);
  EXPECT_NEAR(off.points[1].bw.mpps, off.points[0].bw.mpps, 0.05 * off.points[0].bw.mpps);
  EXPECT_NEAR(on.points[0].bw.mpps, off.points[0].bw.mpps, 0.05 * off.points[0].bw.mpps);
  EXPECT_GT(MissRate(on.points[1].cache, "QPC"), 0.2);  // about one per 4-WR post list
  EXPECT_LT(on.points[1].bw.mpps, 0.8 * on.points[0].bw.mpps);
}

TEST(BenchSweep, TheCliffIsWhereTheCapacitiesSay) {
  // cx6: 2,048 WQEs and 2,048 QPCs (model/profile_cx6.cc). At -t 16, 32 QPs keep 512
  // WQEs prefetched (fit), 1,024 QPs 16,384 (do not); 1,024 QPCs fit, 8,192 do not.
  SweepResult r = Sweep(std::string(kBase) + " --sweep-qps 32,1024,8192");
  ASSERT_EQ(r.points.size(), 3u);
  EXPECT_LT(MissRate(r.points[0].cache, "WQE"), 0.05);
  EXPECT_GT(MissRate(r.points[1].cache, "WQE"), 0.3);
  EXPECT_LT(MissRate(r.points[1].cache, "QPC"), 0.02);
  EXPECT_GT(MissRate(r.points[2].cache, "QPC"), 0.04);  // one miss per 16-WR window
}

TEST(BenchSweep, SmartFigure4WqeCliffPosition) {
  // SMART (ASPLOS 2024) Fig. 4b, ConnectX-6: 8 B WRITE, T threads each with its own QP and
  // D = 32 WRs outstanding: 91.4 Mop/s at 36 x 32 (1,152), 63.1 at 96 x 32 (3,072). The
  // model with a posting thread per QP: few WQE misses at 12 x 32 (384), the rate down by
  // more than a quarter at 96 x 32.
  SweepResult r = Sweep("write_bw -s 8 -t 32 -l 32 -Q 32 --threads 96 -n 100000 "
                        "--profile cx6-100g --sweep-qps 12,96");
  ASSERT_EQ(r.points.size(), 2u);
  EXPECT_LT(MissRate(r.points[0].cache, "WQE"), 0.05);
  EXPECT_GT(MissRate(r.points[1].cache, "WQE"), 0.3);
  EXPECT_LT(r.points[1].bw.mpps, 0.75 * r.points[0].bw.mpps);
  // The cliff's position (D = 16: 92.7 Mop/s at 60 x 16 = 960, 67.0 at 72 x 16 = 1,152):
  // the model's first WQE misses fall between the two.
  SweepResult d16 = Sweep("write_bw -s 8 -t 16 -l 16 -Q 16 --threads 96 -n 100000 "
                          "--profile cx6-100g --sweep-qps 60,72");
  ASSERT_EQ(d16.points.size(), 2u);
  EXPECT_LT(MissRate(d16.points[0].cache, "WQE"), 0.01);
  EXPECT_GT(MissRate(d16.points[1].cache, "WQE"), 0.1);
}

TEST(BenchSweep, PostingThreadsAddUpUntilTheWire) {
  // One thread keeps 8 WRs in flight on each of its QPs and waits for them; 8 threads with a
  // QP each do that in parallel: about 8 times the rate, the NIC shared.
  SweepResult one = Sweep("write_bw -s 8 -t 8 -l 8 -Q 8 -n 16000 --profile cx6-100g "
                          "--sweep-qps 1");
  SweepResult eight = Sweep("write_bw -s 8 -t 8 -l 8 -Q 8 --threads 8 -n 16000 "
                            "--profile cx6-100g --sweep-qps 8");
  ASSERT_EQ(one.points.size(), 1u);
  ASSERT_EQ(eight.points.size(), 1u);
  EXPECT_GT(eight.points[0].bw.mpps, 7.0 * one.points[0].bw.mpps);
  EXPECT_LT(eight.points[0].bw.mpps, 8.5 * one.points[0].bw.mpps);
  EXPECT_EQ(eight.header.threads, 8);
}

TEST(BenchSweep, RegisteredMemoryBeyondTheMttMissesTranslations) {
  // 65,536 MTT entries x 4 KiB = 256 MiB: 64 MiB fits, 4 GiB touched at random does not.
  SweepResult r = Sweep("read_bw -s 64 -q 16 -n 20000 --profile cx6-100g --sweep-mr-size 64M,4G");
  ASSERT_EQ(r.points.size(), 2u);
  EXPECT_LT(MissRate(r.points[0].cache, "MTT"), 0.05);
  EXPECT_GT(MissRate(r.points[1].cache, "MTT"), 0.5);
  EXPECT_EQ(r.axis, "MR bytes");
}

TEST(BenchSweep, TranslationMissesCapTheRateBeyondTheMtt) {
  // REPORT section 8's experiment: with 128 READs in flight per QP one host thread posts at
  // ~44 Mpps; past 256 MiB nearly every READ misses a translation, waited on by a unit of 8
  // reads in flight (16 M/s per NIC): the rate falls to well under half.
  SweepResult r = Sweep("read_bw -s 64 -q 16 -t 128 -l 16 -Q 16 -n 20000 --profile cx6-100g "
                        "--sweep-mr-size 64M,4G");
  ASSERT_EQ(r.points.size(), 2u);
  EXPECT_GT(r.points[0].bw.mpps, 40.0);
  EXPECT_LT(r.points[1].bw.mpps, 0.5 * r.points[0].bw.mpps);
}

TEST(BenchSweep, PrintsOneRowPerPointWithMissRatesPerKind) {
  SweepResult r = Sweep(std::string(kBase) + " --sweep-qps 1,16");
  std::ostringstream out;
  PrintSweep(out, r);
  const std::string s = out.str();
  EXPECT_NE(s.find(" QPs\tWRs\tMpps\tGb/s\tQPC miss\tMPT miss\tMTT miss\tWQE miss\n"),
            std::string::npos)
      << s;
  EXPECT_NE(s.find("\n 1\t"), std::string::npos) << s;
  EXPECT_NE(s.find("\n 16\t"), std::string::npos) << s;
  EXPECT_NE(s.find("context caches as the profile says"), std::string::npos) << s;
  std::string svg = RenderSvg(SweepChart("t", {&r}, {"on"}));
  EXPECT_NE(svg.find("<svg"), std::string::npos);
}

TEST(BenchSweep, BadListsAndCombinationsAreOneLine) {
  BenchOptions o;
  std::string error;
  for (const char* bad : {"--sweep-qps 0", "--sweep-qps 1,,2", "--sweep-qps 70000",
                          "--sweep-mr-size 1K", "--cache maybe", "--mr-size 4K,8K"}) {
    std::vector<std::string> args = {"write_bw"};
    std::istringstream is(bad);
    for (std::string a; is >> a;) args.push_back(a);
    EXPECT_FALSE(ParseBenchArgs(args, &o, &error)) << bad;
    EXPECT_EQ(error.find('\n'), std::string::npos) << error;
  }
  EXPECT_FALSE(ParseBenchArgs({"write_bw", "--sweep-qps", "1", "--sweep-mr-size", "4M"}, &o,
                              &error));
  EXPECT_FALSE(ParseBenchArgs({"write_bw", "--cache", "off", "--backend", "hw"}, &o, &error));
  // --threads: the model's simulated posting threads, bandwidth tests, polling only.
  for (const std::vector<std::string>& bad :
       {std::vector<std::string>{"write_bw", "--threads", "0"},
        {"write_bw", "--threads", "4097"},
        {"write_bw", "--threads", "4", "--backend", "hw"},
        {"write_lat", "--threads", "4"},
        {"send_bw", "--threads", "4", "-e"}}) {
    EXPECT_FALSE(ParseBenchArgs(bad, &o, &error)) << bad[1];
    EXPECT_NE(error.find("--threads"), std::string::npos) << error;
    EXPECT_EQ(error.find('\n'), std::string::npos) << error;
  }
  std::vector<uint64_t> v;
  EXPECT_TRUE(ParseSweepList("4K,64M,1G", 4096, uint64_t{1} << 40, &v));
  EXPECT_EQ(v, (std::vector<uint64_t>{4096, 64 << 20, 1 << 30}));
}

}  // namespace
}  // namespace qptwin::bench
