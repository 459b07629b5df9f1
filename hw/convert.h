// Pure conversions between spec/backend.h structs and libibverbs structs. No device needed;
// every function is a field-by-field copy (enum values are identical: abi_check.cc).
//
// Byte order: spec keeps imm_data in host order; libibverbs carries it in network order
// (ibv_send_wr.imm_data, ibv_wc.imm_data are __be32), so htonl/ntohl happen here.
#pragma once

#include <infiniband/verbs.h>

#include <cstddef>
#include <string>
#include <vector>

#include "spec/backend.h"

namespace qptwin::hw {

Gid FromIbvGid(const ibv_gid& gid);
ibv_gid ToIbvGid(const Gid& gid);

ibv_ah_attr ToIbvAhAttr(const AhAttr& ah);
AhAttr FromIbvAhAttr(const ibv_ah_attr& ah);

ibv_qp_cap ToIbvQpCap(const QpCap& cap);
QpCap FromIbvQpCap(const ibv_qp_cap& cap);

ibv_qp_attr ToIbvQpAttr(const QpAttr& attr);
QpAttr FromIbvQpAttr(const ibv_qp_attr& attr);

DeviceAttr FromIbvDeviceAttr(const ibv_device_attr& attr, const std::string& name);
PortAttr FromIbvPortAttr(const ibv_port_attr& attr);

WorkCompletion FromIbvWc(const ibv_wc& wc);
// The inverse of FromIbvWc (what the preload hands a verbs program from a model CQE):
// imm_data back to network order with IBV_WC_WITH_IMM, into invalidated_rkey with
// IBV_WC_WITH_INV.
ibv_wc ToIbvWc(const WorkCompletion& wc);

// A linked ibv_send_wr list built from spec WRs. The vectors own the memory the links and
// sg_list pointers point into, so a chain must not be copied after building (move is fine
// only before use; Build* reserves everything up front so no pointer moves).
struct SendChain {
  std::vector<ibv_send_wr> wrs;
  std::vector<ibv_sge> sges;
  ibv_send_wr* head() { return wrs.empty() ? nullptr : &wrs[0]; }
  // The index of `bad` in wrs. A provider that fails without naming a WR (rxe returns the
  // kernel doorbell's EINVAL with bad_wr NULL) gives 0: no WR is claimed as posted.
  size_t IndexOf(const ibv_send_wr* bad) const;
};

struct RecvChain {
  std::vector<ibv_recv_wr> wrs;
  std::vector<ibv_sge> sges;
  ibv_recv_wr* head() { return wrs.empty() ? nullptr : &wrs[0]; }
  size_t IndexOf(const ibv_recv_wr* bad) const;
};

// The verbs objects a BIND_MW WR names (SendWr::mw, SendWr::bind_info.mr), resolved.
struct BindTarget {
  ibv_mw* mw = nullptr;
  ibv_mr* mr = nullptr;
};

// `ahs[i]` is the resolved address handle of wrs[i] (used only when qp_type is UD; may be
// shorter than wrs, missing entries mean none); `binds[i]` the same for a BIND_MW. The union
// ibv_send_wr.wr is filled by the QP type and opcode: ud for UD QPs, atomic for atomics,
// rdma otherwise; bind_mw for BIND_MW; invalidate_rkey (from imm_data, host order) for
// LOCAL_INV and SEND_WITH_INV.
void BuildSendChain(const std::vector<SendWr>& wrs, QpType qp_type, const std::vector<ibv_ah*>& ahs,
                    SendChain* out, const std::vector<BindTarget>& binds = {});
void BuildRecvChain(const std::vector<RecvWr>& wrs, RecvChain* out);

}  // namespace qptwin::hw
