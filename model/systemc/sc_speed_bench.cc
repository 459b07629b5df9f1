// The SystemC NIC's speed against raw SystemC, in one run (one process, one sc_start):
//  1. a trivial SC_METHOD re-notified by a timed event N times, and an SC_THREAD that
//     wait()s N times: SystemC's process activations per second;
//  2. `qptwin bench write_bw -s 8`-shaped traffic on the testbed platform (two hosts, two
//     NICs, a switch; cx6-100g timing): one RC QP, 8 B RDMA WRITEs, 128 in flight, every
//     100th signaled (perftest's -t 128 -Q 100), the host's post cost (post_call_ns +
//     post_wr_ns) annotated in a tlm_quantumkeeper: simulated WRs per second.
// Prints each rate (wall and CPU time) and their ratio.
//
//   bazel run //model/systemc:sc_speed_bench -- [WRS [ACTIVATIONS]]
#include <systemc>
#include <tlm_utils/tlm_quantumkeeper.h>

#include <linux/perf_event.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>

#include "model/profile.h"
#include "model/systemc/testbed.h"
#include "spec/vocabulary.h"

namespace qptwin::sc {
namespace {

using sc_core::sc_time;
using sc_core::SC_NS;

double WallNow() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}
// Instructions retired by this process (perf_event_open), or -1 where not permitted: a
// measure a loaded machine does not disturb.
class InstructionCounter {
 public:
  InstructionCounter() {
    perf_event_attr a{};
    a.type = PERF_TYPE_HARDWARE;
    a.size = sizeof a;
    a.config = PERF_COUNT_HW_INSTRUCTIONS;
    a.exclude_kernel = 1;
    a.exclude_hv = 1;
    fd_ = static_cast<int>(syscall(SYS_perf_event_open, &a, 0, -1, -1, 0));
  }
  ~InstructionCounter() {
    if (fd_ >= 0) close(fd_);
  }
  double Read() const {
    uint64_t v = 0;
    if (fd_ < 0 || read(fd_, &v, sizeof v) != static_cast<ssize_t>(sizeof v)) return -1;
    return static_cast<double>(v);
  }

 private:
  int fd_ = -1;
};

double CpuNow() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

struct Clock {
  InstructionCounter counter;
  double wall = WallNow(), cpu = CpuNow(), ins = counter.Read();
  void Lap(double* w, double* c, double* i) {
    const double w1 = WallNow(), c1 = CpuNow(), i1 = counter.Read();
    *w = w1 - wall;
    *c = c1 - cpu;
    *i = ins < 0 ? -1 : i1 - ins;
    wall = w1;
    cpu = c1;
    ins = i1;
  }
};

class Bench : public sc_core::sc_module {
 public:
  Bench(sc_core::sc_module_name n, testbed::Platform& p, uint64_t wrs, uint64_t acts)
      : sc_module(n), p_(p), wrs_(wrs), acts_(acts) {
    SC_HAS_PROCESS(Bench);
    SC_METHOD(Method);
    sensitive << method_ev_;
    dont_initialize();
    SC_THREAD(Thread);
    SC_THREAD(Control);
  }

 private:
  void Method() {
    if (++method_count_ < acts_) {
      method_ev_.notify(1, SC_NS);
    } else {
      method_done_.notify(sc_core::SC_ZERO_TIME);
    }
  }
  void Thread() {
    wait(thread_start_);
    for (uint64_t i = 0; i < acts_; ++i) wait(1, SC_NS);
    thread_done_.notify(sc_core::SC_ZERO_TIME);
  }
  void Control() {
    double mw, mc, mi, tw, tc, ti, nw, nc, ni;
    Clock clock;
    method_ev_.notify(1, SC_NS);
    wait(method_done_);
    clock.Lap(&mw, &mc, &mi);
    thread_start_.notify(sc_core::SC_ZERO_TIME);
    wait(thread_done_);
    clock.Lap(&tw, &tc, &ti);
    const sc_time t0 = sc_core::sc_time_stamp();
    const uint64_t done = WriteBw();
    const double sim_s = (sc_core::sc_time_stamp() - t0).to_seconds();
    clock.Lap(&nw, &nc, &ni);
    const double m = acts_ / mw, t = acts_ / tw, r = done / nw;
    std::printf("SC_METHOD activations: %.3g /s wall (%.3g /s CPU)\n", m, acts_ / mc);
    std::printf("SC_THREAD activations: %.3g /s wall (%.3g /s CPU)\n", t, acts_ / tc);
    std::printf("NIC 8 B RC WRITE: %llu WRs in %.3f s wall, %.3f s CPU: %.3g WRs/s wall "
                "(%.3g /s CPU); simulated %.3f ms: %.3f M WRs/s of simulated time\n",
                static_cast<unsigned long long>(done), nw, nc, r, done / nc, sim_s * 1e3,
                done / sim_s / 1e6);
    std::printf("ratio WRs/s / SC_METHOD activations/s: %.3f wall, %.3f CPU\n", r / m,
                (done / nc) / (acts_ / mc));
    std::printf("ratio WRs/s / SC_THREAD activations/s: %.3f wall, %.3f CPU\n", r / t,
                (done / nc) / (acts_ / tc));
    if (mi > 0 && ti > 0 && ni > 0) {
      std::printf("instructions: %.0f per SC_METHOD activation, %.0f per SC_THREAD "
                  "activation, %.0f per WR: ratio %.3f (method), %.3f (thread)\n",
                  mi / acts_, ti / acts_, ni / done, (mi / acts_) / (ni / done),
                  (ti / acts_) / (ni / done));
    }
    std::printf("checks: %llu WRs completed, %llu CQE write errors, %llu packets sent\n",
                static_cast<unsigned long long>(done),
                static_cast<unsigned long long>(p_.nic[0]->cqe_write_errors()),
                static_cast<unsigned long long>(p_.nic[0]->packets_sent()));
    sc_core::sc_stop();
  }

  // The write_bw loop; returns the WRs completed.
  uint64_t WriteBw() {
    testbed::Driver& h = *p_.host[0];
    const uint32_t qa = p_.NextQpn(), qb = p_.NextQpn(), ca = p_.NextCqn(), cb = p_.NextCqn();
    const uint32_t ka = p_.NextKey(), kb = p_.NextKey();
    const AccessFlags all = access::kLocalWrite | access::kRemoteWrite;
    h.CreateQp(qa, ca, QpType::kRc, 1);
    p_.host[1]->CreateQp(qb, cb, QpType::kRc, 1);
    if (h.Command(CmdOp::kRegMr, {ka, 1, testbed::kDataBase, 4096, all}) ||
        p_.host[1]->Command(CmdOp::kRegMr, {kb, 1, testbed::kDataBase, 4096, all}) ||
        h.Connect(qa, QpType::kRc, 1, qb, all) ||
        p_.host[1]->Connect(qb, QpType::kRc, 0, qa, all)) {
      std::fprintf(stderr, "sc_speed_bench: setup failed\n");
      return 0;
    }
    const model::HostTiming& ht = p_.nic[0]->timing().host;
    const sc_time post(static_cast<double>(ht.post_call_ns + ht.post_wr_ns), SC_NS);
    constexpr uint64_t kDepth = 128, kCqMod = 100;
    Wqe w;
    w.opcode = WrOpcode::kRdmaWrite;
    w.addr = testbed::kDataBase;
    w.length = 8;
    w.lkey = ka;
    w.remote_addr = testbed::kDataBase + 64;
    w.rkey = kb;
    tlm_utils::tlm_quantumkeeper qk;
    qk.reset();
    uint64_t posted = 0, done = 0;
    while (done < wrs_) {
      while (posted < wrs_ && posted - done < kDepth) {
        ++posted;
        const bool sig = posted % kCqMod == 0 || posted == wrs_;
        w.flags = sig ? send_flag::kSignaled : 0;
        w.wr_id = posted;
        qk.inc(post);
        h.PostSendAt(qa, w, qk.get_local_time());
        if (qk.need_sync()) qk.sync();
      }
      qk.sync();
      const std::optional<Cqe> c = h.WaitCq(ca, sc_time(1, sc_core::SC_MS));
      if (!c || c->status != WcStatus::kSuccess) {
        std::fprintf(stderr, "sc_speed_bench: WR failed or no completion after %llu\n",
                     static_cast<unsigned long long>(done));
        return done;
      }
      done = c->wr_id;
    }
    return done;
  }

  testbed::Platform& p_;
  const uint64_t wrs_, acts_;
  sc_core::sc_event method_ev_, method_done_, thread_start_, thread_done_;
  uint64_t method_count_ = 0;
};

}  // namespace
}  // namespace qptwin::sc

int sc_main(int argc, char** argv) {
  const uint64_t wrs = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 1'000'000;
  const uint64_t acts = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 10'000'000;
  if (wrs == 0 || acts == 0) {
    std::fprintf(stderr, "usage: sc_speed_bench [WRS [ACTIVATIONS]] (both > 0)\n");
    return 2;
  }
  qptwin::sc::testbed::Platform platform(qptwin::model::FindProfile("cx6-100g")->timing);
  qptwin::sc::Bench bench("bench", platform, wrs, acts);
  sc_core::sc_start();
  return 0;
}
