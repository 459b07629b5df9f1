#include "tools/practice/test_env.h"

#include <cerrno>

namespace qptwin::practice {
namespace {

int OpenSide(Backend& be, const std::string& name, int cq_depth, size_t buf_len, Side* s) {
  if (int err = be.OpenDevice(name, &s->dev)) return err;
  if (int err = s->dev->AllocPd(&s->pd)) return err;
  if (int err = s->dev->CreateCq(cq_depth, ChannelHandle{}, &s->cq, nullptr)) return err;
  return s->dev->RegMr(s->pd, buf_len, kAllAccess, &s->mr, &s->buf, &s->lkey, &s->rkey);
}

}  // namespace

QpInitAttr Side::Init(uint32_t max_send_wr, uint32_t max_recv_wr) const {
  QpInitAttr init;
  init.qp_type = QpType::kRc;
  init.pd = pd;
  init.send_cq = cq;
  init.recv_cq = cq;
  init.cap.max_send_wr = max_send_wr;
  init.cap.max_recv_wr = max_recv_wr;
  init.cap.max_send_sge = 1;
  init.cap.max_recv_sge = 1;
  return init;
}

int MakeModelEnv(TestEnv* env, int cq_depth, size_t buf_len, int devices,
                 const std::string& profile) {
  model::ModelOptions opts;
  opts.devices = devices;
  opts.profile = profile;
  std::unique_ptr<Backend> backend = model::MakeModelBackend(opts);
  if (!backend) return ENODEV;
  return OpenEnv(std::move(backend), "mdev0", devices > 1 ? "mdev1" : "mdev0", env, cq_depth,
                 buf_len);
}

int OpenEnv(std::unique_ptr<Backend> backend, const std::string& local_dev,
            const std::string& peer_dev, TestEnv* env, int cq_depth, size_t buf_len) {
  if (!backend || env == nullptr) return EINVAL;
  env->backend = std::move(backend);
  if (int err = OpenSide(*env->backend, local_dev, cq_depth, buf_len, &env->local)) return err;
  return OpenSide(*env->backend, peer_dev, cq_depth, buf_len, &env->peer);
}

SendWr WriteWr(const Side& from, const Side& to, uint64_t wr_id, size_t off, uint32_t len,
               bool signaled) {
  SendWr wr;
  wr.wr_id = wr_id;
  wr.opcode = WrOpcode::kRdmaWrite;
  wr.sg_list = {from.At(off, len)};
  wr.remote_addr = to.Addr(off);
  wr.rkey = to.rkey;
  wr.send_flags = signaled ? send_flag::kSignaled : 0;
  return wr;
}

SendWr SendWrOf(const Side& from, uint64_t wr_id, size_t off, uint32_t len, bool signaled) {
  SendWr wr;
  wr.wr_id = wr_id;
  wr.opcode = WrOpcode::kSend;
  wr.sg_list = {from.At(off, len)};
  wr.send_flags = signaled ? send_flag::kSignaled : 0;
  return wr;
}

RecvWr RecvWrOf(const Side& on, uint64_t wr_id, size_t off, uint32_t len) {
  RecvWr wr;
  wr.wr_id = wr_id;
  wr.sg_list = {on.At(off, len)};
  return wr;
}

}  // namespace qptwin::practice
