// Memory windows of model devices: the ibv_context_ops verbs.h's inline ibv_alloc_mw,
// ibv_dealloc_mw and ibv_bind_mw call (libibverbs exports none of the three: nothing to
// intercept). A window is the model's (spec/backend.h, Memory windows); the ibv_mw the program
// holds carries the model's rkey and handle. ibv_bind_mw (type 1) has checked the type and
// the PDs before the op runs (verbs.h); the op then does what providers/rxe rxe_bind_mw
// does: it posts a BIND_MW with ibv_inc_rkey of mw->rkey and moves mw->rkey on once posted.
// A type 2 window is bound by a BIND_MW the program posts (preload_ops.cc, preload_ex.cc);
// then, as with rxe, nothing writes mw->rkey: the program keeps the key it chose. Every bind
// names its window by mw->rkey as the program holds it then (SendWr/MwBind::mw_rkey), as
// providers/rxe does, so a rebind without the previous bind's rkey stored there fails
// with MW_BIND_ERR as on rxe.
#include <cerrno>

#include "tools/exec/datapath.h"
#include "tools/exec/preload.h"

namespace qptwin::exec {

ibv_mw* AllocMwOp(ibv_pd* pd, ibv_mw_type type) {
  ModelContext* m = Ctx(pd->context);
  auto* mw = new ModelMw();
  uint32_t rkey = 0;
  int err = 0;
  Preload::Get().Run([&] {
    // Types other than 1 and 2 reach the model as they are: it refuses them (EINVAL, as
    // ib_uverbs_alloc_mw on rxe).
    err = m->dev->AllocMw(Model<ModelPd>(pd)->h, static_cast<MwType>(type), &mw->h, &rkey);
  });
  if (err) {
    delete mw;
    return Fail<ibv_mw>(err);
  }
  mw->mw.context = pd->context;
  mw->mw.pd = pd;
  mw->mw.rkey = rkey;
  mw->mw.handle = mw->h.id;
  mw->mw.type = type;
  return &mw->mw;
}

int DeallocMwOp(ibv_mw* mw) {
  ModelContext* m = Ctx(mw->context);
  auto* w = Model<ModelMw>(mw);
  int err = 0;
  Preload::Get().Run([&] {
    err = m->dev->DeallocMw(w->h);
    if (!err) ForgetWindow(m, mw->rkey);
  });
  if (!err) delete w;
  return err;
}

int BindMwOp(ibv_qp* qp, ibv_mw* mw, ibv_mw_bind* bind) {
  ModelContext* m = Ctx(mw->context);
  if (!IsModel(qp->context) || Ctx(qp->context) != m || bind == nullptr) return EINVAL;
  MwBind b;
  b.wr_id = bind->wr_id;
  b.send_flags = bind->send_flags;
  b.bind_info = BindInfo(bind->bind_info);
  b.mw_rkey = mw->rkey;  // rxe_bind_mw: ibv_inc_rkey(ibmw->rkey), the window named by it
  uint32_t rkey = 0;
  int err = 0;
  Preload::Get().Run([&] {
    err = m->dev->BindMw(Model<ModelQp>(qp)->h, Model<ModelMw>(mw)->h, b, &rkey);
    if (!err) NoteBind(m, rkey, bind->bind_info);
  });
  if (err) {
    errno = err;  // providers/rxe rxe_bind_mw sets errno and returns it
    return err;
  }
  mw->rkey = rkey;  // rxe_bind_mw: "user has to undo this if he gets an error wc"
  return 0;
}

}  // namespace qptwin::exec
