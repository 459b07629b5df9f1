// The remaining exported libibverbs entry points that receive a model object. Every Debian
// binary is linked BIND_NOW, so each one reached with a model object must be ours, or the
// real library would read provider state that does not exist. Those the model has no verb
// for return what a provider without the op gives (EOPNOTSUPP), never a crash.
#include <arpa/inet.h>

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <string>
#include <cstring>

#include "tools/exec/preload.h"

using qptwin::exec::Ctx;
using qptwin::exec::Fail;
using qptwin::exec::IsModel;
using qptwin::exec::Model;
using qptwin::exec::ModelCq;
using qptwin::exec::Preload;
using qptwin::exec::Real;

extern "C" {

// Work posted before the resize completes first, as it would have on a device running on
// its own (kIdleStepNs of simulated time). Completions the preload already took from the
// model (ModelCq::pending) count too: the model is asked for room for them and the rest,
// then resized to what was asked.
int ibv_resize_cq(ibv_cq* cq, int cqe) {
  static auto real = Real(&ibv_resize_cq, "ibv_resize_cq");
  if (!IsModel(cq->context)) return real(cq, cqe);
  auto* c = Model<ModelCq>(cq);
  int err = 0, actual = 0;
  Preload& p = Preload::Get();
  p.Run([&] {
    p.backend()->Advance(p.TimeStep(qptwin::exec::kIdleStepNs));
    const int held = static_cast<int>(c->pending.size());
    if (held > 0) {
      if (cqe <= held) {
        err = EINVAL;  // rxe_cq_chk_attr: fewer entries than completions in the CQ
        return;
      }
      err = c->mctx->dev->ResizeCq(c->h, cqe - held, &actual);
      if (err) return;
    }
    err = c->mctx->dev->ResizeCq(c->h, cqe, &actual);
  });
  if (!err) cq->cqe = actual;
  return err;
}

int ibv_query_qp_data_in_order(ibv_qp* qp, enum ibv_wr_opcode op, uint32_t flags) {
  static auto real = Real(&ibv_query_qp_data_in_order, "ibv_query_qp_data_in_order",
                          "IBVERBS_1.14");
  if (!IsModel(qp->context)) return real(qp, op, flags);
  return 0;  // verbs.c: a provider without the op reports "not in order" (rxe)
}

int ibv_attach_mcast(ibv_qp* qp, const ibv_gid* gid, uint16_t lid) {
  static auto real = Real(&ibv_attach_mcast, "ibv_attach_mcast");
  if (!IsModel(qp->context)) return real(qp, gid, lid);
  return EOPNOTSUPP;  // spec/backend.h has no multicast (rxe has: a known gap)
}

int ibv_detach_mcast(ibv_qp* qp, const ibv_gid* gid, uint16_t lid) {
  static auto real = Real(&ibv_detach_mcast, "ibv_detach_mcast");
  if (!IsModel(qp->context)) return real(qp, gid, lid);
  return EOPNOTSUPP;
}

int ibv_query_ece(ibv_qp* qp, ibv_ece* ece) {
  static auto real = Real(&ibv_query_ece, "ibv_query_ece", "IBVERBS_1.10");
  if (!IsModel(qp->context)) return real(qp, ece);
  return EOPNOTSUPP;  // rxe: no ECE
}

int ibv_set_ece(ibv_qp* qp, ibv_ece* ece) {
  static auto real = Real(&ibv_set_ece, "ibv_set_ece", "IBVERBS_1.10");
  if (!IsModel(qp->context)) return real(qp, ece);
  return EOPNOTSUPP;
}

ibv_mr* ibv_reg_dmabuf_mr(ibv_pd* pd, uint64_t offset, size_t length, uint64_t iova, int fd,
                          int access) {
  static auto real = Real(&ibv_reg_dmabuf_mr, "ibv_reg_dmabuf_mr", "IBVERBS_1.12");
  if (!IsModel(pd->context)) return real(pd, offset, length, iova, fd, access);
  return Fail<ibv_mr>(EOPNOTSUPP);  // rxe: no dma-buf
}

ibv_pd* ibv_import_pd(ibv_context* context, uint32_t pd_handle) {
  static auto real = Real(&ibv_import_pd, "ibv_import_pd", "IBVERBS_1.10");
  if (!IsModel(context)) return real(context, pd_handle);
  return Fail<ibv_pd>(EOPNOTSUPP);  // sharing objects between processes is not modelled
}

ibv_mr* ibv_import_mr(ibv_pd* pd, uint32_t mr_handle) {
  static auto real = Real(&ibv_import_mr, "ibv_import_mr", "IBVERBS_1.10");
  if (!IsModel(pd->context)) return real(pd, mr_handle);
  return Fail<ibv_mr>(EOPNOTSUPP);
}

ibv_context* ibv_import_device(int cmd_fd) {
  static auto real = Real(&ibv_import_device, "ibv_import_device", "IBVERBS_1.10");
  char link[64], target[256];
  std::snprintf(link, sizeof(link), "/proc/self/fd/%d", cmd_fd);
  const ssize_t n = readlink(link, target, sizeof(target) - 1);
  if (n > 0 && std::string(target, n).find("qptwin-context") != std::string::npos) {
    return Fail<ibv_context>(EOPNOTSUPP);  // a model context's fd: importing is not modelled
  }
  return real(cmd_fd);
}

ibv_dm* ibv_import_dm(ibv_context* context, uint32_t dm_handle) {
  static auto real = Real(&ibv_import_dm, "ibv_import_dm", "IBVERBS_1.13");
  if (!IsModel(context)) return real(context, dm_handle);
  return Fail<ibv_dm>(EOPNOTSUPP);
}

int ibv_resolve_eth_l2_from_gid(ibv_context* context, ibv_ah_attr* attr, uint8_t eth_mac[6],
                                uint16_t* vid) {
  static auto real = Real(&ibv_resolve_eth_l2_from_gid, "ibv_resolve_eth_l2_from_gid");
  if (!IsModel(context)) return real(context, attr, eth_mac, vid);
  // A made-up unicast MAC from the GID's last bytes; no VLAN.
  eth_mac[0] = 0x02;
  std::memcpy(eth_mac + 1, attr->grh.dgid.raw + 11, 5);
  if (vid) *vid = 0xffff;
  return 0;
}

// The address of a WC's sender (verbs.c ibv_init_ah_from_wc). On RoCE v2 over IPv4 the GRH
// buffer's last 20 bytes are the IPv4 header (rxe); otherwise it is an IB/IPv6 GRH.
int ibv_init_ah_from_wc(ibv_context* context, uint8_t port_num, ibv_wc* wc, ibv_grh* grh,
                        ibv_ah_attr* ah_attr) {
  static auto real = Real(&ibv_init_ah_from_wc, "ibv_init_ah_from_wc");
  if (!IsModel(context)) return real(context, port_num, wc, grh, ah_attr);
  std::memset(ah_attr, 0, sizeof(*ah_attr));
  ah_attr->dlid = wc->slid;
  ah_attr->sl = wc->sl;
  ah_attr->src_path_bits = wc->dlid_path_bits;
  ah_attr->port_num = port_num;
  if (!(wc->wc_flags & IBV_WC_GRH)) return 0;
  ibv_gid sgid{}, dgid{};
  const auto* raw = reinterpret_cast<const uint8_t*>(grh);
  if ((raw[20] >> 4) == 4) {  // IPv4 header: source at +12, destination at +16
    sgid.raw[10] = sgid.raw[11] = dgid.raw[10] = dgid.raw[11] = 0xff;
    std::memcpy(dgid.raw + 12, raw + 20 + 12, 4);
    std::memcpy(sgid.raw + 12, raw + 20 + 16, 4);
    ah_attr->grh.hop_limit = 0xff;
  } else {
    dgid = grh->sgid;
    sgid = grh->dgid;
    const uint32_t flow = ntohl(grh->version_tclass_flow);
    ah_attr->grh.flow_label = flow & 0xfffff;
    ah_attr->grh.traffic_class = (flow >> 20) & 0xff;
    ah_attr->grh.hop_limit = 0xff;
  }
  ah_attr->is_global = 1;
  ah_attr->grh.dgid = dgid;
  for (int i = 0; i < 16; ++i) {
    ibv_gid g;
    if (ibv_query_gid(context, port_num, i, &g) != 0) break;
    if (std::memcmp(g.raw, sgid.raw, 16) == 0) {
      ah_attr->grh.sgid_index = static_cast<uint8_t>(i);
      return 0;
    }
  }
  return ENOENT;  // verbs.c: the destination GID is not ours
}

ibv_ah* ibv_create_ah_from_wc(ibv_pd* pd, ibv_wc* wc, ibv_grh* grh, uint8_t port_num) {
  static auto real = Real(&ibv_create_ah_from_wc, "ibv_create_ah_from_wc");
  if (!IsModel(pd->context)) return real(pd, wc, grh, port_num);
  ibv_ah_attr attr;
  const int err = ibv_init_ah_from_wc(pd->context, port_num, wc, grh, &attr);
  if (err) return Fail<ibv_ah>(err);
  return ibv_create_ah(pd, &attr);
}

}  // extern "C"
