// `qptwin bench --backend hw --server` / `--connect HOST`: the two endpoints in two processes
// (or on two hosts), their connection data exchanged over TCP (oob.h), as perftest does.
//
// Protocol (after the TCP connect, every line an oob message):
//   client -> params (TEST, -s/-a, -n, -q, -t, -c, -m); server -> params_ok, or error naming
//   the first differing option (both exit 2).
//   Both open the device and create PD, MR, CQs and QPs as BenchPair does for one side.
//   client -> one qp per QP; server -> one qp per QP; both bring their QPs to RTS against
//   the peer's and send rts, then wait for the peer's rts.
//   Per size: client -> start size=N; the server prepares its passive side (send tests:
//   receives) and answers go; the client measures (RunBw/RunLat, the server endpoint being
//   the peer's shadow) while the server serves (send_bw: reaps and reposts receives;
//   send_lat/write_lat: echoes; others: nothing); client -> done; server -> done.
//   client -> end. Any failure is sent to the peer as an error line before exiting.
//
// Contract:
//  1. Returns the process exit code: 0; 2 for a usage problem (options differ from the
//     peer's, not --backend hw, -s beyond the port's max_msg_sz, no device: that one at
//     once, before listening or connecting); 1 for anything else (connection, setup, a
//     run); *error then holds one line.
//  2. The client fills *out as RunSession does, for the same printing code; the server
//     prints progress lines to `log` and leaves *out empty.
#pragma once

#include <iosfwd>
#include <string>

#include "tools/bench/bench_options.h"
#include "tools/bench/bench_session.h"

namespace qptwin::bench {

[[nodiscard]] int RunTwoProcess(const BenchOptions& o, SessionResult* out, std::ostream& log,
                                std::string* error);

}  // namespace qptwin::bench
