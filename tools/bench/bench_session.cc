#include "tools/bench/bench_session.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>

#include "tools/cli/backend_factory.h"
#include "tools/cli/cli_io.h"
#include "tools/bench/bench_pair.h"
#include "tools/bench/bench_svg.h"

namespace qptwin::bench {
namespace {

constexpr uint32_t kDefaultLatInline = 220;  // perftest's default for small lat messages

}  // namespace

PairConfig ConfigFor(const BenchOptions& o, uint64_t max_size, int depth) {
  PairConfig c;
  c.type = o.conn;
  c.qps = o.qps;
  c.send_depth = static_cast<uint32_t>(std::max(depth, o.kind == Kind::kLat ? 16 : 1));
  c.recv_depth = o.kind == Kind::kLat ? 64 : 512;
  // Every WR of every QP could complete at once (BenchPair::Open caps it at max_cqe).
  c.cq_depth = static_cast<int>(std::min<uint64_t>(
      1 << 30, (uint64_t{c.send_depth} + c.recv_depth) * static_cast<uint64_t>(o.qps) + 64));
  c.buf_len = 2 * std::max<uint64_t>(max_size, 64) + 4096;
  c.buf_len = std::max<uint64_t>(c.buf_len, o.mr_size);  // --mr-size (bench_sweep.h)
  if (o.mr_size) c.max_msg = max_size;  // a large region, not a large message
  c.inline_size = o.inline_size >= 0 ? static_cast<uint32_t>(o.inline_size)
                                     : (o.kind == Kind::kLat ? kDefaultLatInline : 0);
  c.mtu = o.mtu;
  c.events = o.events;
  c.outs = o.outs;
  c.threads = o.threads;
  return c;
}

std::vector<uint64_t> SizesOf(const BenchOptions& o, uint32_t mtu) {
  std::vector<uint64_t> sizes = o.all_sizes ? AllSizes() : std::vector<uint64_t>{o.size};
  if (o.op == Op::kAtomic) sizes = {8};
  if (o.conn == QpType::kUd) {
    sizes.erase(std::remove_if(sizes.begin(), sizes.end(), [&](uint64_t s) { return s > mtu; }),
                sizes.end());
  }
  return sizes;
}

uint64_t MaxSizeOf(const BenchOptions& o) {
  return o.all_sizes ? AllSizes().back() : std::max<uint64_t>(o.size, 8);
}

std::unique_ptr<Backend> MakeBenchBackend(const BenchOptions& o, std::string* error) {
  // Two model devices: the client on mdev0, the server on mdev1.
  cli::BackendSpec spec{o.backend, o.profile, o.device, 2};
  spec.context_cache = o.cache;
  return cli::MakeBackend(spec, error);
}

int RunSession(const BenchOptions& o, SessionResult* out, std::string* error) {
  std::unique_ptr<Backend> be = MakeBenchBackend(o, error);
  if (!be) return ENODEV;
  int max_depth = o.tx_depth;
  for (int d : o.depth_sweep) max_depth = std::max(max_depth, d);
  const uint64_t max_size = MaxSizeOf(o);
  BenchPair pair(be.get());
  std::string what;
  out->memory.before_setup = CurrentRssBytes();
  out->memory.heap_before_setup = HeapInUseBytes();
  if (int rc = pair.Setup(ConfigFor(o, max_size, max_depth), o.device, &what)) {
    *error = "setup failed at '" + what + "': " + cli::ErrnoText(rc);
    return rc;
  }
  out->memory.after_setup = CurrentRssBytes();
  out->memory.heap_after_setup = HeapInUseBytes();
  out->memory.qps = 2 * static_cast<uint64_t>(o.qps);
  RunHeader& h = out->header;
  h.test = o.test;
  h.backend = be->Kind() == "model" ? "model/" + o.profile : "hw/" + pair.client().dev->Name();
  h.clock = be->Kind() == "model" ? "simulated" : "real";
  h.conn = std::string(ToName(o.conn));
  h.qps = o.qps;
  h.tx_depth = o.tx_depth;
  h.post_list = o.post_list;
  h.cq_mod = o.cq_mod;
  h.mtu = pair.path_mtu_bytes();
  h.inline_size = pair.client().max_inline;
  h.events = o.events;
  h.threads = o.threads;
  if (o.vs_systemc) {  // a short warm-up first (the processes' first runs)
    (void)model::MeasureSystemCRates(kSystemCActivations / 10);
    out->systemc_before = model::MeasureSystemCRates(kSystemCActivations);
  }
  for (uint64_t size : SizesOf(o, pair.path_mtu_bytes())) {
    if (o.kind == Kind::kBw) {
      BwResult r;
      if (int rc = RunBw(pair, o, size, &r, error)) return rc;
      out->bw.push_back(r);
    } else {
      LatResult r;
      if (int rc = RunLat(pair, o, size, &r, error)) return rc;
      out->lat.push_back(r);
    }
  }
  if (o.vs_systemc) out->systemc_after = model::MeasureSystemCRates(kSystemCActivations);
  out->memory.peak = PeakRssBytes();
  const uint64_t depth = out->bw.empty() ? 1 : static_cast<uint64_t>(out->bw[0].depth);
  out->memory.outstanding = static_cast<uint64_t>(o.qps) * depth;
  for (int dev = 0; dev < 2; ++dev) {
    for (const model::CacheCounter& k : model::ModelCacheCounters(be.get(), dev)) {
      auto it = std::find_if(out->cache.begin(), out->cache.end(),
                             [&](const model::CacheCounter& c) { return c.kind == k.kind; });
      if (it == out->cache.end()) {
        out->cache.push_back(k);
      } else {
        it->hits += k.hits;
        it->misses += k.misses;
      }
    }
  }
  if (o.kind == Kind::kBw) {
    for (int d : o.depth_sweep) {
      BenchOptions od = o;
      od.tx_depth = d;
      od.post_list = std::min(o.post_list, d);
      od.cq_mod = std::min(o.cq_mod, d);
      BwResult r;
      if (int rc = RunBw(pair, od, o.size, &r, error)) return rc;
      out->depth_sweep.emplace_back(d, r);
    }
  }
  return 0;
}

std::string FormatVsSystemC(const SessionResult& r) {
  SpeedStats all;
  for (const BwResult& b : r.bw) {
    all.wrs += b.speed.wrs;
    all.wall_s += b.speed.wall_s;
    all.cpu_s += b.speed.cpu_s;
  }
  for (const LatResult& l : r.lat) {
    all.wrs += l.speed.wrs;
    all.wall_s += l.speed.wall_s;
    all.cpu_s += l.speed.cpu_s;
  }
  const model::SystemCRates& a = r.systemc_before;
  const model::SystemCRates& b = r.systemc_after;
  const auto ratio = [](double wrs, double per_s) {
    if (wrs <= 0 || per_s <= 0) return std::string("-");
    char f[32];
    std::snprintf(f, sizeof f, "%.3f", wrs / per_s);
    return std::string(f);
  };
  const double wall = all.wrs_per_wall_s(), cpu = all.wrs_per_cpu_s();
  std::string s = " SystemC's raw activations here, " + std::to_string(kSystemCActivations) +
                  " each, before / after the run (wall):\n   SC_METHOD " + Si(a.method_per_s) +
                  "/s / " + Si(b.method_per_s) + "/s, SC_THREAD " + Si(a.thread_per_s) +
                  "/s / " + Si(b.thread_per_s) + "/s\n";
  s += " speed ratio (WR/s over the raw rates' means): wall " + Si(wall) + "WR/s: " +
       ratio(wall, (a.thread_per_s + b.thread_per_s) / 2) + " of SC_THREAD's, " +
       ratio(wall, (a.method_per_s + b.method_per_s) / 2) + " of SC_METHOD's";
  if (cpu > 0) {
    s += "; CPU " + Si(cpu) + "WR/s: " +
         ratio(cpu, (a.thread_per_cpu_s + b.thread_per_cpu_s) / 2) + ", " +
         ratio(cpu, (a.method_per_cpu_s + b.method_per_cpu_s) / 2);
  }
  return s + "\n";
}

std::string SessionSvg(const SessionResult& r) {
  Chart c;
  const std::string where = r.header.test + " on " + r.header.backend;
  if (!r.depth_sweep.empty()) {
    c.title = where + ": bandwidth vs tx depth";
    c.x_label = "tx depth (WRs outstanding)";
    c.y_label = "Gb/s";
    c.log_x = true;
    Series s{"BW average", {}};
    for (const auto& [d, b] : r.depth_sweep) s.points.emplace_back(d, b.gbps);
    c.series.push_back(s);
  } else if (!r.bw.empty()) {
    c.title = where + ": bandwidth vs message size";
    c.x_label = "message size (bytes)";
    c.y_label = "Gb/s";
    c.log_x = true;
    Series s{"BW average", {}};
    for (const BwResult& b : r.bw) s.points.emplace_back(static_cast<double>(b.size), b.gbps);
    c.series.push_back(s);
  } else {
    c.title = where + ": latency percentiles";
    c.x_label = "message size (bytes)";
    c.y_label = "usec";
    c.log_x = true;
    Series mn{"t_min", {}}, med{"t_typical", {}}, p99{"99%", {}}, p999{"99.9%", {}};
    for (const LatResult& l : r.lat) {
      double x = static_cast<double>(l.size);
      mn.points.emplace_back(x, l.stats.t_min);
      med.points.emplace_back(x, l.stats.t_typical);
      p99.points.emplace_back(x, l.stats.p99);
      p999.points.emplace_back(x, l.stats.p999);
    }
    c.series = {mn, med, p99, p999};
  }
  return RenderSvg(c);
}

}  // namespace qptwin::bench
