// Speed of the model: simulated small RC SENDs per wall-clock second, with the simulated
// time per message alongside. Has its own main() (like the CLI) to show that binaries
// linking the model need nothing special.
//   bazel run //model:model_bench -- --benchmark_min_time=2
#include <benchmark/benchmark.h>

#include <cerrno>
#include <memory>

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
