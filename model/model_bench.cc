// Speed of the model: simulated small RC SENDs per wall-clock second, with the simulated
// time per message alongside. Has its own main() (like the CLI) to show that binaries
// linking the model need nothing special. BM_WritesOverQps: WR/s vs QPs (issue 15).
//   bazel run //model:model_bench -- --benchmark_min_time=2
//   bazel run //model:model_bench -- --benchmark_filter=WritesOverQps
#include <benchmark/benchmark.h>

#include <cerrno>
#include <memory>
#include <vector>

#include "model/model_backend.h"
#include "spec/bring_up.h"

namespace qptwin::model {
namespace {

struct Pair {
  std::unique_ptr<Backend> be;
  std::unique_ptr<Device> dev[2];
  PdHandle pd[2];
  CqHandle cq[2];
  QpHandle qp[2];
  uint8_t* buf[2] = {nullptr, nullptr};
  uint32_t lkey[2] = {0, 0};
};

bool Setup(Pair& p, const std::string& profile) {
  ModelOptions o;
  o.profile = profile;
  p.be = MakeModelBackend(o);
  for (int i = 0; i < 2; ++i) {
    MrHandle mr;
    uint32_t rkey;
    QpInitAttr init;
    if (p.be->OpenDevice("mdev" + std::to_string(i), &p.dev[i]) || p.dev[i]->AllocPd(&p.pd[i]) ||
        p.dev[i]->CreateCq(4096, ChannelHandle{}, &p.cq[i], nullptr) ||
        p.dev[i]->RegMr(p.pd[i], 1 << 16, access::kLocalWrite, &mr, &p.buf[i], &p.lkey[i], &rkey)) {
      return false;
    }
    init.pd = p.pd[i];
    init.send_cq = init.recv_cq = p.cq[i];
    init.cap = QpCap{256, 256, 1, 1, 0};
    if (p.dev[i]->CreateQp(init, &p.qp[i], nullptr)) return false;
  }
  BringUpParams params;  // the table's minimum masks (spec/bring_up.h)
  params.min_rnr_timer = 1;
  if (ConnectPair(*p.dev[0], p.qp[0], *p.dev[1], p.qp[1], params)) return false;
  return true;
}

void BM_SmallSends(benchmark::State& state, const std::string& profile) {
  const int batch = static_cast<int>(state.range(0));
  const uint32_t size = static_cast<uint32_t>(state.range(1));
  Pair p;
  if (!Setup(p, profile)) {
    state.SkipWithError("setup failed");
    return;
  }
  std::vector<RecvWr> recvs(batch);
  std::vector<SendWr> sends(batch);
  for (int i = 0; i < batch; ++i) {
    recvs[i].sg_list = {Sge{reinterpret_cast<uint64_t>(p.buf[1]), size, p.lkey[1]}};
    sends[i].sg_list = {Sge{reinterpret_cast<uint64_t>(p.buf[0]), size, p.lkey[0]}};
    sends[i].send_flags = send_flag::kSignaled;
  }
  uint64_t messages = 0;
  uint64_t start_ns = p.be->NowNs();
  std::vector<WorkCompletion> wcs;
  for (auto _ : state) {
    size_t bad = 0;
    if (p.dev[1]->PostRecv(p.qp[1], recvs, &bad) || p.dev[0]->PostSend(p.qp[0], sends, &bad)) {
      state.SkipWithError("post failed");
      return;
    }
    wcs.clear();
    if (p.dev[0]->WaitForCompletions(p.cq[0], batch, 1000000000, &wcs) ||
        p.dev[1]->WaitForCompletions(p.cq[1], batch, 1000000000, &wcs)) {
      state.SkipWithError("timed out");
      return;
    }
    messages += batch;
  }
  state.SetItemsProcessed(static_cast<int64_t>(messages));
  double sim_ns = static_cast<double>(p.be->NowNs() - start_ns);
  state.counters["sim_ns_per_msg"] = messages ? sim_ns / messages : 0;
  state.counters["sim_msgs_per_sim_s"] = sim_ns > 0 ? messages * 1e9 / sim_ns : 0;
}

// Issue 15: the cost per WR must not grow with the number of QPs. `q` connected RC QP pairs
// on cx6-100g, pipelined as `qptwin bench write_bw -s 64` is: each QP keeps kDepth 64-byte
// WRITEs outstanding, posted as lists of kList with the last signaled, and a list is
// reposted when its CQE comes (kDepth 32: 4096 x 32 WRs queue for 13 ms at the port, far
// below the 67 ms transport timeout; with 128 the port's queue reached it and retries ran). items/s is WRs per CPU second (Google Benchmark's default),
// so one run prints the curve (1 .. 4096 QPs) unaffected by other processes' load.
constexpr int kList = 16;
constexpr int kDepth = 32;

struct Fleet {
  std::unique_ptr<Backend> be;
  std::unique_ptr<Device> dev[2];
  CqHandle cq[2];
  std::vector<QpHandle> qp[2];
  uint8_t* buf[2] = {nullptr, nullptr};
  uint32_t lkey[2] = {0, 0};
  uint32_t rkey[2] = {0, 0};
};

bool SetupFleet(Fleet& f, int qps, bool cache) {
  ModelOptions o;
  o.profile = "cx6-100g";
  o.context_cache = cache;  // the profile's NIC context caches (B's model) on or off
  f.be = MakeModelBackend(o);
  PdHandle pd[2];
  for (int i = 0; i < 2; ++i) {
    MrHandle mr;
    if (!f.be || f.be->OpenDevice("mdev" + std::to_string(i), &f.dev[i]) ||
        f.dev[i]->AllocPd(&pd[i]) ||
        f.dev[i]->CreateCq(qps * (kDepth / kList) + 64, ChannelHandle{}, &f.cq[i], nullptr) ||
        f.dev[i]->RegMr(pd[i], 1 << 16, access::kAll, &mr, &f.buf[i], &f.lkey[i], &f.rkey[i])) {
      return false;
    }
  }
  BringUpParams params;
  params.min_rnr_timer = 1;
  for (int q = 0; q < qps; ++q) {
    QpHandle h[2];
    for (int i = 0; i < 2; ++i) {
      QpInitAttr init;
      init.pd = pd[i];
      init.send_cq = init.recv_cq = f.cq[i];
      init.cap = QpCap{kDepth, 1, 1, 1, 0};
      if (f.dev[i]->CreateQp(init, &h[i], nullptr)) return false;
      f.qp[i].push_back(h[i]);
    }
    if (ConnectPair(*f.dev[0], h[0], *f.dev[1], h[1], params)) return false;
  }
  return true;
}

void BM_WritesOverQps(benchmark::State& state) {
  const int qps = static_cast<int>(state.range(0));
  Fleet f;
  if (!SetupFleet(f, qps, state.range(1) != 0)) {
    state.SkipWithError("setup failed");
    return;
  }
  std::vector<SendWr> list(kList);
  for (SendWr& w : list) {
    w.opcode = WrOpcode::kRdmaWrite;
    w.sg_list = {Sge{reinterpret_cast<uint64_t>(f.buf[0]), 64, f.lkey[0]}};
    w.remote_addr = reinterpret_cast<uint64_t>(f.buf[1]);
    w.rkey = f.rkey[1];
  }
  list.back().send_flags = send_flag::kSignaled;
  std::vector<int> outstanding(static_cast<size_t>(qps), 0);
  std::vector<size_t> ready(static_cast<size_t>(qps));
  for (size_t q = 0; q < ready.size(); ++q) ready[q] = q;
  uint64_t wrs = 0;
  const uint64_t start_ns = f.be->NowNs();
  std::vector<WorkCompletion> wcs;
  WorkCompletion more[64];
  for (auto _ : state) {
    size_t bad = 0;
    for (size_t q : ready) {
      list.back().wr_id = q;
      while (outstanding[q] + kList <= kDepth) {
        if (f.dev[0]->PostSend(f.qp[0][q], list, &bad)) {
          state.SkipWithError("post failed");
          return;
        }
        outstanding[q] += kList;
      }
    }
    ready.clear();
    wcs.clear();
    if (f.dev[0]->WaitForCompletions(f.cq[0], 1, 10'000'000'000, &wcs)) {
      state.SkipWithError("timed out");
      return;
    }
    for (int n; (n = f.dev[0]->PollCq(f.cq[0], 64, more)) > 0;) wcs.insert(wcs.end(), more, more + n);
    for (const WorkCompletion& wc : wcs) {
      if (wc.status != WcStatus::kSuccess || wc.wr_id >= static_cast<uint64_t>(qps)) {
        state.SkipWithError("error completion");
        return;
      }
      outstanding[wc.wr_id] -= kList;
      ready.push_back(wc.wr_id);
      wrs += kList;
    }
  }
  state.SetItemsProcessed(static_cast<int64_t>(wrs));
  const double sim_ns = static_cast<double>(f.be->NowNs() - start_ns);
  state.counters["sim_Mwr_per_sim_s"] = sim_ns > 0 ? wrs * 1e3 / sim_ns : 0;
}

// Args: QPs, context caches on (1) / off (0).
BENCHMARK(BM_WritesOverQps)
    ->ArgsProduct({{1, 16, 256, 1024, 4096}, {1, 0}})
    ->Unit(benchmark::kMillisecond);

BENCHMARK_CAPTURE(BM_SmallSends, rxe, std::string("rxe"))->Args({1, 64})->Args({16, 64})->Args({64, 64});
BENCHMARK_CAPTURE(BM_SmallSends, ibta, std::string("ibta"))->Args({16, 64})->Args({16, 4096});

}  // namespace
}  // namespace qptwin::model

int main(int argc, char** argv) {
  return qptwin::model::RunWithSystemC(argc, argv, [](int c, char** v) {
    benchmark::Initialize(&c, v);
    benchmark::RunSpecifiedBenchmarks();
    return 0;
  });
}
