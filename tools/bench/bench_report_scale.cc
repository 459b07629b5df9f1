// Section 9 of docs/bench/REPORT.md: the seed's QP practices (examples/practice: a warm QP
// pool vs create+connect on demand, a QP per thread) re-measured with thousands of QPs and
// the NIC context caches on and off (model/timing.h contract 5).
#include <cstdio>
#include <ostream>
#include <string>
#include <vector>

#include "model/profile.h"
#include "tools/bench/bench_pair.h"
#include "tools/bench/bench_report_parts.h"
#include "tools/bench/bench_session.h"

namespace qptwin::bench {
namespace {

std::string F(const char* fmt, double v) {
  char b[64];
  std::snprintf(b, sizeof b, fmt, v);
  return b;
}

// One signaled 8-byte inline WRITE on client QP q; its post -> CQE time in *ns.
bool TimedWrite(BenchPair& pair, size_t q, uint64_t* ns) {
  Endpoint& cl = pair.client();
  SendWr w;
  w.opcode = WrOpcode::kRdmaWrite;
  w.send_flags = send_flag::kSignaled | send_flag::kInline;
  w.sg_list.push_back(Sge{reinterpret_cast<uint64_t>(cl.buf), 8, cl.lkey});
  w.remote_addr = reinterpret_cast<uint64_t>(pair.server().buf);
  w.rkey = pair.server().rkey;
  size_t bad = 0;
  std::vector<WorkCompletion> wc;
  const uint64_t t0 = pair.backend()->NowNs();
  if (cl.dev->PostSend(cl.qps[q], {w}, &bad) != 0 ||
      cl.dev->WaitForCompletions(cl.scq, 1, 1'000'000'000, &wc) != 0 || wc.empty() ||
      wc[0].status != WcStatus::kSuccess) {
    return false;
  }
  *ns = pair.backend()->NowNs() - t0;
  return true;
}

struct PoolTimes {
  uint64_t warm_ns = 0;    // the least recently used QP of a pool of n, all used once since
  uint64_t create_ns = 0;  // create + connect one more, then its first WRITE
};

bool MeasurePool(size_t n, bool cache, PoolTimes* out) {
  BenchOptions o;
  o.profile = "cx6-100g";
  o.cache = cache;
  std::string error;
  auto be = MakeBenchBackend(o, &error);
  if (!be) return false;
  BenchPair pair(be.get());
  PairConfig cfg;
  cfg.qps = static_cast<int>(n);
  cfg.send_depth = 4;
  cfg.recv_depth = 1;
  cfg.cq_depth = 1024;
  cfg.inline_size = 64;
  std::string what;
  if (pair.Setup(cfg, "", &what) != 0) return false;
  uint64_t ns = 0;
  for (size_t q = 0; q < n; ++q) {  // the pool in use: every QP once, QP 0 first
    if (!TimedWrite(pair, q, &ns)) return false;
  }
  Settle(pair);
  if (!TimedWrite(pair, 0, &out->warm_ns)) return false;
  Settle(pair);
  const uint64_t t0 = be->NowNs();
  if (pair.AddConnectedQp(&what) != 0) return false;
  Settle(pair);
  const uint64_t setup = be->NowNs() - t0;
  if (!TimedWrite(pair, n, &ns)) return false;
  out->create_ns = setup + ns;
  return true;
}

void PoolAtScale(ReportCtx& c) {
  c.out << "**Warm QP pool vs create+connect, at scale** (cx6-100g; an examples/practice "
           "QpPool hit hands out an idle QP in RTS. Here a pool of N connected QPs has each "
           "sent one 8-byte WRITE since, and the measured WRITE goes out on the least recently "
           "used one: post -> CQE. \"Create\" is create QP + RESET->INIT->RTR->RTS on both "
           "sides and then its first WRITE; a created QP's context starts cached.)\n\n"
        << "| pool size N | warm, caches on us | warm, caches off us | create+connect, "
           "caches on us | create / warm (on) |\n|---|---|---|---|---|\n";
  for (size_t n : {size_t{1}, size_t{1024}, size_t{4096}, size_t{16384}}) {
    PoolTimes on, off;
    if (!MeasurePool(n, true, &on) || !MeasurePool(n, false, &off)) {
      c.err << "report: warm pool at scale (" << n << " QPs) failed\n";
      c.ok = false;
      return;
    }
    c.out << "| " << n << " | " << F("%.3f", on.warm_ns / 1e3) << " | "
          << F("%.3f", off.warm_ns / 1e3) << " | " << F("%.3f", on.create_ns / 1e3) << " | "
          << F("%.0f", static_cast<double>(on.create_ns) / on.warm_ns) << "x |\n";
  }
  c.out << "\nBeyond the QPC capacity the idle QP's context has been evicted at both NICs, so "
           "its first WRITE pays a context read at each end (about a PCIe round trip each). "
           "The pool still wins by far: control verbs cost tens of microseconds (profile "
           "estimates, section 3), a context miss about half a microsecond. The same "
           "experiment with the practice's own QpPool (FIFO, SEND instead of WRITE): "
           "`bazel-bin/examples/practice/practice_bench --profile=cx6-100g --pool-qps=1024,"
           "4096,16384` (build with `bazel build -c opt //examples/practice:practice_bench`).\n\n";
}

bool RunBwWith(int qps, int threads, int depth, uint64_t iters, bool cache, BwResult* out) {
  BenchOptions o;
  o.threads = threads;
  o.profile = "cx6-100g";
  o.size = 64;
  o.qps = qps;
  o.tx_depth = depth;
  o.post_list = 4;
  o.cq_mod = 4;
  o.iters = iters;
  o.cache = cache;
  SessionResult r;
  std::string error;
  if (RunSession(o, &r, &error) != 0 || r.bw.empty()) return false;
  *out = r.bw[0];
  return true;
}

void QpPerThreadAtScale(ReportCtx& c) {
  c.out << "**A QP per thread, at scale** (cx6-100g, write_bw 64 B, -l 4 -Q 4, about "
           "200,000 WRs per run; `--threads`: simulated posting threads, bench_run.h "
           "contract 6). T threads each with its own QP at tx depth 4, against the same 4T "
           "WRs in flight on 64 QPs posted by 64 threads (depth 4T/64: T threads' work "
           "coalesced onto 64 QPs, Flock-style). What sharing costs on a real host (a lock "
           "per post, or the coalescing itself) is not in these numbers; only the NIC side "
           "is.\n\n"
        << "| T | QP per thread, on Mpps | 64 shared QPs, on Mpps | QP per thread, off Mpps "
           "| 64 shared QPs, off Mpps |\n|---|---|---|---|---|\n";
  for (int t : {64, 256, 1024, 4096}) {
    const int shared_depth = 4 * t / 64;
    const uint64_t per_thread_iters = std::max<uint64_t>(8, 204800 / t);
    const uint64_t shared_iters = per_thread_iters * t / 64;
    BwResult own_on, sh_on, own_off, sh_off;
    if (!RunBwWith(t, t, 4, per_thread_iters, true, &own_on) ||
        !RunBwWith(64, 64, shared_depth, shared_iters, true, &sh_on) ||
        !RunBwWith(t, t, 4, per_thread_iters, false, &own_off) ||
        !RunBwWith(64, 64, shared_depth, shared_iters, false, &sh_off)) {
      c.err << "report: QP per thread at scale (" << t << ") failed\n";
      c.ok = false;
      return;
    }
    c.out << "| " << t << " | " << F("%.2f", own_on.mpps) << " | " << F("%.2f", sh_on.mpps)
          << " | " << F("%.2f", own_off.mpps) << " | " << F("%.2f", sh_off.mpps) << " |\n";
  }
  c.out << "\nWith the caches off the two layouts differ only by how many threads post. "
           "With them on, WQE misses follow the WRs in flight (4T) whichever QPs carry them "
           "(against "
        << model::FindProfile("cx6-100g")->timing.cache.wqe_entries
        << " WQE entries), and a QP per thread adds QPC misses once the QPs pass the "
        << model::FindProfile("cx6-100g")->timing.cache.qpc_entries
        << " QPC entries (64 shared QPs always fit). The practice holds on the model: few WRs "
           "in flight per NIC and QPs within the caches, e.g. QPs per core rather than per "
           "thread. (Each spinning thread costs the simulation one poll per 100 simulated ns: the "
           "4,096-thread rows take about half a minute each.)\n\n";
}

}  // namespace

void ScaleSection(ReportCtx& c) {
  c.out << "## 9. The seed's practices at scale, with the context caches\n\n";
  PoolAtScale(c);
  QpPerThreadAtScale(c);
}

}  // namespace qptwin::bench
