#include <cstdio>
#include <fstream>
#include <ostream>
#include <sstream>

#include "model/profile.h"
#include "model/wire.h"
#include "tools/bench/bench_pair.h"
#include "tools/bench/bench_report_parts.h"
#include "tools/bench/bench_svg.h"

namespace qptwin::bench {
namespace {

std::string F(const char* fmt, double v) {
  char b[64];
  std::snprintf(b, sizeof b, fmt, v);
  return b;
}

// The analytic half round trip of an 8-byte inline ping-pong (write_lat or send_lat) on
// profile p, by component (ns).
struct Breakdown {
  double host = 0, pcie = 0, nic = 0, wire = 0, sw = 0;
  double Sum() const { return host + pcie + nic + wire + sw; }
};

Breakdown HalfRoundTrip(const model::Profile& p, bool send) {
  const model::Timing& t = p.timing;
  Breakdown b;
  double post = static_cast<double>(t.host.post_call_ns + t.host.post_wr_ns);
  // send_lat: per round trip the server polls, reposts a receive and posts; the client
  // polls (its own repost falls outside the timed window, as in perftest's loop).
  b.host = send ? 1.5 * post + t.host.poll_cqe_ns : post;
  b.pcie = t.nic.doorbell_ns + (send ? t.nic.cqe_ns : 0);  // inline: no WQE or payload fetch
  b.nic = t.nic.tx_latency_ns + t.nic.rx_latency_ns;
  double hops = t.link.switch_hops;
  uint32_t bytes = model::PacketWireBytes(t.link.format,
                                          send ? model::WireOp::kSend : model::WireOp::kWrite,
                                          model::PacketPos::kOnly, false, false, 8);
  b.wire = model::SerializationPs(t.link.gbps, bytes) / 1000.0 + t.link.propagation_ns * (hops + 1);
  b.sw = hops * t.link.switch_ns;
  return b;
}

double Metric(const SessionResult& r, const std::string& unit) {
  if (!r.lat.empty()) return r.lat[0].stats.t_typical;
  if (r.bw.empty()) return 0;
  if (unit == "Mpps") return r.bw[0].mpps;
  return r.bw[0].gbps;
}

void Row(ReportCtx& c, const std::string& what, const std::string& before,
         const std::string& after, const std::string& unit) {
  SessionResult a, b;
  if (!c.Run(before, &a) || !c.Run(after, &b)) return;
  double x = Metric(a, unit), y = Metric(b, unit);
  c.out << "| " << what << " | `" << before << "` | `" << after << "` | " << F("%.3f", x) << " "
        << unit << " | " << F("%.3f", y) << " " << unit << " | "
        << (x > 0 ? F("%+.1f%%", (y - x) / x * 100) : std::string("-")) << " |\n";
}

// Time to the first completed 8-byte WRITE on a new connection: with a warm (already
// connected) QP vs creating and connecting one on demand (ControlTiming costs).
void WarmPool(ReportCtx& c) {
  BenchOptions o;
  o.profile = "cx6-100g";
  std::string error;
  auto be = MakeBenchBackend(o, &error);
  if (!be) return;
  BenchPair pair(be.get());
  PairConfig cfg;
  cfg.qps = 1;
  cfg.inline_size = 64;
  std::string what;
  if (pair.Setup(cfg, "", &what) != 0) return;
  auto first_write = [&](size_t q, uint64_t* ns) {
    Endpoint& cl = pair.client();
    SendWr w;
    w.opcode = WrOpcode::kRdmaWrite;
    w.send_flags = send_flag::kSignaled | send_flag::kInline;
    w.sg_list.push_back(Sge{reinterpret_cast<uint64_t>(cl.buf), 8, cl.lkey});
    w.remote_addr = reinterpret_cast<uint64_t>(pair.server().buf);
    w.rkey = pair.server().rkey;
    size_t bad = 0;
    std::vector<WorkCompletion> wc;
    uint64_t t0 = *ns;
    if (cl.dev->PostSend(cl.qps[q], {w}, &bad) != 0 ||
        cl.dev->WaitForCompletions(cl.scq, 1, 1'000'000'000, &wc) != 0) {
      return false;
    }
    *ns = be->NowNs() - t0;
    return true;
  };
  Settle(pair);
  uint64_t warm = be->NowNs();
  if (!first_write(0, &warm)) return;
  Settle(pair);
  uint64_t cold = be->NowNs();
  uint64_t t0 = cold;
  if (pair.AddConnectedQp(&what) != 0) return;
  Settle(pair);  // both hosts finished their control verbs (in parallel)
  uint64_t setup = be->NowNs() - t0;
  if (!first_write(1, &cold)) return;
  const model::ControlTiming& ct = model::FindProfile("cx6-100g")->timing.control;
  c.out << "\n**Warm QP pool vs create-on-demand** (cx6-100g; time from \"I need a connection\" "
           "to the first 8-byte WRITE's CQE):\n\n"
        << "| path | us |\n|---|---|\n"
        << "| warm: a QP already in RTS (what a examples/practice QpPool hit hands out) | "
        << F("%.3f", warm / 1e3) << " |\n"
        << "| on demand: create QP + RESET->INIT->RTR->RTS on both sides, then the WRITE | "
        << F("%.3f", cold / 1e3) << " (of which control verbs " << F("%.3f", setup / 1e3)
        << ") |\n\n"
        << "With the profile's control-path estimates (create_qp " << ct.create_qp_ns / 1000
        << " us, modify_qp " << ct.modify_qp_ns / 1000 << " us per call; both sides in "
        << "parallel, the out-of-band exchange of QP numbers not counted) a warm QP cuts the "
           "time to the first completion by "
        << F("%.1f", 100.0 * (1.0 - static_cast<double>(warm) / cold))
        << "%. The seed's \"23% lower end-to-end latency\" is an average over a workload in "
           "which only some requests need a new connection; the model gives the per-request "
           "figures, from which that average follows for a given miss rate (here a miss rate "
           "of "
        << F("%.3f", 100.0 * 0.23 * warm / (0.77 * static_cast<double>(cold - warm)))
        << "% would give 23%: cold/warm = " << F("%.0f", static_cast<double>(cold) / warm)
        << "x).\n\n";
}

}  // namespace

void LatencySection(ReportCtx& c) {
  std::ostream& out = c.out;
  out << "## 2. Latency of 8-byte RC SEND and WRITE, with a breakdown\n\n"
      << "Ping-pong as perftest (`write_lat` polls the last byte of the buffer, `send_lat` "
         "polls the receive CQ), inline data (BlueFlame: no WQE or payload fetch), reported "
         "per half round trip. The model has no jitter, so min = typical = max; the "
         "percentile columns are printed by `qptwin bench` all the same.\n\n"
      << "| profile | test | measured t_typical us | host | PCIe | NIC | wire | switch | "
         "sum us | expected range |\n|---|---|---|---|---|---|---|---|---|---|\n";
  for (const char* prof : {"cx6-100g", "cx6-dc"}) {
    const model::Profile* p = model::FindProfile(prof);
    for (bool send : {false, true}) {
      SessionResult r;
      std::string cmd = std::string(send ? "send_lat" : "write_lat") + " -s 8 -n 1000 --profile " + prof;
      if (!c.Run(cmd, &r)) return;
      Breakdown b = HalfRoundTrip(*p, send);
      bool dc = p->timing.link.switch_hops > 0;
      out << "| " << prof << " | " << (send ? "send_lat" : "write_lat") << " | "
          << F("%.3f", r.lat[0].stats.t_typical) << " | " << F("%.3f", b.host / 1e3) << " | "
          << F("%.3f", b.pcie / 1e3) << " | " << F("%.3f", b.nic / 1e3) << " | "
          << F("%.3f", b.wire / 1e3) << " | " << F("%.3f", b.sw / 1e3) << " | "
          << F("%.3f", b.Sum() / 1e3) << " | "
          << (dc ? "3-5 us (seed)" : "0.8-1.3 us (ConnectX-6 RoCE ib_*_lat, estimate)") << " |\n";
    }
  }
  out << "\nComponents (ns from the profile, model/profile_cx6.cc): host = post call + WR "
         "(send_lat: per half round trip also half a receive repost and one CQE poll); PCIe = doorbell MMIO (+ the CQE "
         "write for send_lat); NIC = tx pipeline + rx pipeline incl. the DMA write of the data; "
         "wire = serialization of one 106-byte (WRITE) / 90-byte (SEND) frame at 100 Gb/s + "
         "cable propagation; switch = hops x port-to-port latency. The measured value equals "
         "the sum up to the 1 ns polling step: the breakdown is the model's own arithmetic.\n\n";
  out << "One-sided round trips (post -> CQE, not halved, as perftest):\n\n"
      << "| profile | read_lat 8 B us | atomic_lat us | write_lat 8 B without inline (-I 0) us |\n"
      << "|---|---|---|---|\n";
  for (const char* prof : {"cx6-100g", "cx6-dc"}) {
    SessionResult rd, at, ni;
    std::string p = std::string(" --profile ") + prof;
    if (!c.Run("read_lat -s 8 -n 200" + p, &rd) || !c.Run("atomic_lat -n 200" + p, &at) ||
        !c.Run("write_lat -s 8 -I 0 -n 200" + p, &ni)) {
      return;
    }
    out << "| " << prof << " | " << F("%.3f", rd.lat[0].stats.t_typical) << " | "
        << F("%.3f", at.lat[0].stats.t_typical) << " | " << F("%.3f", ni.lat[0].stats.t_typical)
        << " |\n";
  }
  out << "\n";
}

void OptimisationSection(ReportCtx& c) {
  c.out << "## 3. The seed's optimisations as measured effects (cx6-100g)\n\n"
        << "| optimisation | before | after | before | after | change |\n"
        << "|---|---|---|---|---|---|\n";
  Row(c, "batch posting (post list)", "write_bw -s 8 -n 200000 -l 1", "write_bw -s 8 -n 200000 -l 32", "Mpps");
  Row(c, "selective signaling", "write_bw -s 8 -n 200000 -Q 1", "write_bw -s 8 -n 200000 -Q 100", "Mpps");
  Row(c, "CQ polling instead of events (latency)", "send_lat -s 8 -n 500 -e", "send_lat -s 8 -n 500", "us");
  Row(c, "CQ polling instead of events (rate)", "write_bw -s 8 -n 200000 -e", "write_bw -s 8 -n 200000", "Mpps");
  Row(c, "deeper send queue", "write_bw -s 4096 -n 5000 -t 1", "write_bw -s 4096 -n 5000 -t 128", "Gb/s");
  Row(c, "more QPs at a shallow depth", "write_bw -s 4096 -n 5000 -t 4 -q 1", "write_bw -s 4096 -n 5000 -t 4 -q 4", "Gb/s");
  Row(c, "inline small messages (latency)", "write_lat -s 8 -n 500 -I 0", "write_lat -s 8 -n 500 -I 64", "us");
  Row(c, "inline small messages (rate, post list 32)", "write_bw -s 64 -n 200000 -l 32 -I 0", "write_bw -s 64 -n 200000 -l 32 -I 64", "Mpps");
  Row(c, "more outstanding READs (max_rd_atomic)", "read_bw -s 4096 -n 5000 -o 1", "read_bw -s 4096 -n 5000 -o 16", "Gb/s");
  Row(c, "path MTU 1024 -> 4096", "write_bw -s 65536 -n 3000 -m 1024", "write_bw -s 65536 -n 3000 -m 4096", "Gb/s");
  c.out << "\nLatency rows: lower is better (t_typical). Why each moves: a post list shares one "
           "doorbell and one WQE fetch among its WRs (host post_call_ns once per call); -Q 100 "
           "leaves the host 1 CQE to consume per 100 WRs; an event costs cqe_ns + "
           "event_wakeup_ns before the thread runs; one QP at depth d has at most d messages in "
           "flight (bandwidth <= d x size / round trip); inline data needs neither the WQE "
           "fetch (BlueFlame) nor the payload DMA read (two PCIe round trips); a READ waits for "
           "its response, so max_rd_atomic READs per round trip is the ceiling; MTU 4096 "
           "carries 4x fewer packet headers.\n\n"
        << "**Queue depth sweep** (write_bw 4 KiB, 1 QP; the memory column is the send queue "
           "alone, 64-byte WQEs): too shallow waits a round trip per few messages, deeper than "
           "the bandwidth-delay product buys nothing but memory.\n\n"
        << "| tx depth | Gb/s | Mpps | SQ memory per QP |\n|---|---|---|---|\n";
  SessionResult r;
  if (c.Run("write_bw -s 4096 -n 3000 -t 256 --sweep-depth 1,2,4,8,16,32,64,128,256", &r)) {
    for (const auto& [d, b] : r.depth_sweep) {
      c.out << "| " << d << " | " << F("%.2f", b.gbps) << " | " << F("%.3f", b.mpps) << " | "
            << d * 64 << " B |\n";
    }
    c.Svg("bw_vs_depth.svg", SessionSvg(r));
  }
  WarmPool(c);
}

void ChartsSection(ReportCtx& c) {
  c.out << "## 4. Charts\n\n";
  SessionResult bw, lat;
  if (c.Run("write_bw -a -n 300 --profile cx6-100g", &bw)) {
    c.Svg("bw_vs_size.svg", SessionSvg(bw));
    c.out << "![bandwidth vs size](bw_vs_size.svg) ![bandwidth vs tx depth](bw_vs_depth.svg)"
             " ![latency](lat_vs_size.svg)\n\n"
          << "write_bw -a (cx6-100g, -n 300): ";
    for (const BwResult& b : bw.bw) {
      if (b.size == 64 || b.size == 1024 || b.size == 4096 || b.size == 65536 ||
          b.size == (8u << 20)) {
        c.out << b.size << " B: " << F("%.2f", b.gbps) << " Gb/s; ";
      }
    }
    c.out << "\n\n";
  }
  if (c.Run("send_lat -a -n 50 --profile cx6-100g", &lat)) c.Svg("lat_vs_size.svg", SessionSvg(lat));
}

void HwSection(ReportCtx& c) {
  c.out << "## 6. hw backend vs perftest on rxe\n\n";
  std::ifstream f(c.dir.empty() ? std::string() : c.dir + "/hw_vs_perftest.md");
  if (f) {
    std::stringstream ss;
    ss << f.rdbuf();
    c.out << ss.str() << "\n"
          << "Reading it: the bandwidth runs compare the data path (the link of rxe is the "
             "limit for both tools). The latency runs also compare per-call overhead. On hw, "
             "qptwin's ping-pong runs each end in its own thread, as perftest runs client and "
             "server as two processes: rxe does the protocol work inside the sender's "
             "ibv_post_send, so with one thread serving both ends (the first version) the "
             "reply waited for that whole call and the ratio was 1.4-1.5. What is left is "
             "qptwin's conversion of each SendWr/RecvWr into an ibv_*_wr chain behind "
             "spec/backend.h and the backend's handle lookups, magnified by TCG emulation, "
             "plus run-to-run scatter of several percent (compare the rounds). The "
             "two-process rows run qptwin exactly as perftest runs (`--server` / `--connect "
             "127.0.0.1`, QP data exchanged over TCP).\n\n";
  } else {
    c.out << "Not measured in this run: `tools/bench/hw-compare` (inside the rxe VM) writes "
             "docs/bench/hw_vs_perftest.md, which this section then includes.\n\n";
  }
}

void LimitsSection(ReportCtx& c) {
  c.out << "## 7. What the timing model does not do\n\n"
        << "- Messages move as one object: per-packet wire time and headers are exact, but a "
           "message is delivered (and lost) whole; no interleaving of two QPs' packets on the "
           "wire within a message.\n"
        << "- ACK coalescing is per message: the responder sends one ACK for a whole "
           "multi-packet message (IBTA allows it), never one ACK for several messages. No "
           "congestion control (DCQCN/ECN/PFC), no switch queueing, no PCIe credits. NIC "
           "context caches (QPC, MPT, MTT, WQE) are modelled on the cx6 profiles (section 8), "
           "with estimated capacities; CQ-context and receive-WQE misses are not.\n"
        << "- The host is one thread per device with fixed costs; no CPU frequency, caches or "
           "interrupt moderation. Latency has no jitter (percentiles equal the median).\n"
        << "- cx6 numbers are sourced where a public figure exists and marked estimates "
           "otherwise (model/profile_cx6.cc); rxe timing is not claimed.\n";
}

}  // namespace qptwin::bench
