// The latency loops (bench_run.h contract 2).
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <thread>

#include "tools/bench/bench_run.h"

namespace qptwin::bench {
namespace {

constexpr uint64_t kWaitNs = 10'000'000'000;
constexpr uint32_t kQkey = 0x11111111;
constexpr uint32_t kGrh = 40;

double WallNow() {
  using namespace std::chrono;
  return duration<double>(steady_clock::now().time_since_epoch()).count();
}

// One end of a latency ping-pong: its endpoint, the peer it writes to, and its prebuilt WRs.
struct PingPongEnd {
  Endpoint* e;
  Endpoint* peer;
  size_t q = 0;
  std::vector<SendWr> wr;  // built once: the loop allocates nothing (it is timed on hw)
  std::vector<RecvWr> recv;
};

// Posts one WR of `size` bytes from `s` to its peer: from [0, size) of the local buffer to
// [half, half + size) of the peer's.
int Post(PingPongEnd& s, WrOpcode op, uint64_t size, uint64_t half, bool ud, bool inl,
         std::string* error) {
  if (s.wr.empty()) s.wr.resize(1);
  SendWr& w = s.wr[0];
  w.wr_id = 1;
  w.opcode = op;
  w.sg_list.resize(1);
  w.sg_list[0] = Sge{reinterpret_cast<uint64_t>(s.e->buf), static_cast<uint32_t>(size),
                     s.e->lkey};
  w.remote_addr = reinterpret_cast<uint64_t>(s.peer->buf) + half;
  w.rkey = s.peer->rkey;
  w.compare_add = 1;
  w.send_flags = send_flag::kSignaled | (inl ? send_flag::kInline : 0);
  if (ud) {
    w.ah = s.e->ahs[s.q];
    w.remote_qpn = s.peer->qpns[s.q];
    w.remote_qkey = kQkey;
  }
  size_t bad = 0;
  int rc = s.e->dev->PostSend(s.e->qps[s.q], s.wr, &bad);
  if (rc) *error = "post_send failed";
  return rc;
}

int WaitOne(Endpoint& e, CqHandle cq, bool events, Backend* spin, std::string* error) {
  thread_local std::vector<WorkCompletion> wc;
  wc.clear();
  if (int rc = WaitCqe(e, cq, events, &wc, error, spin)) return rc;
  if (wc.empty()) {
    *error = "a completion event without a completion";
    return EIO;
  }
  if (wc[0].status != WcStatus::kSuccess) {
    *error = "completion with status " + std::string(ToName(wc[0].status));
    return EIO;
  }
  return 0;
}

int RecvOne(PingPongEnd& s, size_t q, uint64_t len, std::string* error) {
  Endpoint& e = *s.e;
  if (s.recv.empty()) {
    s.recv.resize(1);
    // The whole second half: receives left over from a smaller size still fit a larger one.
    s.recv[0].sg_list.push_back(
        Sge{reinterpret_cast<uint64_t>(e.buf) + e.buf_len / 2,
            static_cast<uint32_t>(std::max<uint64_t>(len, e.buf_len / 2)), e.lkey});
  }
  size_t bad = 0;
  int rc = e.dev->PostRecv(e.qps[q], s.recv, &bad);
  if (rc) *error = "post_recv failed";
  if (rc == 0) ++e.recvs[q];
  return rc;
}

// Polls the byte at `p` until it equals v: real polling on hw, steps of simulated time on
// the model (the model writes memory when the data arrives).
int PollByte(Backend* be, volatile uint8_t* p, uint8_t v, uint64_t step, std::string* error) {
  const uint64_t start = be->NowNs();
  const bool model = be->Kind() == "model";
  for (uint64_t spins = 1; *p != v; ++spins) {
    if (model) be->Advance(step);
    // hw: read the clock rarely (it can be a system call in a VM).
    if ((model || spins % 4096 == 0) && be->NowNs() - start > kWaitNs) {
      *error = "the peer's write did not arrive within 10 s";
      return ETIMEDOUT;
    }
  }
  return 0;
}

// The echo side of a ping-pong: o.iters times, waits for the peer's message (a receive, or
// the last byte of the peer's WRITE) and answers with the same.
int EchoLoop(PingPongEnd& ss, Backend* be, Backend* spin, const BenchOptions& o, WrOpcode op,
             uint64_t size, uint64_t half, bool ud, bool inl, uint64_t recv_len,
             std::string* error) {
  Endpoint& s = *ss.e;
  for (uint64_t i = 0; i < o.iters; ++i) {
    if (op == WrOpcode::kSend) {
      if (int rc = WaitOne(s, s.rcq, o.events, spin, error)) return rc;
      --s.recvs[0];
      if (int rc = RecvOne(ss, 0, recv_len, error)) return rc;
    } else {
      const uint8_t v = static_cast<uint8_t>(i % 255 + 1);
      if (int rc = PollByte(be, s.buf + half + size - 1, v, o.lat_poll_ns, error)) return rc;
      s.buf[size - 1] = v;
    }
    if (int rc = Post(ss, op, size, half, ud, inl, error)) return rc;
    if (int rc = WaitOne(s, s.scq, false, spin, error)) return rc;
  }
  return 0;
}

// The timing side of a ping-pong: times a full round trip and records half of it, as
// perftest does.
int PingLoop(PingPongEnd& cs, Backend* be, Backend* spin, const BenchOptions& o, WrOpcode op,
             uint64_t size, uint64_t half, bool ud, bool inl, uint64_t recv_len,
             std::vector<double>* us, std::string* error) {
  Endpoint& c = *cs.e;
  for (uint64_t i = 0; i < o.iters; ++i) {
    const uint8_t v = static_cast<uint8_t>(i % 255 + 1);
    if (op == WrOpcode::kRdmaWrite) c.buf[size - 1] = v;
    const uint64_t t0 = be->NowNs();
    if (int rc = Post(cs, op, size, half, ud, inl, error)) return rc;
    if (op == WrOpcode::kSend) {
      if (int rc = WaitOne(c, c.rcq, o.events, spin, error)) return rc;
    } else {
      if (int rc = PollByte(be, c.buf + half + size - 1, v, o.lat_poll_ns, error)) return rc;
    }
    const uint64_t t1 = be->NowNs();
    us->push_back(static_cast<double>(t1 - t0) * 1e-3 / 2);
    if (op == WrOpcode::kSend) {
      --c.recvs[0];
      if (int rc = RecvOne(cs, 0, recv_len, error)) return rc;
    }
    if (int rc = WaitOne(c, c.scq, false, spin, error)) return rc;
  }
  return 0;
}

// hw ping-pong with each side in its own thread, as perftest runs client and server as two
// processes: on rxe the sender's ibv_post_send does the protocol work in its own system call
// (rxe_post_send runs the requester in process context), so with one thread the reply could
// only be posted once the whole send path had returned; with two the peer answers meanwhile.
int PingPongThreads(PingPongEnd& cs, PingPongEnd& ss, Backend* be, Backend* spin, const BenchOptions& o,
                    WrOpcode op, uint64_t size, uint64_t half, bool ud, bool inl,
                    uint64_t recv_len, std::vector<double>* us, std::string* error) {
  int server_rc = 0;
  std::string server_error;
  std::thread server([&] {
    server_rc = EchoLoop(ss, be, spin, o, op, size, half, ud, inl, recv_len, &server_error);
  });
  int rc = PingLoop(cs, be, spin, o, op, size, half, ud, inl, recv_len, us, error);
  server.join();
  if (rc == 0 && server_rc != 0) {
    *error = "peer thread: " + server_error;
    rc = server_rc;
  }
  return rc;
}

// Tops the receive queue of QP 0 of `side` up to 64 (earlier sizes left some).
int TopUp(PingPongEnd& side, uint64_t recv_len, std::string* error) {
  Endpoint* e = side.e;
  while (e->recvs[0] < std::min<uint32_t>(64, e->cap.max_recv_wr)) {
    if (int rc = RecvOne(side, 0, recv_len, error)) return rc;
  }
  return 0;
}

}  // namespace

int RunLat(BenchPair& p, const BenchOptions& o, uint64_t size, LatResult* out, std::string* error) {
  Backend* be = p.backend();
  Endpoint& c = p.client();
  Endpoint& s = p.server();
  const bool ud = p.config().type == QpType::kUd;
  const bool inl = (o.op == Op::kWrite || o.op == Op::kSend) && size <= c.max_inline;
  const uint64_t half = c.buf_len / 2;
  const uint64_t recv_len = size + (ud ? kGrh : 0);
  Backend* spin = SpinFor(p);
  PingPongEnd cs{&c, &s, 0, {}, {}};
  PingPongEnd ss{&s, &c, 0, {}, {}};
  std::vector<double> us;
  us.reserve(o.iters);
  // Two processes: the server is the peer's shadow; the other process echoes.
  const bool remote = s.dev == nullptr;
  if (o.op == Op::kSend) {  // top up to 64 receives per side (earlier sizes left some)
    for (PingPongEnd* side : {&cs, &ss}) {
      if (!side->e->dev) continue;
      if (int rc = TopUp(*side, recv_len, error)) return rc;
    }
  }
  Settle(p);
  const double wall0 = WallNow();
  const bool threads = spin != nullptr && (o.op == Op::kSend || o.op == Op::kWrite);
  if (threads) {
    const WrOpcode op = o.op == Op::kSend ? WrOpcode::kSend : WrOpcode::kRdmaWrite;
    const bool ud_op = ud && op == WrOpcode::kSend;
    int rc = remote ? PingLoop(cs, be, spin, o, op, size, half, ud_op, inl, recv_len, &us, error)
                    : PingPongThreads(cs, ss, be, spin, o, op, size, half, ud_op, inl, recv_len,
                                      &us, error);
    if (rc) return rc;
  }
  for (uint64_t i = 0; i < (threads ? 0 : o.iters); ++i) {
    const uint64_t t0 = be->NowNs();
    switch (o.op) {
      case Op::kSend: {
        if (int rc = Post(cs, WrOpcode::kSend, size, half, ud, inl, error)) return rc;
        if (int rc = WaitOne(s, s.rcq, o.events, spin, error)) return rc;
        --s.recvs[0];
        if (int rc = RecvOne(ss, 0, recv_len, error)) return rc;
        if (int rc = Post(ss, WrOpcode::kSend, size, half, ud, inl, error)) return rc;
        if (int rc = WaitOne(c, c.rcq, o.events, spin, error)) return rc;
        --c.recvs[0];
        if (int rc = RecvOne(cs, 0, recv_len, error)) return rc;
        break;
      }
      case Op::kWrite: {
        uint8_t v = static_cast<uint8_t>(i % 255 + 1);
        c.buf[size - 1] = v;
        if (int rc = Post(cs, WrOpcode::kRdmaWrite, size, half, false, inl, error)) return rc;
        if (int rc = PollByte(be, s.buf + half + size - 1, v, o.lat_poll_ns, error)) return rc;
        s.buf[size - 1] = v;
        if (int rc = Post(ss, WrOpcode::kRdmaWrite, size, half, false, inl, error)) return rc;
        if (int rc = PollByte(be, c.buf + half + size - 1, v, o.lat_poll_ns, error)) return rc;
        break;
      }
      case Op::kRead:
        if (int rc = Post(cs, WrOpcode::kRdmaRead, size, half, false, false, error)) return rc;
        if (int rc = WaitOne(c, c.scq, o.events, spin, error)) return rc;
        break;
      case Op::kAtomic:
        if (int rc = Post(cs, WrOpcode::kAtomicFetchAndAdd, 8, half, false, false, error)) return rc;
        if (int rc = WaitOne(c, c.scq, o.events, spin, error)) return rc;
        break;
    }
    const uint64_t t1 = be->NowNs();
    const bool pingpong = o.op == Op::kSend || o.op == Op::kWrite;
    us.push_back(static_cast<double>(t1 - t0) * 1e-3 / (pingpong ? 2 : 1));
    if (pingpong) {  // reap the ping-pong's own send CQEs (already there: ACKed long ago)
      if (int rc = WaitOne(c, c.scq, false, spin, error)) return rc;
      if (int rc = WaitOne(s, s.scq, false, spin, error)) return rc;
    }
  }
  out->size = size;
  out->stats = Summarize(std::move(us));
  out->speed.wall_s = WallNow() - wall0;
  uint64_t msgs = o.iters * ((o.op == Op::kSend || o.op == Op::kWrite) ? 2 : 1);
  out->speed.wrs = msgs;
  out->speed.packets = msgs * PacketsPerMessage(o.op, p.config().type, size, p.path_mtu_bytes());
  ReportProgress(o, size, out->speed.wall_s);
  return 0;
}

int PrepareEcho(BenchPair& p, const BenchOptions& o, uint64_t size, std::string* error) {
  if (o.op != Op::kSend) return 0;
  const bool ud = p.config().type == QpType::kUd;
  PingPongEnd ss{&p.client(), &p.server(), 0, {}, {}};
  return TopUp(ss, size + (ud ? kGrh : 0), error);
}

int EchoLat(BenchPair& p, const BenchOptions& o, uint64_t size, std::string* error) {
  if (o.op != Op::kSend && o.op != Op::kWrite) return 0;
  Endpoint& s = p.client();
  const bool ud = p.config().type == QpType::kUd;
  const bool inl = size <= s.max_inline;
  const WrOpcode op = o.op == Op::kSend ? WrOpcode::kSend : WrOpcode::kRdmaWrite;
  PingPongEnd ss{&s, &p.server(), 0, {}, {}};
  return EchoLoop(ss, p.backend(), SpinFor(p), o, op, size, s.buf_len / 2,
                  ud && op == WrOpcode::kSend, inl, size + (ud ? kGrh : 0), error);
}

}  // namespace qptwin::bench
