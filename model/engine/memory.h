// Memory regions of one NIC and every check on local (lkey) and remote (rkey) access.
//
// Contract:
//  1. A region's buffer is allocated here (zeroed, page aligned) and lives as long as the
//     region; nothing outside [buf, buf + length) of a registered region is ever touched.
//     Small buffers (up to 256 KiB) of regions gone are kept and handed out again, zeroed
//     (memory.cc): a fuzzer that makes thousands of backends a second pays no mmap for them.
//  2. lkey == rkey == index << 8 | variant (rxe_mr.c rxe_mr_init: elem.index << 8 | an 8-bit
//     key). The 24-bit index is allocated cyclically in [1, max_index] and skips indices in
//     use (rxe_pool.c: xa_alloc_cyclic over [RXE_MIN_MR_INDEX, RXE_MAX_MR_INDEX]), so a key
//     never equals a live region's key, however many registrations came before; the variant
//     changes with every registration, so a reused index gets another key than its last one.
//     Register returns nullptr when every index is in use.
//  3. Checks return the WcStatus the device reports: kLocProtErr for a bad lkey, another
//     PD, out of bounds or missing LOCAL_WRITE; kLocLenErr when data exceeds the SGEs.
//  4. RegisterAt: a region at a bus address of the platform's (a SystemC user's memory
//     model, model_backend.h ModelRegMrAt) has no buffer here: `buf` holds that address,
//     `at_bus_address` says so, and the engine never dereferences it (every byte of it
//     moves through a HostBus, host_bus.h contract 1). Keys, checks and bounds as any.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <vector>

#include "model/engine/host_bus.h"
#include "spec/backend.h"

namespace qptwin::model::engine {

// Contract 1's reuse of small buffers, on by default; off for a program that maps pages of
// its own over region buffers (the verbs preload, tools/exec/user_memory.h): a kept buffer
// would still alias that program's page and be zeroed when handed out again.
void KeepRegionMappings(bool on);

// A read-only view of SGEs: a WR's std::vector or a WQE's inline list (objects.h SgeList).
class SgeSpan {
 public:
  SgeSpan(const Sge* first, size_t n) : first_(first), n_(n) {}
  SgeSpan(const std::vector<Sge>& v) : first_(v.data()), n_(v.size()) {}  // NOLINT: implicit
  const Sge* begin() const { return first_; }
  const Sge* end() const { return first_ + n_; }
  size_t size() const { return n_; }
  uint64_t total_length() const {
    uint64_t n = 0;
    for (const Sge& s : *this) n += s.length;
    return n;
  }

 private:
  const Sge* first_;
  size_t n_;
};

struct Mr {
  uint32_t handle = 0;
  uint32_t ctx = 0;
  uint32_t pd = 0;
  uint8_t* buf = nullptr;
  size_t length = 0;
  AccessFlags access = 0;
  uint32_t lkey = 0;
  uint32_t rkey = 0;
  bool at_bus_address = false;  // contract 4: `buf` is a bus address, not this process's
  std::shared_ptr<void> bus_hold;  // contract 4: held on the NIC's bus (host_bus.h contract 8)
};

class MrTable {
 public:
  static constexpr uint32_t kMaxIndex = 0xffffff;  // the 24 bits above the key byte

  // Indices run from 1 to max_index (<= kMaxIndex); the first one handed out is
  // first_index. Both only differ from the defaults in tests of the wrap-around.
  explicit MrTable(uint32_t max_index = kMaxIndex, uint32_t first_index = 1);
  ~MrTable();
  MrTable(const MrTable&) = delete;
  MrTable& operator=(const MrTable&) = delete;

  // Allocates the buffer; nullptr when memory or the key space is exhausted.
  Mr* Register(uint32_t handle, uint32_t ctx, uint32_t pd, size_t length, AccessFlags access);
  // Contract 4: no buffer; nullptr when the key space is exhausted.
  Mr* RegisterAt(uint32_t handle, uint32_t ctx, uint32_t pd, uint64_t addr, size_t length,
                 AccessFlags access);
  void Deregister(uint32_t handle);
  void DeregisterContext(uint32_t ctx);
  Mr* ByHandle(uint32_t handle);
  size_t CountForPd(uint32_t pd) const;
  size_t size() const { return by_handle_.size(); }

  // Every SGE (length > 0) lies inside a region of `pd` with `need` access. On failure
  // *unresolved (if given) says whether the first bad SGE's key named no such region (rxe's
  // lookup_mr fails) rather than lying outside a region it names (mr_check_range).
  WcStatus CheckLocal(SgeSpan sges, uint32_t pd, AccessFlags need,
                      bool* unresolved = nullptr) const;
  WcStatus CheckLocal(const std::vector<Sge>& sges, uint32_t pd, AccessFlags need,
                      bool* unresolved = nullptr) const {
    return CheckLocal(SgeSpan(sges), pd, need, unresolved);
  }
  // Every SGE (length > 0) lies inside some region, whatever its key, PD or rights.
  bool AnyContains(SgeSpan sges) const;
  // Some SGE (length > 0) lies in a region at a bus address (contract 4).
  bool AnyAtBusAddress(SgeSpan sges) const;
  // Reads the SGEs' bytes through `bus` into `out`, which holds sges.total_length() bytes
  // (call after CheckLocal succeeded); false when a transfer failed (host_bus.h).
  bool GatherTo(HostBus& bus, SgeSpan sges, uint8_t* out) const;
  // Writes `data` into the SGEs through `bus`: kLocLenErr when it does not fit, kLocProtErr
  // on a key, PD, bound or LOCAL_WRITE violation (checked before any byte is written) or
  // when a transfer failed (host_bus.h contract 2).
  WcStatus Scatter(HostBus& bus, SgeSpan sges, uint32_t pd, const uint8_t* data,
                   size_t len) const;
  WcStatus Scatter(HostBus& bus, const std::vector<Sge>& sges, uint32_t pd,
                   const uint8_t* data, size_t len) const {
    return Scatter(bus, SgeSpan(sges), pd, data, len);
  }
  // The bytes [addr, addr + len) of the region with `rkey` in `pd` with `need` remote
  // access, or nullptr (an rkey violation).
  uint8_t* Remote(uint32_t rkey, uint32_t pd, uint64_t addr, uint64_t len,
                  AccessFlags need) const;
  // The bytes [addr, addr + len) of `mr` when they lie inside it (no key or rights check:
  // a memory window's access, window.h), else nullptr.
  static uint8_t* Within(const Mr& mr, uint64_t addr, uint64_t len);

 private:
  const Mr* ByKey(uint32_t key) const;
  static bool Inside(const Mr& mr, uint64_t addr, uint64_t len);
  // The first index >= next_index_ (wrapping to 1) no live region has; 0 if none is free.
  uint32_t FreeIndex() const;
  size_t at_bus_address_ = 0;  // regions of contract 4 (none: AnyAtBusAddress is one test)
  Mr* Insert(uint32_t handle, uint32_t ctx, uint32_t pd, uint8_t* buf, size_t length,
             AccessFlags access, bool at_bus_address);

  std::map<uint32_t, std::unique_ptr<Mr>> by_handle_;
  std::map<uint32_t, Mr*> by_key_;  // ordered by key, so by index too
  uint32_t max_index_;
  uint32_t next_index_;
  uint8_t next_variant_ = 0;
};

}  // namespace qptwin::model::engine
