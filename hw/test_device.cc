#include "hw/test_device.h"

namespace qptwin::hw {

TestDevice OpenTestDevice() {
  TestDevice t;
  t.backend = MakeVerbsBackend(VerbsOptions{});
  if (t.backend->ListDevices().empty()) {
    t.unavailable = "ibv_get_device_list found none (run inside tools/rxe-vm/run)";
    return t;
  }
  int ret = t.backend->OpenDevice("", &t.device);
  if (ret != 0) {
    t.unavailable = "OpenDevice failed: " + std::string(ErrnoName(ret));
    t.device.reset();
  }
  return t;
}

namespace {

int CreateSide(Device* dev, PdHandle pd, Side* s) {
  int actual_cqe = 0;
  int ret = dev->CreateCq(64, ChannelHandle{}, &s->cq, &actual_cqe);
  if (ret != 0) return ret;
  QpInitAttr init;
  init.qp_type = QpType::kRc;
  init.pd = pd;
  init.send_cq = s->cq;
  init.recv_cq = s->cq;
  init.cap = {16, 16, 2, 2, 0};
  ret = dev->CreateQp(init, &s->qp, nullptr);
  if (ret != 0) return ret;
  AccessFlags acc =
      access::kLocalWrite | access::kRemoteWrite | access::kRemoteRead | access::kRemoteAtomic;
  return dev->RegMr(pd, kBufBytes, acc, &s->mr, &s->buf, &s->lkey, &s->rkey);
}

}  // namespace

int CreateRcPair(Device* dev, RcPair* out) {
  int ret = dev->AllocPd(&out->pd);
  if (ret == 0) ret = CreateSide(dev, out->pd, &out->a);
  if (ret == 0) ret = CreateSide(dev, out->pd, &out->b);
  return ret;
}

int ConnectRc(Device* dev, QpHandle qp, const ConnectionInfo& peer) {
  QpAttr a;
  a.qp_state = QpState::kInit;
  a.pkey_index = 0;
  a.port_num = 1;
  a.qp_access_flags =
      access::kLocalWrite | access::kRemoteWrite | access::kRemoteRead | access::kRemoteAtomic;
  int ret =
      dev->ModifyQp(qp, a, attr::kState | attr::kPkeyIndex | attr::kPort | attr::kAccessFlags);
  if (ret != 0) return ret;
  int gid_index = 0;
  ret = dev->DefaultGidIndex(1, &gid_index);
  if (ret != 0) return ret;
  PortAttr port;
  ret = dev->QueryPort(1, &port);
  if (ret != 0) return ret;
  a.qp_state = QpState::kRtr;
  a.ah_attr = AddressTo(peer, gid_index);
  a.path_mtu = port.active_mtu;
  a.dest_qp_num = peer.qp_num;
  a.rq_psn = 100;
  a.max_dest_rd_atomic = 4;
  a.min_rnr_timer = 12;
  ret = dev->ModifyQp(qp, a,
                      attr::kState | attr::kAv | attr::kPathMtu | attr::kDestQpn | attr::kRqPsn |
                          attr::kMaxDestRdAtomic | attr::kMinRnrTimer);
  if (ret != 0) return ret;
  a.qp_state = QpState::kRts;
  a.sq_psn = 100;
  a.timeout = 14;
  a.retry_cnt = 7;
  a.rnr_retry = 7;
  a.max_rd_atomic = 4;
  return dev->ModifyQp(qp, a,
                       attr::kState | attr::kSqPsn | attr::kTimeout | attr::kRetryCnt |
                           attr::kRnrRetry | attr::kMaxQpRdAtomic);
}

int ConnectRcPair(Device* dev, const RcPair& pair) {
  ConnectionInfo info_a, info_b;
  int ret = dev->LocalConnectionInfo(pair.a.qp, &info_a);
  if (ret == 0) ret = dev->LocalConnectionInfo(pair.b.qp, &info_b);
  if (ret == 0) ret = ConnectRc(dev, pair.a.qp, info_b);
  if (ret == 0) ret = ConnectRc(dev, pair.b.qp, info_a);
  return ret;
}

}  // namespace qptwin::hw
