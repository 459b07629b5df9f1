// Memory windows of one NIC: allocation, the bind and invalidate operations the requester
// and responder run, and the check of a remote access through a window's rkey. As rxe does
// them (Linux drivers/infiniband/sw/rxe/rxe_mw.c; measured on rxe 6.1 in tools/rxe-vm, see
// tests/conformance/memory_window_test.cc and docs/differences.md).
//
// Contract:
//  1. rkey = index << 8 | key byte. Indices are handed out cyclically in [kMinIndex,
//     kMaxIndex], a range of their own above the regions' (rxe_param.h RXE_MIN_MW_INDEX =
//     RXE_MAX_MR_INDEX + 1 = 0x80001 .. RXE_MAX_MW_INDEX = 0x100000); the key byte at
//     allocation is a counter (rxe: random). A key with a window's index names that window.
//  2. State (rxe_mw.c): a type 1 window is VALID from allocation (bound to nothing until a
//     bind); a type 2 window is FREE until bound, VALID while bound, FREE again once
//     invalidated. Binding replaces only the key byte of the rkey (rxe_do_bind_mw).
//  3. Bind and Invalidate return 0 or EINVAL (the requester turns it into MW_BIND_ERR /
//     LOC_QP_OP_ERR, the responder into REM_INV_REQ_ERR); on error nothing changes.
//  4. A BIND_MW names its window by the rkey the program's ibv_mw holds (providers/rxe
//     convert_send_wr: mw_rkey), and the bind fails unless it is the window's current
//     rkey. The program's value comes with the WR (SendWr::mw_rkey) or, when not given,
//     is `host_rkey`, the backend's copy of it: it moves on when the bind is posted, not
//     when it succeeds (rxe_bind_mw in rdma-core: "user has to undo this if he gets an
//     error wc").
#pragma once

#include <cstdint>
#include <map>

#include "model/engine/memory.h"
#include "spec/backend.h"

namespace qptwin::model::engine {

struct Mw {
  uint32_t handle = 0;
  uint32_t ctx = 0;
  uint32_t pd = 0;
  MwType type = MwType::kType1;
  uint32_t rkey = 0;       // the device's
  uint32_t host_rkey = 0;  // the program's ibv_mw.rkey (contract 4)
  bool valid = false;      // VALID (else FREE), contract 2
  // While bound with a length: the region, the range and the rights; type 2: the QP.
  uint32_t mr = 0;
  uint64_t addr = 0;
  uint64_t length = 0;
  AccessFlags access = 0;
  uint32_t qp = 0;
};

// What a BIND_MW work request asks (ibv_send_wr.bind_mw as the provider passes it on).
struct BindRequest {
  uint32_t mw_rkey = 0;   // the window, by the program's rkey for it at the post
  uint32_t new_rkey = 0;  // only its key byte is used
  const Mr* mr = nullptr;  // the region, resolved at execution (nullptr: gone)
  uint64_t addr = 0;
  uint64_t length = 0;
  AccessFlags access = 0;
  uint32_t qp = 0;     // the QP running the bind
  uint32_t qp_pd = 0;  // and its PD
};

// A remote request through a window: which bytes of which region it may touch.
struct WindowAccess {
  uint32_t qp = 0;  // the QP the request arrived at
  uint32_t pd = 0;  // the PD rkeys are checked against (rxe_resp.c check_rkey)
  uint64_t addr = 0;
  uint64_t len = 0;
  AccessFlags need = 0;
  // Behaviour::mw_range_checked_against_mr: the bounds checked are the region's.
  bool range_of_region = false;
};

class MwTable {
 public:
  static constexpr uint32_t kMinIndex = 0x80001;
  static constexpr uint32_t kMaxIndex = 0x100000;

  // nullptr when every index is in use.
  Mw* Alloc(uint32_t handle, uint32_t ctx, uint32_t pd, MwType type);
  void Dealloc(uint32_t handle);
  void DeallocContext(uint32_t ctx);
  Mw* ByHandle(uint32_t handle);
  // The window whose index `key` has (whatever its key byte), or nullptr.
  Mw* ByIndex(uint32_t key);
  size_t CountForPd(uint32_t pd) const;
  size_t BoundTo(uint32_t mr) const;  // windows bound to the region (rxe mr->num_mw)
  // VALID type 2 windows bound through QP handle `qp` (each holds a reference on it in rxe).
  size_t BoundToQp(uint32_t qp) const;
  size_t size() const { return by_handle_.size(); }

  // rxe_bind_mw + rxe_check_bind_mw (contract 3).
  int Bind(const BindRequest& r);
  // rxe_invalidate_mw: a VALID type 2 window with exactly this rkey becomes FREE.
  int Invalidate(uint32_t rkey);
  // Whether `rkey` is the key of a type 2 window that is not bound (FREE: allocated and never
  // bound, or invalidated): rxe 6.1's rxe_check_invalidate_mw lets it through and
  // rxe_do_invalidate_mw puts its NULL QP, a kernel oops (Behaviour::
  // invalidate_free_type2_window_faults).
  bool NamesFreeType2(uint32_t rkey) const;
  // The window `rkey` names, if it lets `a` through (rxe_lookup_mw); *region_addr is the
  // address in the window's region the access starts at (a zero-based window adds its
  // start, rxe_resp.c check_rkey). The caller checks the bytes against the region.
  const Mw* Lookup(uint32_t rkey, const WindowAccess& a, uint64_t* region_addr) const;

 private:
  std::map<uint32_t, Mw> by_handle_;
  std::map<uint32_t, uint32_t> by_index_;  // index -> handle
  uint32_t next_index_ = kMinIndex;
  uint8_t next_key_ = 0;
};

}  // namespace qptwin::model::engine
