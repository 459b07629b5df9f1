// Measures the seed articles' practices in the model's SIMULATED time (Backend::NowNs):
//  1. time to first send: a QP from a warm pool vs one created and connected on demand;
//  2. signaling every WR vs every 16th;
//  3. posting 1 vs 16 WRs per ibv_post_send call;
//  4. with --pool-qps=N1,N2,...: (1) at scale, a pool of N warm QPs each used once since
//     (FIFO: the one handed out is the least recently used), NIC context caches on and off
//     (model/timing.h contract 5; only cx6 profiles have them).
// Host (wall-clock) time of the same calls is printed beside it for orientation only: it is
// the cost of the model's implementation on this machine, not a property of a NIC.
//
//   bazel run //examples/practice:practice_bench [-- --trials=N --wrs=N --profile=NAME
//                                                    --pool-qps=1024,4096,16384]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "model/model_backend.h"
#include "examples/practice/batching.h"
#include "examples/practice/qp_pool.h"
#include "examples/practice/test_env.h"

namespace qptwin::practice {
namespace {

struct Args {
  int trials = 20;
  size_t wrs = 1024;
  uint32_t msg = 64;
  std::vector<std::string> profiles;
  std::vector<size_t> pool_qps;  // (4): pool sizes
};

struct Sample {
  double sim_us = 0;
  double host_us = 0;
};

double HostUs(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0)
      .count();
}

int MakeEnv(const std::string& profile, TestEnv* env) {
  return MakeModelEnv(env, 4096, 1 << 16, 2, profile);
}

constexpr uint32_t kPeerRecvs = 64;  // receives each peer QP gets (max_recv_wr of Init())

// ---- 1. warm pool vs on demand ------------------------------------------------------------

// One SEND of `msg` bytes on a QP from the pool; time from Acquire until its CQE.
int FirstSend(TestEnv& env, QpPool& pool, uint32_t msg, uint64_t wr_id, Sample* out) {
  Device& dev = *env.local.dev;
  uint64_t t0 = env.backend->NowNs();
  auto h0 = std::chrono::steady_clock::now();
  PooledQp q;
  if (int err = pool.Acquire(&q)) return err;
  size_t bad = 0;
  SendWr wr = Wr(wr_id, WrOpcode::kSend, {env.local.At(0, msg)});
  if (int err = dev.PostSend(q.qp, {wr}, &bad)) return err;
  std::vector<WorkCompletion> wcs;
  if (int err = dev.WaitForCompletions(env.local.scq, 1, 1'000'000'000, &wcs)) return err;
  if (wcs[0].status != WcStatus::kSuccess) return EIO;
  out->sim_us = (env.backend->NowNs() - t0) / 1000.0;
  out->host_us = HostUs(h0);
  return pool.Release(q);
}

int BenchPool(const std::string& profile, const Args& a) {
  Sample warm_sum, cold_sum;
  for (int mode = 0; mode < 2; ++mode) {
    TestEnv env;
    if (int err = MakeEnv(profile, &env)) return err;
    LocalPeer peer(env.peer.dev.get(), env.peer.Init(), [&](Device& d, QpHandle qp) {
      std::vector<RecvWr> recvs(kPeerRecvs, Rwr(1, {env.peer.At(0, 4096)}));
      size_t bad = 0;
      (void)d.PostRecv(qp, recvs, &bad);
    });
    QpPoolOptions o;
    o.capacity = static_cast<size_t>(a.trials) + 1;
    o.init = env.local.Init();
    QpPool pool(env.backend.get(), env.local.dev.get(), &peer, o);
    bool warm = mode == 0;
    if (warm && pool.Warm(1) != 0) return EIO;
    Sample& sum = warm ? warm_sum : cold_sum;
    for (int t = 0; t < a.trials; ++t) {
      Sample s;
      if (!warm) {
        // On demand: an empty pool for every trial (the previous QP stays checked out).
        PooledQp hold;
        if (int err = pool.Acquire(&hold)) return err;
      }
      if (int err = FirstSend(env, pool, a.msg, t, &s)) return err;
      sum.sim_us += s.sim_us;
      sum.host_us += s.host_us;
    }
    std::printf("  %-26s %10.3f %12.1f   hits=%llu misses=%llu creations=%llu\n",
                warm ? "warm pool (hit)" : "on demand (create+connect)", sum.sim_us / a.trials,
                sum.host_us / a.trials, static_cast<unsigned long long>(pool.stats().hits),
                static_cast<unsigned long long>(pool.stats().misses),
                static_cast<unsigned long long>(pool.stats().creations));
  }
  double gain = 100.0 * (cold_sum.sim_us - warm_sum.sim_us) / cold_sum.sim_us;
  std::printf("  -> simulated end-to-end reduction from the warm pool: %.1f%% (seed claims 23%%)\n",
              gain);
  return 0;
}

// ---- 4. the warm pool at scale ------------------------------------------------------------

// A pool of n warm QPs, each used for one SEND in FIFO order; then the next SEND goes out on
// the least recently used one (*warm), and one more QP is created on demand (*cold).
int PoolAtScale(const std::string& profile, size_t n, bool cache, double* warm, double* cold) {
  model::ModelOptions mo;
  mo.profile = profile;
  mo.context_cache = cache;
  TestEnv env;
  // The peer's CQ takes a receive CQE per SEND and is never polled: room for all of them.
  const int cq_depth = static_cast<int>(2 * n + 64);
  if (int err = OpenEnv(model::MakeModelBackend(mo), "mdev0", "mdev1", &env, cq_depth, 1 << 16)) {
    return err;
  }
  LocalPeer peer(env.peer.dev.get(), env.peer.Init(), [&](Device& d, QpHandle qp) {
    std::vector<RecvWr> recvs(4, Rwr(1, {env.peer.At(0, 4096)}));
    size_t bad = 0;
    (void)d.PostRecv(qp, recvs, &bad);
  });
  QpPoolOptions o;
  o.capacity = n + 1;
  o.init = env.local.Init();
  QpPool pool(env.backend.get(), env.local.dev.get(), &peer, o);
  if (int err = pool.Warm(n)) return err;
  Sample s;
  for (size_t i = 0; i < n; ++i) {
    if (int err = FirstSend(env, pool, 64, i, &s)) return err;
  }
  if (int err = FirstSend(env, pool, 64, n, &s)) return err;
  *warm = s.sim_us;
  std::vector<PooledQp> held(n);  // empty the pool: the next Acquire creates and connects
  for (PooledQp& q : held) {
    if (int err = pool.Acquire(&q)) return err;
  }
  if (int err = FirstSend(env, pool, 64, n + 1, &s)) return err;
  *cold = s.sim_us;
  return 0;
}

int BenchPoolAtScale(const std::string& profile, const Args& a) {
  for (size_t n : a.pool_qps) {
    double warm_on = 0, cold_on = 0, warm_off = 0, cold_off = 0;
    if (int err = PoolAtScale(profile, n, true, &warm_on, &cold_on)) return err;
    if (int err = PoolAtScale(profile, n, false, &warm_off, &cold_off)) return err;
    std::printf("  pool of %-6zu warm LRU QP: %7.3f us (caches off %7.3f)   on demand: %7.3f us"
                " (off %7.3f)\n", n, warm_on, warm_off, cold_on, cold_off);
  }
  return 0;
}

// ---- 2 and 3. signaling and batching --------------------------------------------------------

int BenchBatch(const std::string& profile, const Args& a, const char* label,
               BatchOptions opts) {
  TestEnv env;
  if (int err = MakeEnv(profile, &env)) return err;
  Device& dev = *env.local.dev;
  CqHandle rcq;
  if (int err = dev.CreateCq(64, ChannelHandle{}, &rcq, nullptr)) return err;
  LocalPeer peer(env.peer.dev.get(), env.peer.Init());
  QpInitAttr init = env.local.Init(128, 16);
  init.recv_cq = rcq;
  QpHandle qp;
  if (int err = dev.CreateQp(init, &qp, nullptr)) return err;
  StoredConnection conn;
  if (int err = ConnectThroughPeer(dev, qp, peer, &conn)) return err;
  BatchPoster p(&dev, qp, opts);
  if (int err = p.Init()) return err;
  std::vector<SendWr> wrs;
  for (size_t i = 0; i < a.wrs; ++i) {
    wrs.push_back(WriteWr(env.local, env.peer, i, (i % 256) * a.msg % 60000, a.msg, false));
  }
  uint64_t t0 = env.backend->NowNs();
  auto h0 = std::chrono::steady_clock::now();
  size_t posted = 0;
  if (int err = p.Post(wrs, &posted)) return err;
  if (int err = p.WaitIdle(10'000'000'000ull)) return err;
  double sim_us = (env.backend->NowNs() - t0) / 1000.0;
  double host_us = HostUs(h0);
  const BatchStats& s = p.stats();
  std::printf("  %-26s %10.3f %12.1f   sq=%u post_calls=%llu signaled=%llu cqes=%llu"
              " waits=%llu  (%.3f us/WR)\n",
              label, sim_us, host_us, p.depth(), static_cast<unsigned long long>(s.post_calls),
              static_cast<unsigned long long>(s.signaled),
              static_cast<unsigned long long>(s.cqes),
              static_cast<unsigned long long>(s.reclaim_waits), sim_us / a.wrs);
  return 0;
}

int Run(const Args& a) {
  for (const std::string& profile : a.profiles) {
    std::printf("\nprofile %s: %d trials, %zu WRs of %u B, RDMA WRITE (2, 3), SEND (1)\n",
                profile.c_str(), a.trials, a.wrs, a.msg);
    // Host time: this machine's CPU running the model (shared, noisy), for orientation only.
    std::printf("  %-26s %10s %12s   %s\n", "case", "sim us", "host us", "counters");
    std::printf("  (1) time to first send, mean per trial\n");
    if (int err = BenchPool(profile, a)) return err;
    std::printf("  (2) signaling, %zu WRs, SQ of 128 asked (sq = granted), 16 WRs per call max\n",
                a.wrs);
    if (int err = BenchBatch(profile, a, "signal every WR", BatchOptions{1, 16})) return err;
    if (int err = BenchBatch(profile, a, "signal every 16th", BatchOptions{16, 16})) return err;
    std::printf("  (3) WRs per post call, %zu WRs, signal every 16th\n", a.wrs);
    if (int err = BenchBatch(profile, a, "1 WR per call", BatchOptions{16, 1})) return err;
    if (int err = BenchBatch(profile, a, "16 WRs per call", BatchOptions{16, 16})) return err;
    if (!a.pool_qps.empty()) {
      std::printf("  (4) time to first send at scale (sim us; FIFO pool, each QP used once since)\n");
      if (int err = BenchPoolAtScale(profile, a)) return err;
    }
  }
  return 0;
}

}  // namespace
}  // namespace qptwin::practice

int main(int argc, char** argv) {
  return qptwin::model::RunWithSystemC(argc, argv, [](int n, char** v) {
    qptwin::practice::Args a;
    for (int i = 1; i < n; ++i) {
      std::string s = v[i];
      if (s.rfind("--trials=", 0) == 0) a.trials = std::stoi(s.substr(9));
      if (s.rfind("--wrs=", 0) == 0) a.wrs = std::stoul(s.substr(6));
      if (s.rfind("--msg=", 0) == 0) a.msg = static_cast<uint32_t>(std::stoul(s.substr(6)));
      if (s.rfind("--profile=", 0) == 0) a.profiles.push_back(s.substr(10));
      if (s.rfind("--pool-qps=", 0) == 0) {
        std::string list = s.substr(11);
        for (size_t pos = 0; pos < list.size();) {
          size_t comma = list.find(',', pos);
          if (comma == std::string::npos) comma = list.size();
          const size_t q = std::strtoul(list.substr(pos, comma - pos).c_str(), nullptr, 10);
          if (q >= 1 && q <= 65536) a.pool_qps.push_back(q);
          pos = comma + 1;
        }
      }
    }
    if (a.profiles.empty()) a.profiles = qptwin::model::ProfileNames();
    // The warm QP is reused every trial and its peer got kPeerRecvs receives.
    if (a.trials < 1 || a.trials > static_cast<int>(qptwin::practice::kPeerRecvs)) a.trials = 20;
    if (a.wrs < 1) a.wrs = 1024;
    int err = qptwin::practice::Run(a);
    if (err) std::fprintf(stderr, "practice_bench: failed: %d\n", err);
    return err ? 1 : 0;
  });
}
