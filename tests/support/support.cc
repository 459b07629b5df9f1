#include "tests/support/support.h"

#include <cerrno>

#include "hw/verbs_backend.h"
#include "spec/vocabulary.h"

namespace qptwin::testing {

// ---- Backends -------------------------------------------------------------------------------

BackendChoice ModelChoice(const std::string& profile) {
  BackendChoice c;
  c.name = "model_" + profile;
  c.model.profile = profile;
  return c;
}

BackendChoice HwChoice() {
  BackendChoice c;
  c.name = "hw";
  c.hw = true;
  return c;
}

std::unique_ptr<Backend> MakeBackend(const BackendChoice& choice, std::string* why) {
  std::unique_ptr<Backend> b;
  if (!choice.hw) {
    b = model::MakeModelBackend(choice.model);
    if (!b && why) *why = "unknown model profile " + choice.model.profile;
    return b;
  }
  b = hw::MakeVerbsBackend(hw::VerbsOptions{});
  if (!b || b->ListDevices().empty()) {
    if (why) *why = "no RDMA device on this machine (run inside tools/rxe-vm/run for Soft-RoCE)";
    return nullptr;
  }
  return b;
}

void ReportUnavailable(const BackendChoice& choice, const std::string& why) {
  const std::string message = choice.name + " unavailable: " + why;
  if (choice.hw) GTEST_SKIP() << message;
  ADD_FAILURE() << message;
}

std::unique_ptr<Backend> MakeBackendOrSkip(const BackendChoice& choice) {
  std::string why;
  std::unique_ptr<Backend> b = MakeBackend(choice, &why);
  if (!b) ReportUnavailable(choice, why);
  return b;
}

std::unique_ptr<Backend> RxeModel(double loss, uint64_t seed) {
  model::ModelOptions o;
  o.loss_rate = loss;
  o.seed = seed;
  return model::MakeModelBackend(o);
}

// ---- A QP with its PD, CQs and MR ---------------------------------------------------------

QpInitAttr Side::Init(uint32_t max_send_wr, uint32_t max_recv_wr, uint32_t max_sge,
                      QpType qp_type) const {
  QpInitAttr init;
  init.qp_type = qp_type;
  init.pd = pd;
  init.send_cq = scq;
  init.recv_cq = rcq;
  init.cap.max_send_wr = max_send_wr;
  init.cap.max_recv_wr = max_recv_wr;
  init.cap.max_send_sge = max_sge;
  init.cap.max_recv_sge = max_sge;
  return init;
}

Side MakeSide(Backend& be, const std::string& dev_name, const SideOptions& o) {
  std::unique_ptr<Device> opened;
  EXPECT_EQ(be.OpenDevice(dev_name, &opened), 0) << dev_name;
  if (!opened) return Side{};
  return MakeSideOn(std::move(opened), o);
}

int CreateSide(std::shared_ptr<Device> dev, const SideOptions& o, PdHandle pd, Side* out) {
  Side& s = *out;
  s = Side{};
  s.type = o.type;
  s.dev = std::move(dev);
  s.pd = pd;
  if (!s.pd) {
    if (int err = s.dev->AllocPd(&s.pd)) return err;
  }
  if (int err = s.dev->CreateCq(o.cq_depth, ChannelHandle{}, &s.scq, nullptr)) return err;
  s.rcq = s.scq;
  if (!o.one_cq) {
    if (int err = s.dev->CreateCq(o.cq_depth, ChannelHandle{}, &s.rcq, nullptr)) return err;
  }
  if (int err = s.dev->RegMr(s.pd, o.buf_len, o.mr_access, &s.mr, &s.buf, &s.lkey, &s.rkey)) {
    return err;
  }
  if (!o.create_qp) return 0;
  QpInitAttr init = s.Init(0, 0, 0, o.type);
  init.cap = o.cap;
  init.sq_sig_all = o.sq_sig_all;
  if (int err = s.dev->CreateQp(init, &s.qp, &s.cap)) return err;
  return s.dev->QpNum(s.qp, &s.qpn);
}

Side MakeSideOn(std::shared_ptr<Device> dev, const SideOptions& o, PdHandle pd) {
  Side s;
  EXPECT_EQ(CreateSide(std::move(dev), o, pd, &s), 0) << ToName(o.type) << " side";
  return s;
}

Side SiblingQp(const Side& base, const QpInitAttr& init) {
  Side s = base;
  s.type = init.qp_type;
  EXPECT_EQ(s.dev->CreateQp(init, &s.qp, &s.cap), 0);
  EXPECT_EQ(s.dev->QpNum(s.qp, &s.qpn), 0);
  return s;
}

SidePair ConnectedSides(std::unique_ptr<Backend> be, const SideOptions& o) {
  SidePair p;
  p.be = std::move(be);
  EXPECT_NE(p.be, nullptr);
  if (!p.be) return p;
  p.a = MakeSide(*p.be, "mdev0", o);
  p.b = MakeSide(*p.be, "mdev1", o);
  Connect(p.a, p.b);
  return p;
}

// ---- Bring-up ---------------------------------------------------------------------------------

BringUpParams SideParams() {
  BringUpParams p;
  p.sq_psn = 100;
  p.rq_psn = 100;
  p.min_rnr_timer = 1;
  p.max_rd_atomic = 4;
  p.max_dest_rd_atomic = 4;
  return p;
}

int StepTo(Side& s, const Side* peer, QpState next, const BringUpParams& p) {
  QpState cur;
  switch (next) {
    case QpState::kInit: cur = QpState::kReset; break;
    case QpState::kRtr: cur = QpState::kInit; break;
    case QpState::kRts: cur = QpState::kRtr; break;
    default: return EINVAL;
  }
  ConnectionInfo info;
  if (peer != nullptr) {
    if (int err = peer->dev->LocalConnectionInfo(peer->qp, &info)) return err;
  }
  QpAttr a;
  if (int err = BringUpAttr(*s.dev, p, info, &a)) return err;
  return ModifyOnMinimumMask(*s.dev, s.qp, s.type, cur, next, a);
}

int ToInit(Side& s, AccessFlags qp_access, uint32_t qkey) {
  BringUpParams p = SideParams();
  p.access = qp_access;
  p.qkey = qkey;
  return StepTo(s, nullptr, QpState::kInit, p);
}

int ToRtr(Side& s, const Side& peer, uint8_t min_rnr_timer, Mtu mtu) {
  BringUpParams p = SideParams();
  p.min_rnr_timer = min_rnr_timer;
  p.path_mtu = mtu;
  return StepTo(s, &peer, QpState::kRtr, p);
}

int ToRts(Side& s, uint8_t timeout, uint8_t retry_cnt, uint8_t rnr_retry) {
  BringUpParams p = SideParams();
  p.timeout = timeout;
  p.retry_cnt = retry_cnt;
  p.rnr_retry = rnr_retry;
  return StepTo(s, nullptr, QpState::kRts, p);
}

void Connect(Side& a, Side& b, const BringUpParams& params) {
  ASSERT_EQ(ConnectPair(*a.dev, a.qp, *b.dev, b.qp, params), 0)
      << ToName(a.type) << " QPs " << a.qpn << " and " << b.qpn;
}

void Connect(Side& a, Side& b, AccessFlags access) {
  BringUpParams p = SideParams();
  p.access = access;
  Connect(a, b, p);
}

// ---- Work requests and completions ------------------------------------------------------

SendWr Wr(uint64_t id, WrOpcode op, std::vector<Sge> sges, SendFlags flags) {
  SendWr w;
  w.wr_id = id;
  w.opcode = op;
  w.sg_list = std::move(sges);
  w.send_flags = flags;
  return w;
}

RecvWr Rwr(uint64_t id, std::vector<Sge> sges) {
  RecvWr r;
  r.wr_id = id;
  r.sg_list = std::move(sges);
  return r;
}

SendWr WriteWr(const Side& from, const Side& to, uint64_t id, size_t off, uint32_t len,
               bool signaled) {
  return RemoteWr(id, WrOpcode::kRdmaWrite, from.At(off, len), to, off,
                  signaled ? send_flag::kSignaled : 0);
}

SendWr RemoteWr(uint64_t id, WrOpcode op, Sge local, const Side& to, size_t remote_off,
                SendFlags flags) {
  SendWr w = Wr(id, op, {local}, flags);
  w.remote_addr = to.Addr(remote_off);
  w.rkey = to.rkey;
  return w;
}

std::vector<WorkCompletion> Wait(Side& s, CqHandle cq, int n, uint64_t timeout_ns) {
  std::vector<WorkCompletion> out;
  int rc = s.dev->WaitForCompletions(cq, n, timeout_ns, &out);
  EXPECT_EQ(rc, 0) << "waited for " << n << " completions, got " << out.size();
  return out;
}

QpState StateOf(Side& s) {
  QpAttr a;
  EXPECT_EQ(s.dev->QueryQp(s.qp, &a, nullptr), 0);
  return a.qp_state;
}

}  // namespace qptwin::testing
