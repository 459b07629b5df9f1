// The measurement loops of `qptwin bench`, perftest style, on any Backend (simulated time on
// the model, the real clock on hw; both through Backend::NowNs).
//
// Contract:
//  1. RunBw: the client keeps up to tx_depth WRs outstanding per QP, posts lists of
//     post_list WRs, signals one WR every cq_mod (and the last), and counts a signaled CQE
//     as all WRs up to it. The server reposts receives (send_bw). Every posted WR is
//     accounted for; an error CQE or errno ends the run with the errno (EIO for a CQE).
//  2. RunLat: write_lat and send_lat are ping-pongs (reported per half round trip, as
//     perftest); read_lat and atomic_lat time post -> CQE (a full round trip).
//  3. Both report wall-clock time and simulated WRs/packets per wall second (model).
//  4. Memory is bounded by the message size, not by size x depth: the buffers are the
//     pair's (BenchPair contract 1) and, on the model, which copies each message's payload
//     while it is in flight, RunBw keeps at most max(1, 256 MiB / (size x QPs)) WRs
//     outstanding per QP (BwResult::depth; it only binds above 2 MiB at -t 128, where one
//     message already keeps the link busy for 170 us at 100 Gb/s). hw keeps -t.
//  5. With -a (all sizes) each finished size prints one progress line to stderr, so a long
//     run shows it is alive; stdout keeps only the table (or JSON/CSV).
//  6. --threads T (model, bandwidth tests): T simulated host threads post in parallel
//     (model/timing.h contract 4), as SMART's or a server's posting threads do. Client QP q
//     is thread q % T's and completes on its own CQ (Endpoint::thread_cqs); each thread
//     posts and polls only its QPs, spins on its CQ when it has nothing to do, and the
//     threads take turns in simulated-time order (the earliest free acts next). The NIC,
//     its caches and the wire are shared. T = 1 is the loop of one thread, unchanged.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tools/bench/bench_options.h"
#include "tools/bench/bench_pair.h"
#include "tools/bench/bench_stats.h"

namespace qptwin::bench {

struct SpeedStats {
  double wall_s = 0;
  double cpu_s = 0;  // the process's CPU time over the same span (RunBw; 0 elsewhere)
  uint64_t wrs = 0;
  uint64_t packets = 0;  // data packets and their responses (ACKs, READ responses)
  double wrs_per_wall_s() const { return wall_s > 0 ? wrs / wall_s : 0; }
  double wrs_per_cpu_s() const { return cpu_s > 0 ? wrs / cpu_s : 0; }
  double packets_per_wall_s() const { return wall_s > 0 ? packets / wall_s : 0; }
};

struct BwResult {
  uint64_t size = 0;
  uint64_t iters = 0;  // WRs completed, all QPs
  uint64_t time_ns = 0;
  double mib_per_s = 0;  // perftest's "BW average[MB/sec]" (2^20 bytes)
  double gb_per_s = 0;   // 10^9 bytes per second
  double gbps = 0;       // 10^9 bits per second
  double mpps = 0;       // MsgRate [Mpps]
  int depth = 0;         // WRs kept outstanding per QP (contract 4)
  SpeedStats speed;
};

struct LatResult {
  uint64_t size = 0;
  LatStats stats;  // us
  SpeedStats speed;
};

// Lets both hosts finish what setup left them (control verbs cost time on the model:
// ControlTiming) so that a measurement starts on idle hosts. A no-op on hw.
void Settle(BenchPair& pair);

// Waits for one CQE on `cq` of `e` by polling, or with a completion event first (events).
// `spin`: a real-time backend (hw) is polled in a tight loop, as perftest does; null (the
// model) waits with WaitForCompletions, which runs simulated time.
[[nodiscard]] int WaitCqe(Endpoint& e, CqHandle cq, bool events, std::vector<WorkCompletion>* got,
                          std::string* error, Backend* spin);
// The `spin` argument of WaitCqe for this pair's backend.
inline Backend* SpinFor(BenchPair& p) {
  return p.backend()->Kind() == "model" ? nullptr : p.backend();
}

// The WRs RunBw keeps outstanding per QP (contract 4): -t, bounded by the send queue and,
// on the model, by the bytes in flight.
int BwDepth(bool model, int tx_depth, uint32_t max_send_wr, uint64_t size, size_t qps);

// Contract 5: "qptwin bench: <test> <size> B done (<wall> s)" on stderr when o.all_sizes.
void ReportProgress(const BenchOptions& o, uint64_t size, double wall_s);

// Packets a message of `size` bytes puts on the wire, its responses included.
uint64_t PacketsPerMessage(Op op, QpType type, uint64_t size, uint32_t mtu);

[[nodiscard]] int RunBw(BenchPair& pair, const BenchOptions& o, uint64_t size, BwResult* out,
                        std::string* error);
[[nodiscard]] int RunLat(BenchPair& pair, const BenchOptions& o, uint64_t size, LatResult* out,
                         std::string* error);

// Two processes (bench_remote.h): RunBw/RunLat run on the client as above, with the server
// endpoint being the peer's shadow (BenchPair contract 2). These are the server process's
// passive halves; its own endpoint is pair.client().
//  PrepareSink: send_bw: fills the receive queues (before the client starts); others: no-op.
//  ServeSink: send_bw: reaps receive CQEs and reposts receives (call it in a loop until the
//    client says done); others: no-op.
//  PrepareEcho: send_lat: posts the receives the ping-pong needs; others: no-op.
//  EchoLat: write_lat/send_lat: answers o.iters pings (the other side of RunLat's
//    ping-pong); read_lat/atomic_lat: no-op.
[[nodiscard]] int PrepareSink(BenchPair& pair, const BenchOptions& o, uint64_t size,
                              std::string* error);
[[nodiscard]] int ServeSink(BenchPair& pair, const BenchOptions& o, uint64_t size,
                            std::string* error);
[[nodiscard]] int PrepareEcho(BenchPair& pair, const BenchOptions& o, uint64_t size,
                              std::string* error);
[[nodiscard]] int EchoLat(BenchPair& pair, const BenchOptions& o, uint64_t size,
                          std::string* error);

}  // namespace qptwin::bench
