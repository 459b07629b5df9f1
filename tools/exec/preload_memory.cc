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

// rxe (kernel 6.1 rxe_rereg_user_mr) changes only the PD and the access flags, in place.
// The model has no re-registration verb: a change of PD or access is a new registration of
// the same pages, keys kept by the caller's ibv_mr only when the device says so; here the
// keys change, which rdma-core allows (ibv_rereg_mr(3): "lkey/rkey may change").
int ibv_rereg_mr(ibv_mr* mr, int flags, ibv_pd* pd, void* addr, size_t length, int access) {
  static auto real = Real(&ibv_rereg_mr, "ibv_rereg_mr");
  if (!IsModel(mr->context)) return real(mr, flags, pd, addr, length, access);
  if (flags & ~IBV_REREG_MR_FLAGS_SUPPORTED) return IBV_REREG_MR_ERR_INPUT;
  if (flags & IBV_REREG_MR_CHANGE_TRANSLATION) return IBV_REREG_MR_ERR_INPUT;  // rxe: EOPNOTSUPP
  if (flags == 0) return IBV_REREG_MR_ERR_INPUT;
  ModelMr* m = Model<ModelMr>(mr);
  ibv_pd* new_pd = (flags & IBV_REREG_MR_CHANGE_PD) ? pd : mr->pd;
  const int new_access = (flags & IBV_REREG_MR_CHANGE_ACCESS) ? access : m->access;
  if (new_pd == nullptr || new_pd->context != mr->context) return IBV_REREG_MR_ERR_INPUT;
  ibv_mr* fresh = RegMr(new_pd, mr->addr, mr->length, m->iova, static_cast<unsigned>(new_access));
  if (fresh == nullptr) return IBV_REREG_MR_ERR_CMD;
  ModelMr* f = Model<ModelMr>(fresh);
  ModelContext* c = Ctx(mr->context);
  Preload& p = Preload::Get();
  int err = 0;
  p.Run([&] {
    err = c->dev->DeregMr(m->h);
    if (err) return;
    c->by_key.erase(m->mr.lkey);
    p.memory().Release(static_cast<uint8_t*>(mr->addr), mr->length);
    // The caller keeps its ibv_mr pointer: move the fresh registration into it.
    c->by_key[f->mr.lkey] = m;
  });
  if (err) {
    ibv_dereg_mr(fresh);
    return IBV_REREG_MR_ERR_CMD;
  }
  m->h = f->h;
  m->model_addr = f->model_addr;
  m->access = f->access;
  m->mr.pd = new_pd;
  m->mr.lkey = f->mr.lkey;
  m->mr.rkey = f->mr.rkey;
  m->mr.handle = f->mr.handle;
  delete f;
  return 0;
}

}  // extern "C"
