// The options of `qptwin bench`, with perftest's flag names and defaults.
//
// Contract:
//  1. ParseBenchArgs() never throws: it returns false with one line in *error naming the
//     bad flag or value (and the valid choices).
//  2. Defaults follow perftest: bw tests -s 65536 -t 128 -Q 100 -n 5000; lat tests -s 2
//     -t 1 -n 1000; inline up to the device's limit (220 B) for lat tests, 0 for bw tests.
//     A value given on the command line always wins.
//  3. --server / --connect HOST (two processes, bench_remote.h) need --backend hw, exclude
//     each other and --sweep-depth; --port needs one of them.
//  4. Parsed by the CLI's one parser (tools/cli/flags.h): long names are aliases of the
//     short ones, each flag at most once; --backend/--profile/--device (-d, --ib-dev) as in
//     every subcommand (tools/cli/backend_factory.h: --profile is for the model only).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "spec/vocabulary.h"

namespace qptwin::bench {

enum class Op : uint8_t { kWrite, kRead, kSend, kAtomic };
enum class Kind : uint8_t { kBw, kLat };

// -q: QPs per side. The model's cost per WR does not grow with them (issue 15); memory is
// about 3 KiB per QP pair (bench prints the measured figure).
inline constexpr int kMaxBenchQps = 65536;

// --threads: simulated host threads (bench_run.h contract 6; model/engine/nic.h's limit).
inline constexpr int kMaxBenchThreads = 4096;

struct BenchOptions {
  std::string test = "write_bw";  // write_bw read_bw send_bw atomic_bw, *_lat
  Op op = Op::kWrite;
  Kind kind = Kind::kBw;
  uint64_t size = 65536;      // -s
  bool all_sizes = false;     // -a: 2 B .. 8 MiB
  int qps = 1;                // -q
  int tx_depth = 128;         // -t
  int post_list = 1;          // -l
  int cq_mod = 100;           // -Q: one signaled WR every cq_mod
  uint64_t iters = 5000;      // -n
  uint32_t mtu = 0;           // -m (bytes); 0 = the port's active MTU
  QpType conn = QpType::kRc;  // -c RC|UC|UD
  int inline_size = -1;       // -I; -1 = the test's default
  bool events = false;        // -e
  int outs = 0;               // -o: outstanding READ/ATOMICs (max_rd_atomic); 0 = device max
  int threads = 1;            // --threads: simulated host threads posting (model)
  std::string backend = "model";
  std::string profile = "cx6-100g";
  std::string device;         // -d/--device: the client's device ("" = the default)
  bool json = false;
  bool csv = false;
  std::string plot;           // --plot FILE.svg
  std::vector<int> depth_sweep;  // --sweep-depth 1,2,4,...: bandwidth vs tx depth
  // The NIC context caches (bench_sweep.h): --sweep-qps Q1,Q2,... (throughput vs QPs),
  // --sweep-mr-size B1,B2,... (vs registered memory touched at random; K/M/G suffixes),
  // --mr-size B (one such run), --cache on|off (the model profile's caches).
  std::vector<uint64_t> qps_sweep;
  std::vector<uint64_t> mr_sweep;
  uint64_t mr_size = 0;  // 0: perftest's buffers, every WR at offset 0
  bool cache = true;
  // --vs-systemc (model): SystemC's raw process-activation rates measured in this process
  // before and after the run (model::MeasureSystemCRates), and the simulation speed's
  // ratio to them.
  bool vs_systemc = false;
  uint64_t lat_poll_ns = 1;   // model write_lat: memory polling step
  bool server = false;        // --server: wait for a --connect peer (two processes)
  std::string connect;        // --connect HOST: the --server peer's host
  int port = 18515;           // -p/--port: the out-of-band TCP port (perftest's default)
  bool two_process() const { return server || !connect.empty(); }
};

// args exclude the program and subcommand names.
bool ParseBenchArgs(const std::vector<std::string>& args, BenchOptions* out, std::string* error);
std::string BenchUsage();

// The sizes -a runs: 2, 4, ..., 8 MiB.
std::vector<uint64_t> AllSizes();

}  // namespace qptwin::bench
