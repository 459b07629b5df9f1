#include "spec/attr_checks.h"

namespace qptwin {
namespace {

std::string Num(uint64_t v) { return std::to_string(v); }

}  // namespace

std::vector<ValueProblem> CheckAttrValues(const QpAttr& a, AttrMask mask, QpType type,
                                          const DeviceAttr& dev,
                                          const std::vector<PortAttr>& ports,
                                          uint8_t current_port, bool lax) {
  std::vector<ValueProblem> out;
  auto bad = [&out](AttrMask bit, std::string why) { out.push_back({bit, std::move(why)}); };

  uint8_t port = (mask & attr::kPort) ? a.port_num : current_port;
  const PortAttr* pa = (port >= 1 && port <= ports.size()) ? &ports[port - 1] : nullptr;

  if ((mask & attr::kPort) && !pa) {
    bad(attr::kPort, "port " + Num(a.port_num) + " does not exist (ports 1.." +
                         Num(ports.size()) + ")");
  }
  // rxe_qp_chk_attr checks none of pkey_index, retry_cnt, rnr_retry, min_rnr_timer and
  // max_dest_rd_atomic (lax; measured on rxe, kernel 6.1).
  if (lax) mask &= ~(attr::kPkeyIndex | attr::kRetryCnt | attr::kRnrRetry |
                     attr::kMinRnrTimer | attr::kMaxDestRdAtomic);
  if ((mask & attr::kPkeyIndex) && pa && a.pkey_index >= pa->pkey_tbl_len) {
    bad(attr::kPkeyIndex, "pkey_index " + Num(a.pkey_index) + " out of range (table has " +
                              Num(pa->pkey_tbl_len) + " entries)");
  }
  if (mask & attr::kPathMtu) {
    uint32_t raw = static_cast<uint32_t>(a.path_mtu);
    if (!IsValidMtu(raw)) {
      bad(attr::kPathMtu, "path_mtu " + Num(raw) + " is not an ibv_mtu value (1..5)");
    } else if (pa && raw > static_cast<uint32_t>(pa->max_mtu)) {
      // rxe_qp_chk_attr: "invalid mtu (%d) > (%d)" against port->attr.max_mtu. Measured on
      // rxe (kernel 6.1): path_mtu 4096 is accepted while the active MTU is 1024.
      bad(attr::kPathMtu, "path_mtu " + std::string(ToName(a.path_mtu)) +
                              " exceeds the port's max MTU " + std::string(ToName(pa->max_mtu)));
    }
  }
  // timeout: 5 bits; 4.096 us * 2^timeout, 0 = infinite.
  if ((mask & attr::kTimeout) && a.timeout > 31) {
    bad(attr::kTimeout, "timeout " + Num(a.timeout) + " > 31");
  }
  if ((mask & attr::kRetryCnt) && a.retry_cnt > 7) {
    bad(attr::kRetryCnt, "retry_cnt " + Num(a.retry_cnt) + " > 7");
  }
  // rnr_retry: 3 bits, 7 = retry forever.
  if ((mask & attr::kRnrRetry) && a.rnr_retry > 7) {
    bad(attr::kRnrRetry, "rnr_retry " + Num(a.rnr_retry) + " > 7");
  }
  if ((mask & attr::kMinRnrTimer) && a.min_rnr_timer > 31) {
    bad(attr::kMinRnrTimer, "min_rnr_timer " + Num(a.min_rnr_timer) + " > 31");
  }
  if ((mask & attr::kMaxQpRdAtomic) && a.max_rd_atomic > dev.max_qp_rd_atom) {
    bad(attr::kMaxQpRdAtomic, "max_rd_atomic " + Num(a.max_rd_atomic) +
                                  " exceeds the device's max_qp_rd_atom " +
                                  Num(dev.max_qp_rd_atom));
  }
  if ((mask & attr::kMaxDestRdAtomic) && a.max_dest_rd_atomic > dev.max_qp_init_rd_atom) {
    bad(attr::kMaxDestRdAtomic, "max_dest_rd_atomic " + Num(a.max_dest_rd_atomic) +
                                    " exceeds the device's max_qp_init_rd_atom " +
                                    Num(dev.max_qp_init_rd_atom));
  }
  if ((mask & attr::kAccessFlags) && (a.qp_access_flags & ~access::kKnownMask)) {
    bad(attr::kAccessFlags, "unknown access flag bits " +
                                FormatAccessFlags(a.qp_access_flags & ~access::kKnownMask));
  }
  if (mask & attr::kAv) {
    const AhAttr& ah = a.ah_attr;
    const PortAttr* ap =
        (ah.port_num >= 1 && ah.port_num <= ports.size()) ? &ports[ah.port_num - 1] : pa;
    if (ah.port_num != 0 && (ah.port_num < 1 || ah.port_num > ports.size())) {
      bad(attr::kAv, "ah_attr.port_num " + Num(ah.port_num) + " does not exist");
    } else if (ap && ap->link_layer == LinkLayer::kEthernet && !ah.is_global) {
      bad(attr::kAv, "RoCE needs a GRH (ah_attr.is_global = 1)");
    } else if (ap && ah.is_global && ah.grh.sgid_index >= ap->gid_tbl_len) {
      bad(attr::kAv, "sgid_index " + Num(ah.grh.sgid_index) + " out of range (GID table has " +
                         Num(ap->gid_tbl_len) + " entries)");
    }
  }
  // verbs.c _ib_modify_qp: "Today the core code can only handle alternate paths and APM
  // for IB. Ban them in roce mode."
  if ((mask & attr::kAltPath) && pa && pa->link_layer == LinkLayer::kEthernet) {
    bad(attr::kAltPath, "alternate paths are not supported on RoCE");
  }
  (void)type;
  return out;
}

std::vector<std::string> CheckQpCaps(const QpInitAttr& init, const DeviceAttr& dev) {
  std::vector<std::string> out;
  const QpCap& c = init.cap;
  auto over = [&out](const char* what, uint64_t v, uint64_t max) {
    if (v > max) out.push_back(std::string(what) + " " + Num(v) + " exceeds the device's " + Num(max));
  };
  over("max_send_wr", c.max_send_wr, dev.max_qp_wr);
  over("max_send_sge", c.max_send_sge, dev.max_sge);
  over("max_inline_data", c.max_inline_data, dev.max_inline_data);
  if (!init.srq) {
    over("max_recv_wr", c.max_recv_wr, dev.max_qp_wr);
    over("max_recv_sge", c.max_recv_sge, dev.max_sge);
  }
  return out;
}

std::string JoinProblems(const std::vector<ValueProblem>& problems) {
  std::string out;
  for (const auto& p : problems) {
    if (!out.empty()) out += "; ";
    out += p.reason;
  }
  return out;
}

AhAttr AddressTo(const ConnectionInfo& peer, int local_gid_index) {
  AhAttr ah;
  ah.port_num = peer.port_num;
  ah.dlid = peer.lid;
  if (peer.link_layer == LinkLayer::kEthernet) {
    ah.is_global = true;
    ah.grh.dgid = peer.gid;
    ah.grh.sgid_index = static_cast<uint8_t>(local_gid_index);
    ah.grh.hop_limit = 64;
  }
  return ah;
}

}  // namespace qptwin
