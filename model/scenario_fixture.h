// Test helpers for model scenarios: a backend with two devices, one QP per side with its
// own PD, CQs and one MR, and the usual RESET->INIT->RTR->RTS walk.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "model/model_backend.h"
#include "spec/backend.h"

namespace qptwin::model::testing {

inline constexpr AccessFlags kAllAccess = access::kLocalWrite | access::kRemoteWrite |
                                          access::kRemoteRead | access::kRemoteAtomic;

struct Side {
  std::shared_ptr<Device> dev;  // shared by the Sides of QPs on one opened device
  PdHandle pd;
  CqHandle scq;
  CqHandle rcq;
  QpHandle qp;
  MrHandle mr;
  uint8_t* buf = nullptr;
  uint32_t lkey = 0;
  uint32_t rkey = 0;
  uint32_t qpn = 0;
  QpType type = QpType::kRc;
  QpCap cap;  // as granted by the device

  uint64_t Addr(size_t off = 0) const { return reinterpret_cast<uint64_t>(buf) + off; }
  Sge At(size_t off, uint32_t len) const { return Sge{Addr(off), len, lkey}; }
};

struct SideOptions {
  QpType type = QpType::kRc;
  QpCap cap{16, 16, 4, 4, 64};
  size_t buf_len = 8192;
  AccessFlags mr_access = kAllAccess;
  int cq_depth = 64;
  bool sq_sig_all = false;
};

inline Side MakeSide(Backend& be, const std::string& dev_name, const SideOptions& o = {}) {
  Side s;
  s.type = o.type;
  std::unique_ptr<Device> opened;
  EXPECT_EQ(be.OpenDevice(dev_name, &opened), 0);
  s.dev = std::move(opened);
  EXPECT_EQ(s.dev->AllocPd(&s.pd), 0);
  EXPECT_EQ(s.dev->CreateCq(o.cq_depth, ChannelHandle{}, &s.scq, nullptr), 0);
  EXPECT_EQ(s.dev->CreateCq(o.cq_depth, ChannelHandle{}, &s.rcq, nullptr), 0);
  EXPECT_EQ(s.dev->RegMr(s.pd, o.buf_len, o.mr_access, &s.mr, &s.buf, &s.lkey, &s.rkey), 0);
  QpInitAttr init;
  init.qp_type = o.type;
  init.pd = s.pd;
  init.send_cq = s.scq;
  init.recv_cq = s.rcq;
  init.cap = o.cap;
  init.sq_sig_all = o.sq_sig_all;
  EXPECT_EQ(s.dev->CreateQp(init, &s.qp, &s.cap), 0);
  EXPECT_EQ(s.dev->QpNum(s.qp, &s.qpn), 0);
  return s;
}

// Another QP on the same opened device as `base` (sharing its PD, CQs and MR).
inline Side SiblingQp(const Side& base, const QpInitAttr& init) {
  Side s = base;
  s.type = init.qp_type;
  EXPECT_EQ(s.dev->CreateQp(init, &s.qp, nullptr), 0);
  EXPECT_EQ(s.dev->QpNum(s.qp, &s.qpn), 0);
  return s;
}

inline int ToInit(Side& s, AccessFlags qp_access = kAllAccess, uint32_t qkey = 0x11111111) {
  QpAttr a;
  a.qp_state = QpState::kInit;
  a.pkey_index = 0;
  a.port_num = 1;
  a.qp_access_flags = qp_access;
  a.qkey = qkey;
  AttrMask m = attr::kState | attr::kPkeyIndex | attr::kPort;
  m |= s.type == QpType::kUd ? attr::kQkey : attr::kAccessFlags;
  return s.dev->ModifyQp(s.qp, a, m);
}

inline int ToRtr(Side& s, const Side& peer, uint8_t min_rnr_timer = 1, Mtu mtu = Mtu::k1024) {
  QpAttr a;
  a.qp_state = QpState::kRtr;
  AttrMask m = attr::kState;
  if (s.type != QpType::kUd) {
    ConnectionInfo info;
    EXPECT_EQ(peer.dev->LocalConnectionInfo(peer.qp, &info), 0);
    int gid_index = 0;
    EXPECT_EQ(s.dev->DefaultGidIndex(1, &gid_index), 0);
    a.ah_attr = AddressTo(info, gid_index);
    a.path_mtu = mtu;
    a.dest_qp_num = info.qp_num;
    a.rq_psn = 100;
    m |= attr::kAv | attr::kPathMtu | attr::kDestQpn | attr::kRqPsn;
    if (s.type == QpType::kRc) {
      a.max_dest_rd_atomic = 4;
      a.min_rnr_timer = min_rnr_timer;
      m |= attr::kMaxDestRdAtomic | attr::kMinRnrTimer;
    }
  }
  return s.dev->ModifyQp(s.qp, a, m);
}

inline int ToRts(Side& s, uint8_t timeout = 14, uint8_t retry_cnt = 7, uint8_t rnr_retry = 7) {
  QpAttr a;
  a.qp_state = QpState::kRts;
  a.sq_psn = 100;
  AttrMask m = attr::kState | attr::kSqPsn;
  if (s.type == QpType::kRc) {
    a.timeout = timeout;
    a.retry_cnt = retry_cnt;
    a.rnr_retry = rnr_retry;
    a.max_rd_atomic = 4;
    m |= attr::kTimeout | attr::kRetryCnt | attr::kRnrRetry | attr::kMaxQpRdAtomic;
  }
  return s.dev->ModifyQp(s.qp, a, m);
}

inline void Connect(Side& a, Side& b, AccessFlags access = kAllAccess) {
  ASSERT_EQ(ToInit(a, access), 0);
  ASSERT_EQ(ToInit(b, access), 0);
  ASSERT_EQ(ToRtr(a, b), 0);
  ASSERT_EQ(ToRtr(b, a), 0);
  ASSERT_EQ(ToRts(a), 0);
  ASSERT_EQ(ToRts(b), 0);
}

inline SendWr Wr(uint64_t id, WrOpcode op, std::vector<Sge> sges, SendFlags flags = send_flag::kSignaled) {
  SendWr w;
  w.wr_id = id;
  w.opcode = op;
  w.sg_list = std::move(sges);
  w.send_flags = flags;
  return w;
}

inline RecvWr Rwr(uint64_t id, std::vector<Sge> sges) {
  RecvWr r;
  r.wr_id = id;
  r.sg_list = std::move(sges);
  return r;
}

inline std::vector<WorkCompletion> Wait(Side& s, CqHandle cq, int n, uint64_t timeout_ns = 1000000000) {
  std::vector<WorkCompletion> out;
  int rc = s.dev->WaitForCompletions(cq, n, timeout_ns, &out);
  EXPECT_EQ(rc, 0) << "waited for " << n << " completions, got " << out.size();
  return out;
}

inline QpState StateOf(Side& s) {
  QpAttr a;
  EXPECT_EQ(s.dev->QueryQp(s.qp, &a, nullptr), 0);
  return a.qp_state;
}

inline std::unique_ptr<Backend> Rxe(double loss = 0, uint64_t seed = 1) {
  ModelOptions o;
  o.loss_rate = loss;
  o.seed = seed;
  return MakeModelBackend(o);
}

}  // namespace qptwin::model::testing
