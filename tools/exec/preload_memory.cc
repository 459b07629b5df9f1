// Protection domains and memory regions of model devices. An MR is the model's region with
// the program's pages mapped onto its buffer (user_memory.h); lkey and rkey are the model's.
#include <cerrno>

#include "tools/exec/preload.h"

using qptwin::exec::Ctx;
using qptwin::exec::Fail;
using qptwin::exec::IsModel;
using qptwin::exec::Model;
using qptwin::exec::ModelContext;
using qptwin::exec::ModelMr;
using qptwin::exec::ModelPd;
using qptwin::exec::Preload;
using qptwin::exec::Real;

namespace {

ibv_mr* RegMr(ibv_pd* pd, void* addr, size_t length, uint64_t iova, unsigned access) {
  // The optional access bits are hints a device without them ignores (verbs.h
  // IBV_ACCESS_OPTIONAL_RANGE; the kernel drops them).
  access &= ~static_cast<unsigned>(IBV_ACCESS_OPTIONAL_RANGE);
  auto* mr = new ModelMr();
  ModelContext* m = Ctx(pd->context);
  Preload& p = Preload::Get();
  int err = 0;
  p.Run([&] {
    auto* u = static_cast<uint8_t*>(addr);
    const size_t off = qptwin::exec::UserMemory::Offset(addr);
    uint8_t* buf = nullptr;
    uint32_t lkey = 0, rkey = 0;
    err = m->dev->RegMr(Model<ModelPd>(pd)->h, off + length, access, &mr->h, &buf, &lkey, &rkey);
    if (err) return;
    err = p.memory().Alias(u, length, buf);
    if (err) {
      (void)m->dev->DeregMr(mr->h);
      return;
    }
    mr->model_addr = buf + off;
    mr->mr.lkey = lkey;
    mr->mr.rkey = rkey;
    m->by_key[lkey] = mr;
  });
  if (err) {
    delete mr;
    return Fail<ibv_mr>(err);
  }
  mr->mr.context = pd->context;
  mr->mr.pd = pd;
  mr->mr.addr = addr;
  mr->mr.length = length;
  mr->mr.handle = mr->h.id;
  mr->iova = iova;
  mr->access = static_cast<int>(access);
  return &mr->mr;
}

}  // namespace

extern "C" {

ibv_pd* ibv_alloc_pd(ibv_context* context) {
  static auto real = Real(&ibv_alloc_pd, "ibv_alloc_pd");
  if (!IsModel(context)) return real(context);
  auto* pd = new ModelPd();
  int err = 0;
  Preload::Get().Run([&] { err = Ctx(context)->dev->AllocPd(&pd->h); });
  if (err) {
    delete pd;
    return Fail<ibv_pd>(err);
  }
  pd->pd.context = context;
  pd->pd.handle = pd->h.id;
  return &pd->pd;
}

int ibv_dealloc_pd(ibv_pd* pd) {
  static auto real = Real(&ibv_dealloc_pd, "ibv_dealloc_pd");
  if (!IsModel(pd->context)) return real(pd);
  int err = 0;
  Preload::Get().Run([&] { err = Ctx(pd->context)->dev->DeallocPd(Model<ModelPd>(pd)->h); });
  if (!err) delete Model<ModelPd>(pd);
  return err;
}

// The 1.0 prototype: access is an int (verbs.h's macro picks ibv_reg_mr_iova2 when it can).
#undef ibv_reg_mr
#undef ibv_reg_mr_iova
ibv_mr* ibv_reg_mr(ibv_pd* pd, void* addr, size_t length, int access) {
  static auto real = Real(&ibv_reg_mr, "ibv_reg_mr");
  if (!IsModel(pd->context)) return real(pd, addr, length, access);
  return RegMr(pd, addr, length, reinterpret_cast<uintptr_t>(addr), static_cast<unsigned>(access));
}

ibv_mr* ibv_reg_mr_iova(ibv_pd* pd, void* addr, size_t length, uint64_t iova, int access) {
  static auto real = Real(&ibv_reg_mr_iova, "ibv_reg_mr_iova", "IBVERBS_1.7");
  if (!IsModel(pd->context)) return real(pd, addr, length, iova, access);
  return RegMr(pd, addr, length, iova, static_cast<unsigned>(access));
}

ibv_mr* ibv_reg_mr_iova2(ibv_pd* pd, void* addr, size_t length, uint64_t iova, unsigned access) {
  static auto real = Real(&ibv_reg_mr_iova2, "ibv_reg_mr_iova2", "IBVERBS_1.8");
  if (!IsModel(pd->context)) return real(pd, addr, length, iova, access);
  return RegMr(pd, addr, length, iova, access);
}

int ibv_dereg_mr(ibv_mr* mr) {
  static auto real = Real(&ibv_dereg_mr, "ibv_dereg_mr");
  if (!IsModel(mr->context)) return real(mr);
  ModelMr* m = Model<ModelMr>(mr);
  ModelContext* c = Ctx(mr->context);
  Preload& p = Preload::Get();
  int err = 0;
  p.Run([&] {
    err = c->dev->DeregMr(m->h);
    if (err) return;
    c->by_key.erase(mr->lkey);
    p.memory().Release(static_cast<uint8_t*>(mr->addr), mr->length);
  });
  if (!err) delete m;
  return err;
}

// rdma-core's rxe provider has no rereg_mr op, so libibverbs answers
// IBV_REREG_MR_ERR_INPUT with errno EOPNOTSUPP (pyverbs then skips its rereg tests, as on
// rxe0); spec/backend.h has no re-registration verb for the other profiles either.
int ibv_rereg_mr(ibv_mr* mr, int flags, ibv_pd* pd, void* addr, size_t length, int access) {
  static auto real = Real(&ibv_rereg_mr, "ibv_rereg_mr");
  if (!IsModel(mr->context)) return real(mr, flags, pd, addr, length, access);
  errno = EOPNOTSUPP;
  return IBV_REREG_MR_ERR_INPUT;
}

}  // extern "C"
