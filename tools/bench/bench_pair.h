// Two connected endpoints for a benchmark, through spec/backend.h only: the client posts,
// the server answers (receives, ping-pong). On the model they are two devices (mdev0 ->
// mdev1); on hw two opened contexts of one device (loopback), as perftest on one host.
//
// Contract:
//  1. Setup() creates per side one PD, one MR of buf_len bytes whatever the depth or the
//     number of QPs (ConfigFor: 2 x max(size, 64) + 4096, perftest's send and receive
//     halves), a send and a receive CQ (with a completion channel when events are on) and
//     `qps` QPs, and connects client QP i to server QP i (RC/UC) or creates AHs (UD). 0 or
//     the first errno, with *what saying which step failed. A message larger than the
//     port's max_msg_sz (rxe 8 MiB, cx6 1 GiB) is refused before anything is allocated:
//     EMSGSIZE.
//  2. Two processes (--server / --connect, bench_remote.h): SetupLocal() opens only this
//     process's side (client()) with its QPs in INIT and a random PSN each; after the peer's
//     data came over TCP, ConnectToPeer() brings them to RTS against it and fills server()
//     as the peer's shadow: no device, buf/rkey/qpns/buf_len are the peer's (buf is then a
//     remote address, never dereferenced).
//  3. Single-threaded; the Backend outlives the pair.
#pragma once

#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "spec/backend.h"
#include "tools/bench/bench_options.h"

namespace qptwin::bench {

struct Endpoint {
  std::unique_ptr<Device> dev;
  PdHandle pd;
  MrHandle mr;
  uint8_t* buf = nullptr;
  size_t buf_len = 0;
  uint32_t lkey = 0;
  uint32_t rkey = 0;
  ChannelHandle channel;
  CqHandle scq;
  CqHandle rcq;
  // --threads T (model): one send CQ per simulated host thread; client QP i completes on
  // thread_cqs[i % T] instead of scq. Empty with one thread.
  std::vector<CqHandle> thread_cqs;
  std::vector<QpHandle> qps;
  std::vector<uint32_t> qpns;
  std::unordered_map<uint32_t, size_t> qp_index;  // QP number -> index in qps (local QPs)
  std::vector<AhHandle> ahs;  // UD: the address of the peer's QP i
  std::vector<uint32_t> recvs;  // receives posted and not yet completed, per QP
  std::vector<uint32_t> psns;   // first send PSN, per QP (0 in one process)
  QpCap cap;
  uint32_t max_inline = 0;
  int gid_index = 0;
};

struct PairConfig {
  QpType type = QpType::kRc;
  int qps = 1;
  uint32_t send_depth = 128;
  uint32_t recv_depth = 512;
  int cq_depth = 1024;
  size_t buf_len = 65536;
  // The largest message of the runs, checked against the port's max_msg_sz. 0: the one
  // ConfigFor's layout of buf_len holds, (buf_len - 4096) / 2.
  uint64_t max_msg = 0;
  uint32_t inline_size = 0;
  uint32_t mtu = 0;  // 0: the port's active MTU
  bool events = false;
  int outs = 0;  // max_rd_atomic / max_dest_rd_atomic; 0 = the device's maximum (<= 16)
  int threads = 1;  // simulated host threads of the client (bench_threads.h); > 1: thread_cqs
};

// One QP of the other process, as it came over the out-of-band connection.
struct PeerQp {
  ConnectionInfo conn;
  uint32_t psn = 0;
  uint32_t mtu_bytes = 0;  // the path MTU the peer would use
  uint64_t addr = 0;       // its buffer
  uint32_t rkey = 0;
  uint64_t len = 0;
};

class BenchPair {
 public:
  explicit BenchPair(Backend* backend) : backend_(backend) {}
  ~BenchPair();

  [[nodiscard]] int Setup(const PairConfig& cfg, const std::string& device, std::string* what);
  // Creates, brings to RTS and connects QP i of both sides (also used by the warm-pool
  // experiment to time create-on-demand). 0 or errno.
  [[nodiscard]] int AddConnectedQp(std::string* what);

  // Two processes (contract 2). SetupLocal: 0 or errno with *what. ConnectToPeer: one PeerQp
  // per local QP; the path MTU becomes the smaller of both sides'. 0 or errno with *what.
  [[nodiscard]] int SetupLocal(const PairConfig& cfg, const std::string& device,
                               std::string* what);
  [[nodiscard]] int ConnectToPeer(const std::vector<PeerQp>& peer, std::string* what);

  Backend* backend() { return backend_; }
  Endpoint& client() { return side_[0]; }
  Endpoint& server() { return side_[1]; }
  const PairConfig& config() const { return cfg_; }
  uint32_t path_mtu_bytes() const { return mtu_bytes_; }
  int max_rd_atomic() const { return max_rd_atomic_; }

 private:
  int Open(Endpoint& e, const std::string& name, std::string* what);
  int CreateQp(Endpoint& e, uint32_t psn, std::string* what);
  int Connect(Endpoint& e, size_t i, const ConnectionInfo& info, uint32_t rq_psn,
              std::string* what);

  Backend* backend_;
  PairConfig cfg_;
  Endpoint side_[2];
  uint32_t mtu_bytes_ = 1024;
  Mtu mtu_ = Mtu::k1024;
  int max_rd_atomic_ = 1;
};

}  // namespace qptwin::bench
