// ibv_rereg_mr on the model: libibverbs' input checks, then the device's answer
// (Behaviour::rereg_mr_errno: rxe has no re-registration), else IBTA 11.2.8.3's
// Reregister Memory Region: a new translation (new buffer), PD or access, checked first.
#include <cerrno>

#include "model/engine/nic.h"
#include "model/engine/world.h"

namespace qptwin::model::engine {

int Nic::ReregMr(uint32_t ctx, uint32_t mr, int flags, uint32_t pd, size_t length,
                 AccessFlags access, Mr** out) {
  Mr* m = mrs_.ByHandle(mr);
  if (!m || m->ctx != ctx) return EINVAL;
  // libibverbs ibv_rereg_mr: IBV_REREG_MR_ERR_INPUT (EINVAL) before the provider is asked.
  if (flags & ~rereg_flag::kKnownMask) return EINVAL;
  const bool translation = flags & rereg_flag::kChangeTranslation;
  if (translation && length == 0) return EINVAL;
  // memory.h contract 4: a region at a bus address gets no buffer of this process, and a
  // rereg cannot name another address (model_backend.h ModelRegMrAt).
  if (translation && m->at_bus_address) return EINVAL;
  if (int err = profile().behaviour.rereg_mr_errno) return err;
  // IBTA 10.6.7.2.6: a region with memory windows bound to it is neither deregistered nor
  // reregistered (the same answer as DeregMr's; rxe has no rereg at all, above).
  if (mws_.BoundTo(mr) > 0) return profile().behaviour.dereg_mr_bound_mw_errno;
  const uint32_t new_pd = (flags & rereg_flag::kChangePd) ? pd : m->pd;
  const AccessFlags new_access = (flags & rereg_flag::kChangeAccess) ? access : m->access;
  auto p = pds_.find(new_pd);
  if (p == pds_.end() || p->second.ctx != ctx) return EINVAL;
  if (new_access & ~access::kKnownMask) return EINVAL;
  if ((new_access & (access::kRemoteWrite | access::kRemoteAtomic)) &&
      !(new_access & access::kLocalWrite)) {
    return EINVAL;  // ibv_reg_mr(3)
  }
  if (translation && (length > profile().device.max_mr_size || length > (size_t{1} << 36))) {
    return EINVAL;
  }
  if (!translation) {
    m->pd = new_pd;
    m->access = new_access;
    *out = m;
    return 0;
  }
  // A new translation: a new buffer, and new keys (IBTA: the keys may change).
  mrs_.Deregister(mr);
  Mr* fresh = mrs_.Register(mr, ctx, new_pd, length, new_access);
  if (fresh == nullptr) return ENOMEM;  // the old region is gone (ibv_rereg_mr(3) DO_FORK)
  InstallMrContexts(*fresh);
  *out = fresh;
  return 0;
}

}  // namespace qptwin::model::engine
