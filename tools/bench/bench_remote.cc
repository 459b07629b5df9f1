#include "tools/bench/bench_remote.h"

#include <algorithm>
#include <cerrno>
#include <memory>
#include <ostream>

#include "tools/bench/bench_pair.h"
#include "tools/bench/bench_run.h"
#include "hw/oob.h"

namespace qptwin::bench {
namespace {

namespace oob = hw::oob;

constexpr int kConnectMs = 30'000;
constexpr int kReplyMs = 120'000;  // a handshake step or a server's wind-down (TCG VMs are slow)
constexpr const char* kDiffer = "options differ from the server's: ";

oob::Params ParamsOf(const BenchOptions& o) {
  oob::Params p;
  p.test = o.test;
  p.size = o.size;
  p.all_sizes = o.all_sizes;
  p.iters = o.iters;
  p.qps = o.qps;
  p.tx_depth = o.tx_depth;
  p.conn = std::string(ToName(o.conn));
  p.mtu = o.mtu;
  return p;
}

class TwoProcess {
 public:
  TwoProcess(const BenchOptions& o, SessionResult* out, std::ostream& log, std::string* error)
      : o_(o), out_(out), log_(log), error_(error) {}

  int Run() {
    // The device first: without one, neither side can ever succeed, so fail at once
    // (before waiting for a peer that would only be told so).
    be_ = MakeBenchBackend(o_, error_);
    if (!be_) return 2;
    if (int code = Handshake()) return code;
    if (int code = SetUp()) return code;
    return o_.server ? Serve() : Measure();
  }

 private:
  // Reports a failure to the peer (best effort) and returns `code`.
  int Fail(int code) {
    std::string ignored;
    if (conn_.open()) (void)conn_.Send(oob::EncodeError(*error_), &ignored);
    return code;
  }

  int Handshake() {
    const oob::Params mine = ParamsOf(o_);
    oob::Message m;
    if (o_.server) {
      oob::Listener l;
      if (l.Listen(o_.port, error_)) return 1;
      log_ << "qptwin bench server: waiting for a client on TCP port " << l.port() << "\n"
           << std::flush;
      if (l.Accept(-1, &conn_, error_)) return 1;
      oob::Params theirs;
      if (conn_.Expect("params", &m, kReplyMs, error_) ||
          oob::DecodeParams(m, &theirs, error_)) {
        return Fail(1);
      }
      const std::string diff = oob::FirstDifference(mine, theirs);
      if (!diff.empty()) {
        *error_ = kDiffer + diff;
        (void)Fail(2);
        *error_ = "options differ from the client's (" + conn_.peer() + "): " + diff;
        return 2;
      }
      return conn_.Send(oob::EncodeControl("params_ok"), error_) ? 1 : 0;
    }
    if (oob::Connect(o_.connect, o_.port, kConnectMs, &conn_, error_)) return 1;
    if (conn_.Send(oob::EncodeParams(mine), error_)) return 1;
    if (conn_.Expect("params_ok", &m, kReplyMs, error_)) {
      return error_->find(kDiffer) != std::string::npos ? 2 : 1;
    }
    return 0;
  }

  int SetUp() {
    pair_ = std::make_unique<BenchPair>(be_.get());
    std::string what;
    if (int rc = pair_->SetupLocal(ConfigFor(o_, MaxSizeOf(o_), o_.tx_depth), o_.device, &what)) {
      *error_ = "setup failed at '" + what + "': errno " + std::to_string(rc);
      return Fail(rc == EMSGSIZE ? 2 : 1);  // a usage problem, as on one host
    }
    Endpoint& e = pair_->client();
    std::vector<std::string> lines;
    for (size_t i = 0; i < e.qps.size(); ++i) {
      ConnectionInfo ci;
      if (int rc = e.dev->LocalConnectionInfo(e.qps[i], &ci)) {
        *error_ = "connection info of QP " + std::to_string(i) + ": errno " + std::to_string(rc);
        return Fail(1);
      }
      oob::QpMessage q;
      q.qp_num = e.qpns[i];
      q.psn = e.psns[i];
      q.gid = ci.gid.raw;
      q.gid_index = e.gid_index;
      q.lid = ci.lid;
      q.link_layer = static_cast<uint8_t>(ci.link_layer);
      q.mtu = pair_->path_mtu_bytes();
      q.addr = reinterpret_cast<uint64_t>(e.buf);
      q.rkey = e.rkey;
      q.len = e.buf_len;
      lines.push_back(oob::EncodeQp(q));
    }
    auto send_mine = [&] {
      for (const std::string& l : lines) {
        if (conn_.Send(l, error_)) return 1;
      }
      return 0;
    };
    if (!o_.server && send_mine()) return 1;
    std::vector<PeerQp> peer;
    for (size_t i = 0; i < e.qps.size(); ++i) {
      oob::Message m;
      oob::QpMessage q;
      if (conn_.Expect("qp", &m, kReplyMs, error_) || oob::DecodeQp(m, &q, error_)) {
        return Fail(1);
      }
      if (q.len != e.buf_len) {
        *error_ = "the peer's buffer is " + std::to_string(q.len) + " bytes, this one " +
                  std::to_string(e.buf_len) + " (another qptwin version?)";
        return Fail(1);
      }
      PeerQp p;
      p.conn.qp_num = q.qp_num;
      p.conn.lid = q.lid;
      p.conn.gid.raw = q.gid;
      p.conn.link_layer = static_cast<LinkLayer>(q.link_layer);
      p.psn = q.psn;
      p.mtu_bytes = q.mtu;
      p.addr = q.addr;
      p.rkey = q.rkey;
      p.len = q.len;
      peer.push_back(p);
    }
    if (o_.server && send_mine()) return 1;
    std::string what2;
    if (int rc = pair_->ConnectToPeer(peer, &what2)) {
      *error_ = "connecting to the peer's QPs failed at '" + what2 + "': errno " +
                std::to_string(rc);
      return Fail(1);
    }
    oob::Message m;
    if (conn_.Send(oob::EncodeControl("rts"), error_)) return 1;
    if (conn_.Expect("rts", &m, kReplyMs, error_)) return Fail(1);
    return 0;
  }

  int Measure() {
    BenchPair& pair = *pair_;
    RunHeader& h = out_->header;
    h.test = o_.test;
    h.backend = "hw/" + pair.client().dev->Name() + " to server " + o_.connect + ":" +
                std::to_string(o_.port);
    h.clock = "real";
    h.conn = std::string(ToName(o_.conn));
    h.qps = o_.qps;
    h.tx_depth = o_.tx_depth;
    h.post_list = o_.post_list;
    h.cq_mod = o_.cq_mod;
    h.mtu = pair.path_mtu_bytes();
    h.inline_size = pair.client().max_inline;
    h.events = o_.events;
    oob::Message m;
    for (uint64_t size : SizesOf(o_, pair.path_mtu_bytes())) {
      if (conn_.Send(oob::EncodeControl("start", {{"size", std::to_string(size)}}), error_)) {
        return 1;
      }
      if (conn_.Expect("go", &m, kReplyMs, error_)) return Fail(1);
      int rc;
      if (o_.kind == Kind::kBw) {
        BwResult r;
        rc = RunBw(pair, o_, size, &r, error_);
        if (rc == 0) out_->bw.push_back(r);
      } else {
        LatResult r;
        rc = RunLat(pair, o_, size, &r, error_);
        if (rc == 0) out_->lat.push_back(r);
      }
      if (rc) return Fail(1);
      if (conn_.Send(oob::EncodeControl("done"), error_)) return 1;
      if (conn_.Expect("done", &m, kReplyMs, error_)) return Fail(1);
    }
    return conn_.Send(oob::EncodeControl("end"), error_) ? 1 : 0;
  }

  int Serve() {
    BenchPair& pair = *pair_;
    const std::vector<uint64_t> sizes = SizesOf(o_, pair.path_mtu_bytes());
    log_ << "qptwin bench server: " << o_.test << " for client " << conn_.peer() << " on hw/"
         << pair.client().dev->Name() << "\n"
         << std::flush;
    int runs = 0;
    for (;;) {
      oob::Message m;
      if (conn_.Recv(&m, -1, error_)) return Fail(1);
      if (m.kind == "end") break;
      if (m.kind != "start") {
        *error_ = "expected 'start' or 'end' from the client, got '" + m.kind + "'";
        return Fail(1);
      }
      auto it = m.fields.find("size");
      uint64_t size = 0;
      for (uint64_t s : sizes) {
        if (it != m.fields.end() && it->second == std::to_string(s)) size = s;
      }
      if (size == 0) {
        *error_ = "the client asked for a size this server does not run";
        return Fail(1);
      }
      const bool bw = o_.kind == Kind::kBw;
      if (bw ? PrepareSink(pair, o_, size, error_) : PrepareEcho(pair, o_, size, error_)) {
        return Fail(1);
      }
      if (conn_.Send(oob::EncodeControl("go"), error_)) return 1;
      if (bw && o_.op == Op::kSend) {
        // Reap and repost receives until the client says done (UD may drop messages, so
        // counting them would not tell the end).
        for (uint64_t spins = 1;; ++spins) {
          if (ServeSink(pair, o_, size, error_)) return Fail(1);
          if (spins % 256 != 0) continue;
          int rc = conn_.Recv(&m, 0, error_);
          if (rc == ETIMEDOUT) continue;
          if (rc) return Fail(1);
          break;
        }
      } else {
        if (!bw && EchoLat(pair, o_, size, error_)) return Fail(1);
        if (conn_.Recv(&m, -1, error_)) return Fail(1);
      }
      if (m.kind != "done") {
        *error_ = "expected 'done' from the client, got '" + m.kind + "'";
        return Fail(1);
      }
      if (conn_.Send(oob::EncodeControl("done"), error_)) return 1;
      ++runs;
    }
    log_ << "qptwin bench server: done (" << runs << (runs == 1 ? " size" : " sizes") << ")\n";
    return 0;
  }

  const BenchOptions& o_;
  SessionResult* out_;
  std::ostream& log_;
  std::string* error_;
  oob::Conn conn_;
  std::unique_ptr<Backend> be_;
  std::unique_ptr<BenchPair> pair_;  // destroyed before be_
};

}  // namespace

int RunTwoProcess(const BenchOptions& o, SessionResult* out, std::ostream& log,
                  std::string* error) {
  if (o.backend != "hw") {
    *error = "--server/--connect need --backend hw";
    return 2;
  }
  TwoProcess t(o, out, log, error);
  return t.Run();
}

}  // namespace qptwin::bench
