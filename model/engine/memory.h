// Memory regions of one NIC and every check on local (lkey) and remote (rkey) access.
//
// Contract:
//  1. A region's buffer is allocated here (zeroed, page aligned) and lives as long as the
//     region; nothing outside [buf, buf + length) of a registered region is ever touched.
//  2. lkey == rkey, unique within the table (rxe: index << 8 | key byte).
//  3. Checks return the WcStatus the device reports: kLocProtErr for a bad lkey, another
//     PD, out of bounds or missing LOCAL_WRITE; kLocLenErr when data exceeds the SGEs.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <vector>

#include "spec/backend.h"

namespace qptwin::model::engine {

struct Mr {
  uint32_t handle = 0;
  uint32_t ctx = 0;
  uint32_t pd = 0;
  uint8_t* buf = nullptr;
  size_t length = 0;
  AccessFlags access = 0;
  uint32_t lkey = 0;
  uint32_t rkey = 0;
};

class MrTable {
 public:
  MrTable() = default;
  ~MrTable();
  MrTable(const MrTable&) = delete;
  MrTable& operator=(const MrTable&) = delete;

  // Allocates the buffer; nullptr when memory is exhausted.
  Mr* Register(uint32_t handle, uint32_t ctx, uint32_t pd, size_t length, AccessFlags access);
  void Deregister(uint32_t handle);
  void DeregisterContext(uint32_t ctx);
  Mr* ByHandle(uint32_t handle);
  size_t CountForPd(uint32_t pd) const;

  // Every SGE (length > 0) lies inside a region of `pd` with `need` access.
  WcStatus CheckLocal(const std::vector<Sge>& sges, uint32_t pd, AccessFlags need) const;
  // Copies the SGEs' bytes (call after CheckLocal succeeded).
  // Every SGE (length > 0) lies inside some region, whatever its key, PD or rights.
  bool AnyContains(const std::vector<Sge>& sges) const;
  std::vector<uint8_t> Gather(const std::vector<Sge>& sges) const;
  // Copies `data` into the SGEs: kLocLenErr when it does not fit, kLocProtErr on a key,
  // PD, bound or LOCAL_WRITE violation (checked before any byte is written).
  WcStatus Scatter(const std::vector<Sge>& sges, uint32_t pd, const uint8_t* data,
                   size_t len) const;
  // The bytes [addr, addr + len) of the region with `rkey` in `pd` with `need` remote
  // access, or nullptr (an rkey violation).
  uint8_t* Remote(uint32_t rkey, uint32_t pd, uint64_t addr, uint64_t len,
                  AccessFlags need) const;

 private:
  const Mr* ByKey(uint32_t key) const;
  static bool Inside(const Mr& mr, uint64_t addr, uint64_t len);

  std::map<uint32_t, std::unique_ptr<Mr>> by_handle_;
  std::map<uint32_t, Mr*> by_key_;
  uint32_t next_index_ = 1;
};

}  // namespace qptwin::model::engine
