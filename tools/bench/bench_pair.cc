#include "tools/bench/bench_pair.h"

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <random>
#include <string>

#include "spec/bring_up.h"

namespace qptwin::bench {
namespace {

int Fail(int rc, const std::string& step, std::string* what) {
  if (rc != 0 && what) *what = step;
  return rc;
}

// The bring-up values (spec/bring_up.h picks which of them each step sends).
BringUpParams PairParams(QpType type, Mtu mtu, int max_rd_atomic, uint32_t sq_psn,
                         uint32_t rq_psn) {
  BringUpParams p;
  // UC has no READ or atomics: grant what it can carry.
  if (type == QpType::kUc) p.access = access::kLocalWrite | access::kRemoteWrite;
  p.path_mtu = mtu;
  p.sq_psn = sq_psn;
  p.rq_psn = rq_psn;
  p.min_rnr_timer = 12;  // 0.64 ms, as perftest
  p.max_rd_atomic = static_cast<uint8_t>(max_rd_atomic);
  p.max_dest_rd_atomic = static_cast<uint8_t>(max_rd_atomic);
  return p;
}

}  // namespace

BenchPair::~BenchPair() {
  for (Endpoint& e : side_) {
    if (!e.dev) continue;
    for (QpHandle q : e.qps) (void)e.dev->DestroyQp(q);
    for (AhHandle a : e.ahs) (void)e.dev->DestroyAh(a);
    if (e.scq) (void)e.dev->DestroyCq(e.scq);
    for (CqHandle c : e.thread_cqs) (void)e.dev->DestroyCq(c);
    if (e.rcq) (void)e.dev->DestroyCq(e.rcq);
    if (e.channel) (void)e.dev->DestroyCompChannel(e.channel);
    if (e.mr) (void)e.dev->DeregMr(e.mr);
    if (e.pd) (void)e.dev->DeallocPd(e.pd);
  }
}

int BenchPair::Open(Endpoint& e, const std::string& name, std::string* what) {
  if (int rc = backend_->OpenDevice(name, &e.dev)) return Fail(rc, "open device " + name, what);
  DeviceAttr da;
  PortAttr pa;
  if (int rc = e.dev->QueryDevice(&da)) return Fail(rc, "query device", what);
  if (int rc = e.dev->QueryPort(1, &pa)) return Fail(rc, "query port", what);
  if (int rc = e.dev->DefaultGidIndex(1, &e.gid_index)) return Fail(rc, "gid index", what);
  // perftest refuses it too ("Max msg size is ..."); the device would fail every WR.
  const uint64_t msg = cfg_.max_msg != 0       ? cfg_.max_msg
                       : cfg_.buf_len > 4096 ? (cfg_.buf_len - 4096) / 2
                                             : cfg_.buf_len;
  if (pa.max_msg_sz != 0 && msg > pa.max_msg_sz) {
    return Fail(EMSGSIZE,
                "-s " + std::to_string(msg) + ": larger than the port's max_msg_sz of " +
                    std::to_string(pa.max_msg_sz) + " B on " + e.dev->Name(),
                what);
  }
  Mtu m = pa.active_mtu;
  if (cfg_.mtu) {
    for (Mtu c : {Mtu::k256, Mtu::k512, Mtu::k1024, Mtu::k2048, Mtu::k4096}) {
      if (MtuBytes(c) == cfg_.mtu) m = c;
    }
    if (static_cast<int>(m) > static_cast<int>(pa.max_mtu)) m = pa.max_mtu;
  }
  mtu_ = m;
  mtu_bytes_ = MtuBytes(m);
  max_rd_atomic_ = std::max(1, std::min({da.max_qp_rd_atom, da.max_qp_init_rd_atom, 16}));
  if (cfg_.outs > 0) max_rd_atomic_ = std::min(max_rd_atomic_, cfg_.outs);
  e.max_inline = std::min<uint32_t>(cfg_.inline_size, static_cast<uint32_t>(da.max_inline_data));
  if (int rc = e.dev->AllocPd(&e.pd)) return Fail(rc, "alloc pd", what);
  e.buf_len = cfg_.buf_len;
  if (int rc = e.dev->RegMr(e.pd, e.buf_len, access::kAll, &e.mr, &e.buf, &e.lkey, &e.rkey)) {
    return Fail(rc, "reg mr", what);
  }
  if (cfg_.events) {
    if (int rc = e.dev->CreateCompChannel(&e.channel)) return Fail(rc, "comp channel", what);
  }
  const int cq_depth = da.max_cqe > 0 ? std::max(1, std::min(cfg_.cq_depth, da.max_cqe))
                                       : cfg_.cq_depth;
  if (int rc = e.dev->CreateCq(cq_depth, e.channel, &e.scq, nullptr)) {
    return Fail(rc, "create send cq", what);
  }
  if (int rc = e.dev->CreateCq(cq_depth, e.channel, &e.rcq, nullptr)) {
    return Fail(rc, "create recv cq", what);
  }
  if (&e == &side_[0] && cfg_.threads > 1) {
    // Each thread's CQ holds every send WR of its own QPs (QP i is thread i % T's).
    const uint64_t per_thread = (static_cast<uint64_t>(cfg_.qps) + cfg_.threads - 1) / cfg_.threads;
    int depth = static_cast<int>(std::min<uint64_t>(1 << 30, per_thread * cfg_.send_depth + 64));
    if (da.max_cqe > 0) depth = std::min(depth, da.max_cqe);
    for (int k = 0; k < cfg_.threads; ++k) {
      CqHandle cq;
      if (int rc = e.dev->CreateCq(depth, ChannelHandle{}, &cq, nullptr)) {
        return Fail(rc, "create thread cq", what);
      }
      e.thread_cqs.push_back(cq);
    }
  }
  return 0;
}

int BenchPair::CreateQp(Endpoint& e, uint32_t psn, std::string* what) {
  QpInitAttr init;
  init.qp_type = cfg_.type;
  init.pd = e.pd;
  init.send_cq = e.thread_cqs.empty() ? e.scq : e.thread_cqs[e.qps.size() % e.thread_cqs.size()];
  init.recv_cq = e.rcq;
  init.cap = QpCap{cfg_.send_depth, cfg_.recv_depth, 1, 1, e.max_inline};
  QpHandle qp;
  if (int rc = e.dev->CreateQp(init, &qp, &e.cap)) return Fail(rc, "create qp", what);
  uint32_t qpn = 0;
  if (int rc = e.dev->QpNum(qp, &qpn)) return Fail(rc, "qp num", what);
  e.qp_index[qpn] = e.qps.size();
  e.qps.push_back(qp);
  e.qpns.push_back(qpn);
  e.recvs.push_back(0);
  e.psns.push_back(psn & 0xffffff);
  BringUpParams p = PairParams(cfg_.type, mtu_, max_rd_atomic_, e.psns.back(), 0);
  return Fail(BringUpTo(*e.dev, qp, p, ConnectionInfo{}, QpState::kInit), "modify to INIT",
              what);
}

int BenchPair::Connect(Endpoint& e, size_t i, const ConnectionInfo& info, uint32_t rq_psn,
                       std::string* what) {
  QpHandle qp = e.qps[i];
  BringUpParams p = PairParams(cfg_.type, mtu_, max_rd_atomic_, e.psns[i], rq_psn);
  if (int rc = BringUpTo(*e.dev, qp, p, info)) {
    QpState reached = QpState::kInit;
    QpAttr now;
    if (e.dev->QueryQp(qp, &now, nullptr) == 0) reached = now.qp_state;
    return Fail(rc, std::string("modify from ") + std::string(ToName(reached)), what);
  }
  if (cfg_.type == QpType::kUd) {
    AhHandle ah;
    if (int rc = e.dev->CreateAh(e.pd, AddressTo(info, e.gid_index), &ah)) {
      return Fail(rc, "create ah", what);
    }
    e.ahs.push_back(ah);
  }
  return 0;
}

int BenchPair::AddConnectedQp(std::string* what) {
  if (int rc = CreateQp(side_[0], 0, what)) return rc;
  if (int rc = CreateQp(side_[1], 0, what)) return rc;
  size_t i = side_[0].qps.size() - 1;
  ConnectionInfo info[2];
  for (int s = 0; s < 2; ++s) {
    if (int rc = side_[s].dev->LocalConnectionInfo(side_[s].qps[i], &info[s])) {
      return Fail(rc, "conn info", what);
    }
  }
  if (int rc = Connect(side_[0], i, info[1], side_[1].psns[i], what)) return rc;
  return Connect(side_[1], i, info[0], side_[0].psns[i], what);
}

int BenchPair::SetupLocal(const PairConfig& cfg, const std::string& device, std::string* what) {
  cfg_ = cfg;
  std::vector<std::string> devs = backend_->ListDevices();
  if (devs.empty()) return Fail(ENODEV, "no device", what);
  if (int rc = Open(side_[0], device.empty() ? devs[0] : device, what)) return rc;
  std::random_device rd;
  for (int i = 0; i < cfg.qps; ++i) {
    if (int rc = CreateQp(side_[0], rd(), what)) return rc;
  }
  return 0;
}

int BenchPair::ConnectToPeer(const std::vector<PeerQp>& peer, std::string* what) {
  Endpoint& e = side_[0];
  if (peer.size() != e.qps.size()) return Fail(EPROTO, "peer has another number of QPs", what);
  uint32_t mtu = mtu_bytes_;
  for (const PeerQp& p : peer) mtu = std::min(mtu, p.mtu_bytes);
  for (Mtu c : {Mtu::k256, Mtu::k512, Mtu::k1024, Mtu::k2048, Mtu::k4096}) {
    if (MtuBytes(c) == mtu) mtu_ = c;
  }
  mtu_bytes_ = MtuBytes(mtu_);
  Endpoint& shadow = side_[1];
  shadow.buf = reinterpret_cast<uint8_t*>(static_cast<uintptr_t>(peer[0].addr));
  shadow.buf_len = static_cast<size_t>(peer[0].len);
  shadow.rkey = peer[0].rkey;
  shadow.qpns.clear();
  for (size_t i = 0; i < peer.size(); ++i) {
    shadow.qpns.push_back(peer[i].conn.qp_num);
    shadow.psns.push_back(peer[i].psn);
    if (int rc = Connect(e, i, peer[i].conn, peer[i].psn, what)) return rc;
  }
  return 0;
}

int BenchPair::Setup(const PairConfig& cfg, const std::string& device, std::string* what) {
  cfg_ = cfg;
  std::vector<std::string> devs = backend_->ListDevices();
  if (devs.empty()) return Fail(ENODEV, "no device", what);
  std::string a = device.empty() ? devs[0] : device;
  std::string b = a;
  if (device.empty() && backend_->Kind() == "model" && devs.size() > 1) b = devs[1];
  if (int rc = Open(side_[0], a, what)) return rc;
  if (int rc = Open(side_[1], b, what)) return rc;
  for (int i = 0; i < cfg.qps; ++i) {
    if (int rc = AddConnectedQp(what)) return rc;
  }
  return 0;
}

}  // namespace qptwin::bench
