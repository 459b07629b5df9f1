// The data path of model devices, run on the model thread: posting (with address
// translation from the program's buffers to the model's, user_memory.h) and polling (with
// simulated time passing on an empty CQ, preload.h contract 4).
#pragma once

#include <infiniband/verbs.h>

#include <cstdint>
#include <vector>

#include "tools/exec/preload.h"

namespace qptwin::exec {

// The model address of [addr, addr + len) of the program, named by lkey (0 when it is not
// inside that key's region: the model then reports the protection error rxe would).
uint64_t LocalAddr(ModelContext* m, uint32_t lkey, uint64_t addr, uint64_t len);
// The same for a remote address named by rkey on model device `peer` (keys are per device;
// -1: any device of this process).
uint64_t RemoteAddr(int peer, uint32_t rkey, uint64_t addr, uint64_t len);
// Memory windows. A bind names an address in the region's iova space (rxe_check_bind_mw):
// BindInfo gives the model's (pure: reads only the region, callable on any thread).
MwBindInfo BindInfo(const ibv_mw_bind_info& info);
// The BIND_MW WRs among wrs[0, posted) on device m: their new rkeys open onto their regions
// (RemoteAddr translates through them). Model thread.
void NoteBinds(ModelContext* m, const std::vector<SendWr>& wrs, size_t posted);
void NoteBind(ModelContext* m, uint32_t rkey, const ibv_mw_bind_info& info);
// Forgets every rkey of the window whose rkey is `rkey` (its index), at deallocation.
void ForgetWindow(ModelContext* m, uint32_t rkey);
// The model device (qptwin<index>) an address vector reaches, or kElsewhere (not in this
// process: another process's, through the RoCE bridge, bridge.h). RemoteAddr(kElsewhere)
// translates nothing: the far process does (Bridge::TranslateRemote).
inline constexpr int kElsewhere = -2;
int PeerDevice(const ibv_ah_attr& ah);
// Copies inline bytes into the context's registered scratch buffer; the SGE naming them.
// `offset` accumulates over one post. Sge{} (length 0) when no scratch could be made.
Sge InlineSge(ModelContext* m, const uint8_t* const* parts, const size_t* lens, size_t n,
              size_t* offset);

// Converts the SGEs of an ibv WR (not inline).
void ConvertSges(ModelContext* m, const ibv_sge* sg, int num_sge, std::vector<Sge>* out);

// Completions for poll: pending first, then the CQ; when there are none, up to kPollStepNs
// of simulated time passes (stopping at the first completion). Returns the number written
// or a negative errno.
int PollInto(ModelCq* cq, int n, ibv_wc* wc, WorkCompletion* one);

}  // namespace qptwin::exec
