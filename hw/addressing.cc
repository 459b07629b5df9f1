#include "hw/addressing.h"

#include <cerrno>
#include <fstream>
#include <string>

#include "hw/convert.h"

namespace qptwin::hw {
namespace {

int FirstIndex(const std::vector<GidEntry>& entries, bool (*pred)(const GidEntry&)) {
  for (const GidEntry& e : entries) {
    if (!IsZeroGid(e.gid) && pred(e)) return e.index;
  }
  return -1;
}

GidType ReadSysfsGidType(ibv_context* context, uint8_t port_num, int index) {
  std::string path = std::string("/sys/class/infiniband/") + ibv_get_device_name(context->device) +
                     "/ports/" + std::to_string(port_num) + "/gid_attrs/types/" +
                     std::to_string(index);
  std::ifstream in(path);
  std::string text;
  std::getline(in, text);
  return ParseSysfsGidType(text);
}

}  // namespace

bool IsZeroGid(const Gid& gid) {
  for (uint8_t b : gid.raw) {
    if (b != 0) return false;
  }
  return true;
}

bool IsIpv4MappedGid(const Gid& gid) {
  for (int i = 0; i < 10; ++i) {
    if (gid.raw[i] != 0) return false;
  }
  return gid.raw[10] == 0xff && gid.raw[11] == 0xff;
}

int ChooseGidIndex(const std::vector<GidEntry>& entries, LinkLayer link_layer) {
  if (link_layer != LinkLayer::kEthernet) {
    return FirstIndex(entries, [](const GidEntry&) { return true; });  // the port GID
  }
  int index = FirstIndex(entries, [](const GidEntry& e) {
    return e.type == GidType::kRoceV2 && IsIpv4MappedGid(e.gid);
  });
  if (index < 0) {
    index = FirstIndex(entries, [](const GidEntry& e) { return e.type == GidType::kRoceV2; });
  }
  if (index < 0) index = FirstIndex(entries, [](const GidEntry&) { return true; });
  return index;
}

GidType ParseSysfsGidType(const std::string& text) {
  if (text.rfind("RoCE v2", 0) == 0) return GidType::kRoceV2;
  if (text.rfind("IB/RoCE v1", 0) == 0) return GidType::kRoceV1;
  return GidType::kIb;
}

int ReadGidTable(ibv_context* context, uint8_t port_num, int gid_tbl_len,
                 std::vector<GidEntry>* out) {
  out->clear();
  for (int i = 0; i < gid_tbl_len; ++i) {
    GidEntry e;
    e.index = i;
    ibv_gid_entry entry{};
    int ret = ibv_query_gid_ex(context, port_num, static_cast<uint32_t>(i), &entry, 0);
    if (ret == 0) {
      e.gid = FromIbvGid(entry.gid);
      e.type = entry.gid_type == IBV_GID_TYPE_ROCE_V2   ? GidType::kRoceV2
               : entry.gid_type == IBV_GID_TYPE_ROCE_V1 ? GidType::kRoceV1
                                                        : GidType::kIb;
    } else if (ret == ENODATA) {
      continue;  // an empty slot of the table
    } else if (ret == EOPNOTSUPP || ret == ENOSYS) {
      ibv_gid gid{};
      if (ibv_query_gid(context, port_num, i, &gid) != 0) continue;
      e.gid = FromIbvGid(gid);
      e.type = ReadSysfsGidType(context, port_num, i);
    } else {
      return ret;
    }
    if (!IsZeroGid(e.gid)) out->push_back(e);
  }
  return 0;
}

}  // namespace qptwin::hw
