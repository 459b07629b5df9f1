#include "tools/bench/bench_sweep.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <ostream>

#include "tools/bench/bench_session.h"
#include "tools/cli/cli_io.h"
#include "tools/cli/commands.h"
#include "tools/cli/escape.h"

namespace qptwin::bench {
namespace {

constexpr uint64_t kMaxSweepQps = 65536;
constexpr uint64_t kMaxRegion = uint64_t{1} << 40;  // 1 TiB of (lazily mapped) memory
constexpr const char* kKinds[] = {"QPC", "MPT", "MTT", "WQE"};

bool ParseScaled(std::string s, uint64_t* out) {
  uint64_t scale = 1;
  if (!s.empty()) {
    const char c = s.back();
    if (c == 'K' || c == 'k') scale = uint64_t{1} << 10;
    if (c == 'M' || c == 'm') scale = uint64_t{1} << 20;
    if (c == 'G' || c == 'g') scale = uint64_t{1} << 30;
    if (scale != 1) s.pop_back();
  }
  if (s.empty() || s.size() > 12 || s.find_first_not_of("0123456789") != std::string::npos) {
    return false;
  }
  *out = std::stoull(s) * scale;
  return true;
}

std::string Percent(double rate) {
  if (rate < 0) return "-";
  char b[32];
  std::snprintf(b, sizeof b, "%.1f%%", 100.0 * rate);
  return b;
}

std::string Fixed(const char* fmt, double v) {
  char b[64];
  std::snprintf(b, sizeof b, fmt, v);
  return b;
}

}  // namespace

bool ParseSweepList(const std::string& v, uint64_t min, uint64_t max,
                    std::vector<uint64_t>* out) {
  out->clear();
  size_t pos = 0;
  for (;;) {
    const size_t comma = v.find(',', pos);
    uint64_t x = 0;
    if (!ParseScaled(v.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos),
                     &x) ||
        x < min || x > max || out->size() >= 64) {
      out->clear();
      return false;
    }
    out->push_back(x);
    if (comma == std::string::npos) return true;
    pos = comma + 1;
  }
}

bool ParseCacheFlags(const cli::Flags& flags, BenchOptions* o, std::string* error) {
  auto bad = [&](const char* flag, const std::string& what) {
    *error = "bad value '" + cli::EscapeControl(flags.Get(flag)) + "' for " + flag + " (" + what +
             ")";
    return false;
  };
  if (flags.Has("--sweep-qps") &&
      !ParseSweepList(flags.Get("--sweep-qps"), 1, kMaxSweepQps, &o->qps_sweep)) {
    return bad("--sweep-qps", "comma-separated QP counts 1..65536");
  }
  if (flags.Has("--sweep-mr-size") &&
      !ParseSweepList(flags.Get("--sweep-mr-size"), 4096, kMaxRegion, &o->mr_sweep)) {
    return bad("--sweep-mr-size", "comma-separated sizes 4K..1024G, K/M/G suffixes");
  }
  if (flags.Has("--mr-size")) {
    std::vector<uint64_t> one;
    if (!ParseSweepList(flags.Get("--mr-size"), 4096, kMaxRegion, &one) || one.size() != 1) {
      return bad("--mr-size", "one size 4K..1024G, K/M/G suffixes");
    }
    o->mr_size = one[0];
  }
  if (flags.Has("--cache")) {
    const std::string v = flags.Get("--cache");
    if (v != "on" && v != "off") return bad("--cache", "on or off");
    o->cache = v == "on";
  }
  const bool sweep = !o->qps_sweep.empty() || !o->mr_sweep.empty();
  if (!o->qps_sweep.empty() && (!o->mr_sweep.empty() || o->mr_size)) {
    *error = "--sweep-qps excludes --sweep-mr-size and --mr-size (one axis per sweep)";
    return false;
  }
  if (!o->mr_sweep.empty() && o->mr_size) {
    *error = "--sweep-mr-size and --mr-size exclude each other";
    return false;
  }
  if (sweep && (!o->depth_sweep.empty() || o->all_sizes)) {
    *error = "--sweep-qps/--sweep-mr-size run one size and depth (not with --sweep-depth or -a)";
    return false;
  }
  if (flags.Has("--cache") && o->backend != "model") {
    *error = "--cache is for --backend model (a device's caches cannot be switched off)";
    return false;
  }
  return true;
}

uint64_t SweepItersPerQp(const BenchOptions& o, uint64_t qps) {
  const uint64_t share = (o.iters + qps - 1) / std::max<uint64_t>(1, qps);
  return std::max<uint64_t>(share, 2 * static_cast<uint64_t>(std::max(1, o.tx_depth)));
}

double MissRate(const std::vector<model::CacheCounter>& c, const std::string& kind) {
  for (const model::CacheCounter& k : c) {
    if (k.kind == kind && k.hits + k.misses > 0) {
      return static_cast<double>(k.misses) / static_cast<double>(k.hits + k.misses);
    }
  }
  return -1;
}

int RunSweep(const BenchOptions& o, SweepResult* out, std::string* error) {
  const bool by_qps = !o.qps_sweep.empty();
  out->axis = by_qps ? "QPs" : "MR bytes";
  out->cache_on = o.cache;
  for (uint64_t x : by_qps ? o.qps_sweep : o.mr_sweep) {
    BenchOptions p = o;
    p.qps_sweep.clear();
    p.mr_sweep.clear();
    if (by_qps) {
      p.qps = static_cast<int>(x);
      p.iters = SweepItersPerQp(o, x);
    } else {
      p.mr_size = x;
    }
    SessionResult r;
    if (int rc = RunSession(p, &r, error)) {
      *error = out->axis + " " + std::to_string(x) + ": " + *error;
      return rc;
    }
    if (r.bw.empty()) {
      *error = "the sweeps measure bandwidth tests (write_bw, read_bw, send_bw, atomic_bw)";
      return EINVAL;
    }
    out->header = r.header;
    out->points.push_back(SweepPoint{x, r.bw[0], r.cache});
  }
  return 0;
}

void PrintSweep(std::ostream& out, const SweepResult& r) {
  const RunHeader& h = r.header;
  out << " " << h.test << " on " << h.backend << " (" << h.clock << " time), " << h.conn
      << ", tx depth " << h.tx_depth << ", post list " << h.post_list << ", CQ moderation "
      << h.cq_mod << (h.threads > 1 ? ", " + std::to_string(h.threads) + " host threads" : "")
      << ", context caches "
      << (h.clock == "real" ? "the device's own (not modelled)"
                            : r.cache_on ? "as the profile says" : "off")
      << "\n";
  out << " " << r.axis << "\tWRs\tMpps\tGb/s\tQPC miss\tMPT miss\tMTT miss\tWQE miss\n";
  for (const SweepPoint& p : r.points) {
    out << " " << p.x << "\t" << p.bw.iters << "\t" << Fixed("%.3f", p.bw.mpps) << "\t"
        << Fixed("%.2f", p.bw.gbps);
    for (const char* k : kKinds) out << "\t" << Percent(MissRate(p.cache, k));
    out << "\n";
  }
}

Chart SweepChart(const std::string& title, const std::vector<const SweepResult*>& runs,
                 const std::vector<std::string>& names) {
  Chart c;
  c.title = title;
  c.x_label = runs.empty() || runs[0]->axis == "QPs" ? "QPs (log2)" : "registered bytes (log2)";
  c.y_label = "Mpps";
  c.log_x = true;
  for (size_t i = 0; i < runs.size(); ++i) {
    Series s{i < names.size() ? names[i] : "run", {}};
    for (const SweepPoint& p : runs[i]->points) {
      s.points.emplace_back(static_cast<double>(p.x), p.bw.mpps);
    }
    c.series.push_back(s);
  }
  return c;
}

int RunSweepCli(const BenchOptions& o, std::ostream& out, std::ostream& err) {
  SweepResult r;
  std::string error;
  if (int rc = RunSweep(o, &r, &error)) {
    err << "qptwin: bench: " << cli::EscapeControl(error) << "\n";
    return rc == ENODEV || rc == EMSGSIZE || rc == EINVAL ? cli::kExitBadInput
                                                          : cli::kExitFailed;
  }
  PrintSweep(out, r);
  if (!o.plot.empty()) {
    const std::string title = r.header.test + " on " + r.header.backend + ": Mpps vs " + r.axis;
    const std::string name = r.cache_on ? "context caches on" : "context caches off";
    if (!cli::WriteOutputFile(o.plot, RenderSvg(SweepChart(title, {&r}, {name})), out, &error)) {
      return cli::BadInput(err, "bench: --plot: " + error);
    }
  }
  return cli::kExitOk;
}

}  // namespace qptwin::bench
