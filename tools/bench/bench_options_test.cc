#include "tools/bench/bench_options.h"

#include <gtest/gtest.h>

namespace qptwin::bench {
namespace {

BenchOptions Parse(std::vector<std::string> args) {
  BenchOptions o;
  std::string error;
  EXPECT_TRUE(ParseBenchArgs(args, &o, &error)) << error;
  return o;
}

std::string Error(std::vector<std::string> args) {
  BenchOptions o;
  std::string error;
  EXPECT_FALSE(ParseBenchArgs(args, &o, &error));
  return error;
}

TEST(BenchOptions, BandwidthDefaultsArePerftests) {
  BenchOptions o = Parse({"write_bw"});
  EXPECT_EQ(o.op, Op::kWrite);
  EXPECT_EQ(o.kind, Kind::kBw);
  EXPECT_EQ(o.size, 65536u);
  EXPECT_EQ(o.tx_depth, 128);
  EXPECT_EQ(o.cq_mod, 100);
  EXPECT_EQ(o.iters, 5000u);
  EXPECT_EQ(o.backend, "model");
  EXPECT_EQ(o.profile, "cx6-100g");
}

TEST(BenchOptions, LatencyDefaultsAreSmallAndShallow) {
  BenchOptions o = Parse({"send_lat"});
  EXPECT_EQ(o.kind, Kind::kLat);
  EXPECT_EQ(o.size, 2u);
  EXPECT_EQ(o.tx_depth, 1);
  EXPECT_EQ(o.iters, 1000u);
  EXPECT_EQ(Parse({"send_lat", "-s", "64", "-n", "7"}).size, 64u);
}

TEST(BenchOptions, PerftestFlags) {
  BenchOptions o = Parse({"read_bw", "-s", "4096", "-q", "4", "-t", "64", "-l", "8", "-Q", "16",
                          "-n", "100", "-m", "1024", "-I", "0", "-e", "--backend", "hw",
                          "--device", "rxe0", "--json", "--sweep-depth", "1,2,4"});
  EXPECT_EQ(o.op, Op::kRead);
  EXPECT_EQ(o.qps, 4);
  EXPECT_EQ(o.tx_depth, 64);
  EXPECT_EQ(o.post_list, 8);
  EXPECT_EQ(o.cq_mod, 16);
  EXPECT_EQ(o.mtu, 1024u);
  EXPECT_EQ(o.inline_size, 0);
  EXPECT_TRUE(o.events);
  EXPECT_TRUE(o.json);
  EXPECT_EQ(o.backend, "hw");
  EXPECT_EQ(o.device, "rxe0");
  EXPECT_EQ(Parse({"write_bw", "-d", "mlx5_0"}).device, "mlx5_0") << "perftest's -d";
  EXPECT_EQ(Parse({"write_bw", "--ib-dev", "mlx5_0"}).device, "mlx5_0");
  EXPECT_EQ(Parse({"write_bw", "--profile", "cx6-dc"}).profile, "cx6-dc");
  EXPECT_EQ(Parse({"write_bw", "--size=4096"}).size, 4096u);
  EXPECT_EQ(o.depth_sweep, (std::vector<int>{1, 2, 4}));
  EXPECT_EQ(Parse({"atomic_bw", "-s", "64"}).size, 8u) << "atomics move 8 bytes";
  EXPECT_EQ(Parse({"read_bw", "-o", "4"}).outs, 4);
  EXPECT_EQ(Parse({"send_bw", "-c", "UD", "-s", "1024"}).conn, QpType::kUd);
}

TEST(BenchOptions, BadInputNamesTheProblem) {
  EXPECT_NE(Error({}).find("missing TEST"), std::string::npos);
  EXPECT_NE(Error({"ping_bw"}).find("unknown test"), std::string::npos);
  EXPECT_NE(Error({"write_bw", "-m", "1000"}).find("4096"), std::string::npos);
  EXPECT_NE(Error({"write_bw", "-s"}).find("needs a value"), std::string::npos);
  EXPECT_NE(Error({"write_bw", "--bogus"}).find("unknown flag"), std::string::npos);
  EXPECT_NE(Error({"read_bw", "-c", "UD"}).find("UD"), std::string::npos);
  EXPECT_NE(Error({"write_bw", "-t", "4", "-l", "8"}).find("post list"), std::string::npos);
  EXPECT_EQ(Error({"write_bw", "--backend", "fpga"}), "unknown backend 'fpga' (valid: model, hw)");
  EXPECT_NE(Error({"write_bw", "--backend", "hw", "--profile", "cx6-dc"}).find(
                "--profile is for --backend model"),
            std::string::npos);
  EXPECT_EQ(Error({"write_bw", "-s", "0"}), "bad value '0' for -s (1..1073741824 bytes)");
  EXPECT_EQ(Error({"write_bw", "-s", "1", "--size", "2"}), "flag -s given twice");
  EXPECT_NE(Error({"write_bw", "send_bw"}).find("unexpected argument 'send_bw'"),
            std::string::npos);
  EXPECT_EQ(Error({"write_bw", "--backend", "hw", "--vs-systemc"}),
            "--vs-systemc is for --backend model (SystemC runs only the model)");
  EXPECT_TRUE(Parse({"write_bw", "--vs-systemc"}).vs_systemc);
  EXPECT_FALSE(Parse({"write_bw"}).vs_systemc);
}

TEST(BenchOptions, TwoProcessFlags) {
  BenchOptions o = Parse({"write_bw", "--backend", "hw"});
  EXPECT_FALSE(o.two_process()) << "one process unless asked";
  EXPECT_EQ(o.port, 18515) << "perftest's port";
  o = Parse({"write_bw", "--backend", "hw", "-d", "rxe0", "--server"});
  EXPECT_TRUE(o.server);
  EXPECT_TRUE(o.two_process());
  EXPECT_EQ(o.device, "rxe0");
  o = Parse({"send_lat", "--connect", "10.0.0.2", "--port", "20000", "--backend", "hw"});
  EXPECT_FALSE(o.server);
  EXPECT_EQ(o.connect, "10.0.0.2");
  EXPECT_EQ(o.port, 20000);
  EXPECT_EQ(Parse({"read_bw", "--backend", "hw", "--server", "-p", "1234"}).port, 1234);
}

TEST(BenchOptions, TwoProcessFlagsRejectWhatCannotWork) {
  EXPECT_NE(Error({"write_bw", "--server"}).find("--server needs --backend hw"),
            std::string::npos);
  EXPECT_NE(Error({"write_bw", "--backend", "model", "--connect", "h"}).find(
                "--connect needs --backend hw"),
            std::string::npos);
  EXPECT_NE(Error({"write_bw", "--backend", "hw", "--server", "--connect", "h"}).find(
                "exclude each other"),
            std::string::npos);
  EXPECT_NE(Error({"write_bw", "--backend", "hw", "--port", "9"}).find(
                "--port needs --server or --connect"),
            std::string::npos);
  EXPECT_NE(Error({"write_bw", "--backend", "hw", "--server", "-p", "0"}).find("1..65535"),
            std::string::npos);
  EXPECT_NE(Error({"write_bw", "--backend", "hw", "--server", "-p", "70000"}).find("1..65535"),
            std::string::npos);
  EXPECT_NE(Error({"write_bw", "--backend", "hw", "--connect"}).find("needs a value"),
            std::string::npos);
  EXPECT_NE(Error({"write_bw", "--backend", "hw", "--connect", "--server"}).find("host name"),
            std::string::npos);
  EXPECT_NE(Error({"write_bw", "--backend", "hw", "--server", "--sweep-depth", "1,2"}).find(
                "one process only"),
            std::string::npos);
}

TEST(BenchOptions, AllSizesArePowersOfTwoFrom2To8MiB) {
  auto s = AllSizes();
  ASSERT_EQ(s.size(), 23u);
  EXPECT_EQ(s.front(), 2u);
  EXPECT_EQ(s.back(), 8u << 20);
}

}  // namespace
}  // namespace qptwin::bench
