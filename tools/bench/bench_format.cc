#include "tools/bench/bench_format.h"

#include <cstdio>
#include <ostream>

namespace qptwin::bench {
namespace {

std::string Fmt(const char* f, double v) {
  char b[64];
  std::snprintf(b, sizeof b, f, v);
  return b;
}

std::string Line() { return std::string(87, '-') + "\n"; }

void Header(std::ostream& out, const RunHeader& h) {
  out << Line();
  out << "                    " << h.test << " (qptwin bench)\n";
  out << " Backend          : " << h.backend << " (" << h.clock << " time)\n";
  out << " Connection type  : " << h.conn << "   Number of qps : " << h.qps
      << "   Using events : " << (h.events ? "ON" : "OFF") << "\n";
  out << " TX depth         : " << h.tx_depth << "   Post list : " << h.post_list
      << "   CQ Moderation : " << h.cq_mod << "\n";
  out << " Mtu              : " << h.mtu << "[B]   Max inline data : " << h.inline_size << "[B]\n";
  if (h.threads > 1) out << " Host threads     : " << h.threads << " (simulated, QP i on thread i mod " << h.threads << ")\n";
  out << Line();
}

void Speed(std::ostream& out, const RunHeader& h, const SpeedStats& s) {
  if (h.clock != "simulated") return;
  out << " simulation speed: " << Si(s.wrs_per_wall_s()) << "WR/s, " << Si(s.packets_per_wall_s())
      << "packets/s of wall time (" << Fmt("%.3f", s.wall_s) << " s wall)\n";
}

}  // namespace

std::string Si(double v) {
  if (v >= 1e9) return Fmt("%.2f G", v / 1e9);
  if (v >= 1e6) return Fmt("%.2f M", v / 1e6);
  if (v >= 1e3) return Fmt("%.2f k", v / 1e3);
  return Fmt("%.0f ", v);
}

void PrintBwTable(std::ostream& out, const RunHeader& h, const std::vector<BwResult>& rows) {
  Header(out, h);
  out << " #bytes     #iterations    BW peak[MB/sec]    BW average[MB/sec]   MsgRate[Mpps]   "
         "BW average[Gb/sec]\n";
  for (const BwResult& r : rows) {
    char b[200];
    std::snprintf(b, sizeof b, " %-10llu %-14llu %-18.2f %-20.2f %-15.6f %.2f\n",
                  static_cast<unsigned long long>(r.size), static_cast<unsigned long long>(r.iters),
                  r.mib_per_s, r.mib_per_s, r.mpps, r.gbps);
    out << b;
  }
  out << Line();
  for (const BwResult& r : rows) Speed(out, h, r.speed);
}

void PrintLatTable(std::ostream& out, const RunHeader& h, const std::vector<LatResult>& rows) {
  Header(out, h);
  out << " #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    t_avg[usec]    "
         "t_stdev[usec]   99% percentile[usec]   99.9% percentile[usec]\n";
  for (const LatResult& r : rows) {
    char b[256];
    std::snprintf(b, sizeof b,
                  " %-6llu %-14zu %-14.3f %-12.3f %-18.3f %-14.3f %-15.3f %-22.3f %.3f\n",
                  static_cast<unsigned long long>(r.size), r.stats.samples, r.stats.t_min,
                  r.stats.t_max, r.stats.t_typical, r.stats.t_avg, r.stats.t_stdev, r.stats.p99,
                  r.stats.p999);
    out << b;
  }
  out << Line();
  for (const LatResult& r : rows) Speed(out, h, r.speed);
}

void PrintJson(std::ostream& out, const RunHeader& h, const std::vector<BwResult>& bw,
               const std::vector<LatResult>& lat) {
  out << "{\"test\":\"" << h.test << "\",\"backend\":\"" << h.backend << "\",\"clock\":\""
      << h.clock << "\",\"connection\":\"" << h.conn << "\",\"qps\":" << h.qps
      << ",\"tx_depth\":" << h.tx_depth << ",\"post_list\":" << h.post_list
      << ",\"cq_mod\":" << h.cq_mod << ",\"mtu\":" << h.mtu << ",\"inline\":" << h.inline_size
      << ",\"events\":" << (h.events ? "true" : "false");
  if (h.threads > 1) out << ",\"threads\":" << h.threads;
  out << ",\"results\":[";
  bool first = true;
  for (const BwResult& r : bw) {
    out << (first ? "" : ",") << "{\"bytes\":" << r.size << ",\"iterations\":" << r.iters
        << ",\"time_ns\":" << r.time_ns << ",\"bw_mib_s\":" << Fmt("%.3f", r.mib_per_s)
        << ",\"bw_gb_s\":" << Fmt("%.4f", r.gb_per_s) << ",\"bw_gbps\":" << Fmt("%.4f", r.gbps)
        << ",\"msg_rate_mpps\":" << Fmt("%.6f", r.mpps) << ",\"wall_s\":"
        << Fmt("%.4f", r.speed.wall_s) << ",\"sim_wr_per_wall_s\":"
        << Fmt("%.0f", r.speed.wrs_per_wall_s()) << "}";
    first = false;
  }
  for (const LatResult& r : lat) {
    const LatStats& s = r.stats;
    out << (first ? "" : ",") << "{\"bytes\":" << r.size << ",\"iterations\":" << s.samples
        << ",\"t_min_us\":" << Fmt("%.4f", s.t_min) << ",\"t_max_us\":" << Fmt("%.4f", s.t_max)
        << ",\"t_typical_us\":" << Fmt("%.4f", s.t_typical) << ",\"t_avg_us\":"
        << Fmt("%.4f", s.t_avg) << ",\"t_stdev_us\":" << Fmt("%.4f", s.t_stdev)
        << ",\"p99_us\":" << Fmt("%.4f", s.p99) << ",\"p999_us\":" << Fmt("%.4f", s.p999)
        << ",\"wall_s\":" << Fmt("%.4f", r.speed.wall_s) << "}";
    first = false;
  }
  out << "]}\n";
}

void PrintCsv(std::ostream& out, const RunHeader& h, const std::vector<BwResult>& bw,
              const std::vector<LatResult>& lat) {
  if (!bw.empty()) {
    out << "test,backend,bytes,iterations,time_ns,bw_mib_s,bw_gb_s,bw_gbps,msg_rate_mpps\n";
    for (const BwResult& r : bw) {
      out << h.test << "," << h.backend << "," << r.size << "," << r.iters << "," << r.time_ns
          << "," << Fmt("%.3f", r.mib_per_s) << "," << Fmt("%.4f", r.gb_per_s) << ","
          << Fmt("%.4f", r.gbps) << "," << Fmt("%.6f", r.mpps) << "\n";
    }
  }
  if (!lat.empty()) {
    out << "test,backend,bytes,iterations,t_min_us,t_max_us,t_typical_us,t_avg_us,t_stdev_us,"
           "p99_us,p999_us\n";
    for (const LatResult& r : lat) {
      const LatStats& s = r.stats;
      out << h.test << "," << h.backend << "," << r.size << "," << s.samples << ","
          << Fmt("%.4f", s.t_min) << "," << Fmt("%.4f", s.t_max) << ","
          << Fmt("%.4f", s.t_typical) << "," << Fmt("%.4f", s.t_avg) << ","
          << Fmt("%.4f", s.t_stdev) << "," << Fmt("%.4f", s.p99) << "," << Fmt("%.4f", s.p999)
          << "\n";
    }
  }
}

}  // namespace qptwin::bench
