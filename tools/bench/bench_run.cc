#include "tools/bench/bench_run.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <ctime>
#include <cstdio>
#include <functional>
#include <iostream>
#include <queue>
#include <utility>

namespace qptwin::bench {
namespace {

constexpr uint64_t kWaitNs = 10'000'000'000;  // one wait: 10 s (simulated or real)
constexpr uint32_t kQkey = 0x11111111;
constexpr uint32_t kGrh = 40;  // UD receive buffers start with the GRH
constexpr uint64_t kCountMask = (uint64_t{1} << 40) - 1;
// The model holds a copy of each message's payload until it is delivered (contract 4).
constexpr uint64_t kModelInFlightBytes = uint64_t{256} << 20;
// ... and its WQE (about 0.5 KiB, bench prints the measured figure): at most 2^19 WRs in
// flight, which binds only above 4,096 QPs at -t 128 (65,536 QPs: 8 each).
constexpr uint64_t kModelInFlightWrs = uint64_t{1} << 19;
// --threads (contract 6): a thread with nothing to do spins on ibv_poll_cq; it sees a CQE
// this long after it is written at the latest (one empty poll of an mlx5 CQ reads one
// CQE's owner byte, tens of ns; 100 bounds the simulation's steps per spinning thread).
constexpr uint64_t kSpinPollNs = 100;

double WallNow() {
  using namespace std::chrono;
  return duration<double>(steady_clock::now().time_since_epoch()).count();
}

double CpuNow() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

WrOpcode OpcodeOf(Op op) {
  switch (op) {
    case Op::kWrite: return WrOpcode::kRdmaWrite;
    case Op::kRead: return WrOpcode::kRdmaRead;
    case Op::kAtomic: return WrOpcode::kAtomicFetchAndAdd;
    default: return WrOpcode::kSend;
  }
}

// One WR of the test from client QP q to server QP q.
SendWr MakeWr(BenchPair& p, Op op, size_t q, uint64_t size, uint64_t local_off,
              uint64_t remote_off, bool inl) {
  Endpoint& c = p.client();
  Endpoint& s = p.server();
  SendWr w;
  w.opcode = OpcodeOf(op);
  w.sg_list.push_back(Sge{reinterpret_cast<uint64_t>(c.buf) + local_off,
                          static_cast<uint32_t>(size), c.lkey});
  w.remote_addr = reinterpret_cast<uint64_t>(s.buf) + remote_off;
  w.rkey = s.rkey;
  if (op == Op::kAtomic) w.compare_add = 1;
  if (inl) w.send_flags |= send_flag::kInline;
  if (p.config().type == QpType::kUd) {
    w.ah = c.ahs[q];
    w.remote_qpn = s.qpns[q];
    w.remote_qkey = kQkey;
  }
  return w;
}

bool InlineOk(const Endpoint& e, Op op, uint64_t size) {
  return (op == Op::kWrite || op == Op::kSend) && size <= e.max_inline && size > 0;
}

int PostRecvs(Endpoint& e, size_t q, int n, uint64_t size, bool ud, std::string* error) {
  std::vector<RecvWr> wrs(static_cast<size_t>(n));
  for (RecvWr& r : wrs) {
    r.wr_id = q;
    // The whole buffer: receives left over from a smaller size still fit a larger one.
    uint32_t len = static_cast<uint32_t>(std::max<uint64_t>(e.buf_len, size + (ud ? kGrh : 0)));
    r.sg_list.push_back(Sge{reinterpret_cast<uint64_t>(e.buf), len, e.lkey});
  }
  size_t bad = 0;
  int rc = e.dev->PostRecv(e.qps[q], wrs, &bad);
  if (rc) *error = "post_recv failed";
  if (rc == 0) e.recvs[q] += static_cast<uint32_t>(n);
  return rc;
}

int CheckWc(const WorkCompletion& wc, std::string* error) {
  if (wc.status == WcStatus::kSuccess) return 0;
  *error = "completion with status " + std::string(ToName(wc.status));
  return EIO;
}

// Reposts as many receives as completed on `s` (the server side of the send tests), QP by
// QP in ascending order; the cost is per CQE, not per QP.
int Replenish(Endpoint& s, bool ud, uint64_t size, std::string* error) {
  WorkCompletion wc[64];
  std::vector<size_t> qs;
  int n;
  while ((n = s.dev->PollCq(s.rcq, 64, wc)) > 0) {
    qs.clear();
    for (int i = 0; i < n; ++i) {
      if (int rc = CheckWc(wc[i], error)) return rc;
      auto it = s.qp_index.find(wc[i].qp_num);
      qs.push_back(it == s.qp_index.end() ? 0 : it->second);
    }
    std::sort(qs.begin(), qs.end());
    for (size_t i = 0; i < qs.size();) {
      const size_t q = qs[i];
      size_t j = i;
      while (j < qs.size() && qs[j] == q) ++j;
      const int count = static_cast<int>(j - i);
      i = j;
      s.recvs[q] -= std::min<uint32_t>(s.recvs[q], static_cast<uint32_t>(count));
      if (int rc = PostRecvs(s, q, count, size, ud, error)) return rc;
    }
  }
  return n < 0 ? -n : 0;
}

// Tops the receive queues of `s` up to their capacity (earlier runs left some).
int FillRecvs(Endpoint& s, bool ud, uint64_t size, std::string* error) {
  for (size_t q = 0; q < s.qps.size(); ++q) {
    int n = static_cast<int>(s.cap.max_recv_wr - std::min(s.cap.max_recv_wr, s.recvs[q]));
    if (n == 0) continue;
    if (int rc = PostRecvs(s, q, n, size, ud, error)) return rc;
  }
  return 0;
}

}  // namespace

void Settle(BenchPair& p) {
  std::vector<WorkCompletion> none;
  for (Endpoint* e : {&p.client(), &p.server()}) {
    if (!e->dev) continue;  // the peer's shadow (two processes)
    (void)e->dev->WaitForCompletions(e->scq, 0, 0, &none);
  }
}

int WaitCqe(Endpoint& e, CqHandle cq, bool events, std::vector<WorkCompletion>* got,
            std::string* error, Backend* spin_) {
  if (!events && spin_) {
    // hw: spin on ibv_poll_cq as perftest does (WaitForCompletions yields the CPU between
    // empty polls, which costs a system call per poll on a small VM).
    // The clock is read only every 4096 empty polls: a clock read can be a system call
    // (e.g. in a VM without a usable TSC) and would dominate a tight loop.
    // The deadline is set at the first clock read, after 4096 empty polls: a completion
    // that is already there costs no clock read at all.
    WorkCompletion wc[32];
    uint64_t deadline = 0;
    for (uint64_t spins = 1;; ++spins) {
      int n = e.dev->PollCq(cq, 32, wc);
      if (n < 0) return -n;
      if (n > 0) {
        got->insert(got->end(), wc, wc + n);
        return 0;
      }
      if (spins % 4096 != 0) continue;
      if (deadline == 0) deadline = spin_->NowNs() + kWaitNs;
      if (spin_->NowNs() > deadline) {
        *error = "no completion within 10 s";
        return ETIMEDOUT;
      }
    }
  }
  if (!events) {
    int rc = e.dev->WaitForCompletions(cq, 1, kWaitNs, got);
    if (rc) *error = "no completion within 10 s";
    return rc;
  }
  if (int rc = e.dev->ReqNotifyCq(cq, false)) return rc;
  WorkCompletion wc[32];
  int n = e.dev->PollCq(cq, 32, wc);  // a CQE may have come before the arm
  if (n > 0) {
    got->insert(got->end(), wc, wc + n);
    return 0;
  }
  CqHandle which;
  if (int rc = e.dev->GetCqEvent(e.channel, kWaitNs, &which)) {
    *error = "no completion event within 10 s";
    return rc;
  }
  e.dev->AckCqEvents(which, 1);
  n = e.dev->PollCq(cq, 32, wc);
  if (n > 0) got->insert(got->end(), wc, wc + n);
  return 0;
}

int BwDepth(bool model, int tx_depth, uint32_t max_send_wr, uint64_t size, size_t qps) {
  int depth = std::max(1, std::min<int>(tx_depth, static_cast<int>(max_send_wr)));
  if (!model) return depth;
  const uint64_t per_qp = std::min(kModelInFlightBytes / std::max<uint64_t>(1, size * qps),
                                   kModelInFlightWrs / std::max<uint64_t>(1, qps));
  return static_cast<int>(std::max<uint64_t>(1, std::min<uint64_t>(depth, per_qp)));
}

void ReportProgress(const BenchOptions& o, uint64_t size, double wall_s) {
  if (!o.all_sizes) return;
  char wall[32];
  std::snprintf(wall, sizeof wall, "%.1f", wall_s);
  std::cerr << "qptwin bench: " << o.test << " " << size << " B done (" << wall << " s)\n"
            << std::flush;
}

uint64_t PacketsPerMessage(Op op, QpType type, uint64_t size, uint32_t mtu) {
  uint64_t data = mtu ? (size + mtu - 1) / mtu : 1;
  if (data == 0) data = 1;
  switch (op) {
    case Op::kRead: return 1 + data;
    case Op::kAtomic: return 2;
    default: return data + (type == QpType::kRc ? 1 : 0);
  }
}

int RunBw(BenchPair& p, const BenchOptions& o, uint64_t size, BwResult* out, std::string* error) {
  Endpoint& c = p.client();
  const size_t nq = c.qps.size();
  const bool ud = p.config().type == QpType::kUd;
  const bool inl = InlineOk(c, o.op, size);
  const uint64_t per_qp = o.iters;
  const int depth = BwDepth(p.backend()->Kind() == "model", o.tx_depth, c.cap.max_send_wr, size,
                            nq);
  const int list = std::min(o.post_list, depth);
  // perftest: CQ moderation above the tx depth would never signal within the window.
  const uint64_t cq_mod = static_cast<uint64_t>(std::max(1, std::min(o.cq_mod, depth)));
  // Two processes: the server is the peer's shadow and the other process receives.
  const bool local_server = p.server().dev != nullptr;
  if (o.op == Op::kSend && local_server) {
    if (int rc = FillRecvs(p.server(), ud, size, error)) return rc;
  }
  std::vector<uint64_t> posted(nq, 0), done(nq, 0), last_signaled(nq, 0);
  std::vector<std::vector<SendWr>> lists(nq);
  for (size_t q = 0; q < nq; ++q) {
    lists[q].assign(static_cast<size_t>(list), MakeWr(p, o.op, q, size, 0, 0, inl));
  }
  const uint64_t total = per_qp * nq;
  uint64_t total_done = 0;
  // Simulated host threads (contract 6): QP q is thread q % T's and completes on its CQ.
  const size_t nt = c.thread_cqs.empty() ? 1 : c.thread_cqs.size();
  // Per thread, the QPs that may post: all at first, then those with new completions, in
  // ascending order (what a scan of every QP would post, at a cost per CQE rather than
  // per QP).
  std::vector<std::vector<size_t>> ready(nt);
  for (size_t q = 0; q < nq; ++q) ready[q % nt].push_back(q);
  std::vector<char> is_ready(nq, 1);
  std::vector<uint64_t> thread_left(nt, 0);  // WRs of the thread's QPs not yet completed
  for (size_t q = 0; q < nq; ++q) thread_left[q % nt] += per_qp;
  // --mr-size (bench_sweep.h contract 2): each WR to a pseudo-random offset of the region.
  const uint64_t step = std::max<uint64_t>(64, size);
  const uint64_t slots = p.server().buf_len > size ? (p.server().buf_len - size) / step + 1 : 1;
  uint64_t lcg = 0x9e3779b97f4a7c15ULL;  // the same sequence every run
  Settle(p);
  std::vector<WorkCompletion> got;
  WorkCompletion wc[64];  // outside the loop: a spinning thread's poll costs no 4 KiB clear
  const double wall0 = WallNow();
  const double cpu0 = CpuNow();
  const uint64_t t0 = p.backend()->NowNs();
  // With T > 1 the threads take turns in simulated-time order: the earliest free one acts.
  using Turn = std::pair<uint64_t, size_t>;  // (when, thread)
  std::priority_queue<Turn, std::vector<Turn>, std::greater<Turn>> turns;
  for (size_t k = 0; k < nt; ++k) {
    if (thread_left[k] > 0) turns.push({t0, k});  // a thread without QPs stays idle
  }
  while (total_done < total) {
    size_t k = 0;
    if (nt > 1) {
      k = turns.top().second;
      const uint64_t when = turns.top().first;
      turns.pop();
      const uint64_t now = p.backend()->NowNs();
      if (when > now) p.backend()->Advance(when - now);
      if (int rc = c.dev->UseHostThread(static_cast<int>(k), nullptr)) {
        *error = "host thread";
        return rc;
      }
    }
    const CqHandle cq = nt > 1 ? c.thread_cqs[k] : c.scq;
    bool progress = false;
    std::sort(ready[k].begin(), ready[k].end());
    for (size_t q : ready[k]) {
      is_ready[q] = 0;
      while (posted[q] < per_qp && posted[q] - done[q] + list <= static_cast<uint64_t>(depth)) {
        size_t n = static_cast<size_t>(std::min<uint64_t>(list, per_qp - posted[q]));
        std::vector<SendWr>& wrs = lists[q];
        wrs.resize(n, wrs.front());
        for (size_t i = 0; i < n; ++i) {
          uint64_t idx = posted[q] + i + 1;
          bool sig = idx % cq_mod == 0 || idx == per_qp;
          wrs[i].send_flags = (inl ? send_flag::kInline : 0) | (sig ? send_flag::kSignaled : 0);
          wrs[i].wr_id = sig ? (uint64_t{q} << 40) | (idx - last_signaled[q]) : 0;
          if (sig) last_signaled[q] = idx;
          if (o.mr_size) {
            lcg = lcg * 6364136223846793005ULL + 1442695040888963407ULL;
            wrs[i].remote_addr = reinterpret_cast<uint64_t>(p.server().buf) + (lcg >> 20) % slots * step;
          }
        }
        size_t bad = 0;
        if (int rc = c.dev->PostSend(c.qps[q], wrs, &bad)) {
          *error = "post_send failed";
          return rc;
        }
        posted[q] += n;
        progress = true;
      }
    }
    ready[k].clear();
    if (o.op == Op::kSend && local_server) {
      if (int rc = Replenish(p.server(), ud, size, error)) return rc;
    }
    got.clear();
    int n = c.dev->PollCq(cq, 64, wc);
    if (n < 0) return -n;
    if (n > 0) {
      got.assign(wc, wc + n);
    } else if (nt == 1) {
      if (int rc = WaitCqe(c, cq, o.events, &got, error, SpinFor(p))) return rc;
    }
    for (const WorkCompletion& w : got) {
      if (int rc = CheckWc(w, error)) return rc;
      size_t q = static_cast<size_t>(w.wr_id >> 40);
      if (q >= nq) continue;
      done[q] += w.wr_id & kCountMask;
      total_done += w.wr_id & kCountMask;
      thread_left[q % nt] -= std::min(thread_left[q % nt], w.wr_id & kCountMask);
      if (!is_ready[q]) {
        is_ready[q] = 1;
        ready[q % nt].push_back(q);
      }
    }
    if (nt > 1 && thread_left[k] > 0) {
      // Busy: the thread is next free when its posts and polls are done; idle: it spins on
      // its CQ and sees a new CQE within kSpinPollNs.
      uint64_t free_ns = 0;
      (void)c.dev->UseHostThread(static_cast<int>(k), &free_ns);
      const uint64_t now = p.backend()->NowNs();
      // Spinning threads poll on a common grid of kSpinPollNs, so the simulation advances
      // once per step for all of them.
      const uint64_t next_poll = (now / kSpinPollNs + 1) * kSpinPollNs;
      turns.push({progress || n > 0 ? std::max(free_ns, now) : std::max(free_ns, next_poll), k});
    }
  }
  if (nt > 1) (void)c.dev->UseHostThread(0, nullptr);  // later calls: the main thread's
  const uint64_t t1 = p.backend()->NowNs();
  out->size = size;
  out->iters = total;
  out->time_ns = std::max<uint64_t>(1, t1 - t0);
  double secs = static_cast<double>(out->time_ns) * 1e-9;
  double bytes = static_cast<double>(size) * static_cast<double>(total);
  out->mib_per_s = bytes / secs / 1048576.0;
  out->gb_per_s = bytes / secs * 1e-9;
  out->gbps = bytes * 8 / secs * 1e-9;
  out->mpps = static_cast<double>(total) / secs * 1e-6;
  out->speed.wall_s = WallNow() - wall0;
  out->speed.cpu_s = CpuNow() - cpu0;
  out->speed.wrs = total;
  out->speed.packets = total * PacketsPerMessage(o.op, p.config().type, size, p.path_mtu_bytes());
  out->depth = depth;
  ReportProgress(o, size, out->speed.wall_s);
  return 0;
}

int PrepareSink(BenchPair& p, const BenchOptions& o, uint64_t size, std::string* error) {
  if (o.op != Op::kSend) return 0;
  return FillRecvs(p.client(), p.config().type == QpType::kUd, size, error);
}

int ServeSink(BenchPair& p, const BenchOptions& o, uint64_t size, std::string* error) {
  if (o.op != Op::kSend) return 0;
  return Replenish(p.client(), p.config().type == QpType::kUd, size, error);
}

}  // namespace qptwin::bench
