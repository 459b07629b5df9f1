// Addressing on a real port: which GID to connect from (RoCE v2 IPv4-mapped by default),
// read from the port's GID table with its types.
//
// Sources: rdma-core libibverbs/man/ibv_query_gid_ex.3 (gid_type per entry);
// /sys/class/infiniband/<dev>/ports/<p>/gid_attrs/types/<i> ("IB/RoCE v1", "RoCE v2");
// an IPv4-mapped GID is ::ffff:a.b.c.d (RFC 4291 2.5.5.2), what RoCE v2 routes over IPv4.
#pragma once

#include <infiniband/verbs.h>

#include <cstdint>
#include <string>
#include <vector>

#include "spec/backend.h"

namespace qptwin::hw {

enum class GidType : uint8_t { kIb, kRoceV1, kRoceV2 };

struct GidEntry {
  int index = 0;
  Gid gid;
  GidType type = GidType::kIb;
};

bool IsZeroGid(const Gid& gid);
bool IsIpv4MappedGid(const Gid& gid);

// The GID index to connect from: on InfiniBand the first entry (the port GID, index 0);
// on RoCE the first RoCE v2 IPv4-mapped entry, else the first RoCE v2 entry, else the
// first entry. -1 when `entries`
// holds nothing usable.
int ChooseGidIndex(const std::vector<GidEntry>& entries, LinkLayer link_layer);

// "RoCE v2" -> kRoceV2, "IB/RoCE v1" -> kRoceV1 (sysfs spelling); anything else kIb.
GidType ParseSysfsGidType(const std::string& text);

// Reads the valid (non-zero) entries of the port's GID table. Uses ibv_query_gid_ex and
// falls back to ibv_query_gid plus the sysfs type file. Returns 0 or an errno.
int ReadGidTable(ibv_context* context, uint8_t port_num, int gid_tbl_len,
                 std::vector<GidEntry>* out);

}  // namespace qptwin::hw
