// `qptwin bench` on the model: the numbers the report relies on, as tests.
#include <gtest/gtest.h>

#include <sstream>

#include "model/profile.h"
#include "model/wire.h"
#include "tools/bench/bench_command.h"
#include "tools/bench/bench_session.h"

namespace qptwin::bench {
namespace {

SessionResult RunCmd(const std::string& cmd) {
  std::vector<std::string> args;
  std::istringstream is(cmd);
  for (std::string a; is >> a;) args.push_back(a);
  BenchOptions o;
  std::string error;
  SessionResult r;
  EXPECT_TRUE(ParseBenchArgs(args, &o, &error)) << error;
  EXPECT_EQ(RunSession(o, &r, &error), 0) << cmd << ": " << error;
  return r;
}

double Gbps(const std::string& cmd) {
  SessionResult r = RunCmd(cmd);
  return r.bw.empty() ? 0 : r.bw[0].gbps;
}
double Mpps(const std::string& cmd) {
  SessionResult r = RunCmd(cmd);
  return r.bw.empty() ? 0 : r.bw[0].mpps;
}
double Typical(const std::string& cmd) {
  SessionResult r = RunCmd(cmd);
  return r.lat.empty() ? 0 : r.lat[0].stats.t_typical;
}

// --vs-systemc measures SystemC's own loops around the run and leaves the run's simulated
// results as they are without it.
TEST(BenchModel, VsSystemCMeasuresSystemCsRatesAroundTheRunAndChangesNoResult) {
  const SessionResult plain = RunCmd("write_bw -s 8 -n 20000 --profile cx6-100g");
  const SessionResult r = RunCmd("write_bw -s 8 -n 20000 --profile cx6-100g --vs-systemc");
  ASSERT_EQ(r.bw.size(), 1u);
  EXPECT_EQ(r.bw[0].mpps, plain.bw[0].mpps);
  EXPECT_EQ(r.bw[0].gbps, plain.bw[0].gbps);
  for (const model::SystemCRates& s : {r.systemc_before, r.systemc_after}) {
    EXPECT_GT(s.method_per_s, 0);
    EXPECT_GT(s.thread_per_s, 0);
  }
  EXPECT_EQ(plain.systemc_before.thread_per_s, 0) << "not measured unless asked";
  const std::string text = FormatVsSystemC(r);
  EXPECT_NE(text.find("SC_THREAD"), std::string::npos) << text;
  EXPECT_NE(text.find("speed ratio (WR/s over"), std::string::npos) << text;
}

TEST(BenchModel, OneQpWrite64KiBReaches12GBpsWithin1PercentOfTheBound) {
  SessionResult r = RunCmd("write_bw -s 65536 -n 2000");
  ASSERT_EQ(r.bw.size(), 1u);
  const model::Profile* p = model::FindProfile("cx6-100g");
  double bound = model::GoodputBoundGbps(p->timing.link, model::WireOp::kWrite, 65536, 4096);
  EXPECT_GE(r.bw[0].gb_per_s, 12.0);
  EXPECT_GE(r.bw[0].gbps / bound, 0.99);
  EXPECT_LE(r.bw[0].gbps, bound * 1.0000001) << "nothing beats the wire";
  EXPECT_EQ(r.bw[0].iters, 2000u);
}

TEST(BenchModel, DatacenterLatencyIsThreeToFiveMicroseconds) {
  for (const char* t : {"send_lat", "write_lat"}) {
    double us = Typical(std::string(t) + " -s 8 -n 50 --profile cx6-dc");
    EXPECT_GE(us, 3.0) << t;
    EXPECT_LE(us, 5.0) << t;
    double b2b = Typical(std::string(t) + " -s 8 -n 50 --profile cx6-100g");
    EXPECT_LT(b2b, 1.5) << t;
  }
}

TEST(BenchModel, SeedOptimisationsHaveTheirEffect) {
  EXPECT_GT(Mpps("write_bw -s 8 -n 20000 -l 32"), 1.5 * Mpps("write_bw -s 8 -n 20000 -l 1"));
  EXPECT_GT(Mpps("write_bw -s 8 -n 20000 -Q 100"), Mpps("write_bw -s 8 -n 20000 -Q 1"));
  EXPECT_LT(Typical("send_lat -s 8 -n 50"), Typical("send_lat -s 8 -n 50 -e"));
  EXPECT_GT(Gbps("write_bw -s 4096 -n 2000 -t 128"), 5 * Gbps("write_bw -s 4096 -n 2000 -t 1"));
  EXPECT_GT(Gbps("write_bw -s 4096 -n 2000 -t 4 -q 4"), 2 * Gbps("write_bw -s 4096 -n 2000 -t 4"));
  EXPECT_LT(Typical("write_lat -s 8 -n 50 -I 64"), Typical("write_lat -s 8 -n 50 -I 0"));
  EXPECT_GT(Gbps("write_bw -s 65536 -n 500 -m 4096"), Gbps("write_bw -s 65536 -n 500 -m 1024"));
  EXPECT_GT(Gbps("read_bw -s 4096 -n 2000 -o 16"), 4 * Gbps("read_bw -s 4096 -n 2000 -o 1"));
}

TEST(BenchModel, EveryTestRunsOnEveryProfile) {
  for (const char* prof : {"rxe", "ibta", "cx6-100g", "cx6-dc"}) {
    for (const char* t : {"write_bw", "read_bw", "send_bw", "atomic_bw"}) {
      SessionResult r = RunCmd(std::string(t) + " -s 1024 -n 50 --profile " + prof);
      ASSERT_EQ(r.bw.size(), 1u) << t << " " << prof;
      EXPECT_GT(r.bw[0].gbps, 0) << t << " " << prof;
    }
    for (const char* t : {"write_lat", "read_lat", "send_lat", "atomic_lat"}) {
      SessionResult r = RunCmd(std::string(t) + " -n 20 --profile " + prof);
      ASSERT_EQ(r.lat.size(), 1u) << t << " " << prof;
      EXPECT_GT(r.lat[0].stats.t_min, 0) << t << " " << prof;
    }
  }
  EXPECT_GT(Gbps("send_bw -c UD -s 1024 -n 100"), 0);
  EXPECT_GT(Gbps("write_bw -c UC -s 1024 -n 100"), 0);
}

TEST(BenchModel, AllSizesAndTheDepthSweepFillTheirRows) {
  SessionResult r = RunCmd("write_bw -a -n 5 --sweep-depth 1,8");
  EXPECT_EQ(r.bw.size(), AllSizes().size());
  ASSERT_EQ(r.depth_sweep.size(), 2u);
  EXPECT_LT(r.depth_sweep[0].second.gbps, r.depth_sweep[1].second.gbps);
  EXPECT_NE(SessionSvg(r).find("<svg"), std::string::npos);
}

TEST(BenchModel, SameRunSameSimulatedNumbers) {
  EXPECT_EQ(RunCmd("write_bw -s 4096 -n 300").bw[0].time_ns, RunCmd("write_bw -s 4096 -n 300").bw[0].time_ns);
}

TEST(BenchCli, OutputsAndExitCodes) {
  std::istringstream in;
  std::ostringstream out, err;
  EXPECT_EQ(RunBenchCli({"write_bw", "-n", "10", "--json"}, in, out, err), 0) << err.str();
  EXPECT_NE(out.str().find("\"results\":[{\"bytes\":65536"), std::string::npos) << out.str();
  out.str("");
  EXPECT_EQ(RunBenchCli({"send_lat", "-n", "10", "--csv"}, in, out, err), 0) << err.str();
  EXPECT_EQ(out.str().rfind("test,backend,bytes", 0), 0u) << out.str();
  out.str("");
  EXPECT_EQ(RunBenchCli({"read_lat", "-n", "10"}, in, out, err), 0);
  EXPECT_NE(out.str().find("99.9% percentile"), std::string::npos);
  EXPECT_EQ(RunBenchCli({"write_bw", "--profile", "nope"}, in, out, err), 2);
  EXPECT_EQ(RunBenchCli({"write_bw", "-q", "zero"}, in, out, err), 2);
}

}  // namespace
}  // namespace qptwin::bench
