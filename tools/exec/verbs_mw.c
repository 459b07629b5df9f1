/* An ordinary libibverbs program (plain C, -libverbs only) for memory windows, under the
 * preload (verbs_mw_test: verbs_loopback_test.sh verbs_mw) with QPTWIN_PROFILE=rxe: RC between
 * qptwin0 (a, the requester) and qptwin1 (b, whose buffer the windows open onto), in one
 * process.
 *   1. Type 1: ibv_alloc_mw, ibv_bind_mw (its errnos; mw->rkey moves to ibv_inc_rkey), a WRITE
 *      and a READ through the window's rkey.
 *   2. Type 2 through ibv_post_send: BIND_MW (mw->rkey left to the program), a WRITE,
 *      SEND_WITH_INV from the peer, a rebind, LOCAL_INV.
 *   3. Type 2 through ibv_wr_* (a second QP pair made with ibv_create_qp_ex): wr_bind_mw of a
 *      zero-based window (remote addresses are offsets), wr_rdma_write, wr_send_inv,
 *      wr_local_inv.
 *   4. What is refused: ibv_dereg_mr of a region with a bound window (rxe: EINVAL),
 *      ibv_dealloc_pd with windows (EBUSY), a WRITE through an invalidated rkey (remote access
 *      error); then ibv_dealloc_mw of a bound window and the region's deregistration.
 *   5. A type 2 rebind that names the window by a stale rkey: bind, LOCAL_INV, bind again
 *      with mw->rkey left at the allocation's rkey. rxe names the window by mw->rkey
 *      (providers/rxe convert_send_wr: mw_rkey) and the kernel refuses a key that is not
 *      the window's current one (rxe_bind_mw): MW_BIND_ERR, the QP in ERR.
 * One line per completion; exit 0 only when every check held. `verbs_mw rxe0 rxe0` runs the
 * same checks on a real device (tools/rxe-vm/run). */
#include <arpa/inet.h>
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "tools/exec/verbs_pair.h"

enum { kWinLen = 4096 };

static struct ibv_wc poll_one(struct ibv_cq* cq) {
  struct ibv_wc wc;
  int n;
  long spins = 0;
  while ((n = ibv_poll_cq(cq, 1, &wc)) == 0) REQUIRE(++spins < 100000000);
  REQUIRE(n == 1);
  /* opcode, byte_len and wc_flags only for a success: ibv_poll_cq(3) leaves them undefined
   * otherwise (rxe writes 0, the model the WR's), and the lines are compared with rxe0's. */
  if (wc.status != IBV_WC_SUCCESS) {
    printf("wc wr_id=%llu status=%s\n", (unsigned long long)wc.wr_id,
           ibv_wc_status_str(wc.status));
    return wc;
  }
  printf("wc wr_id=%llu status=%s opcode=%d byte_len=%u wc_flags=%#x\n",
         (unsigned long long)wc.wr_id, ibv_wc_status_str(wc.status), wc.opcode, wc.byte_len,
         wc.wc_flags);
  return wc;
}

static int post_rdma(struct side* s, uint64_t wr_id, enum ibv_wr_opcode op, uint64_t raddr,
                     uint32_t rkey, uint32_t off, uint32_t len) {
  struct ibv_sge sge = {.addr = (uintptr_t)(s->buf + off), .length = len, .lkey = s->mr->lkey};
  struct ibv_send_wr wr = {.wr_id = wr_id, .sg_list = &sge, .num_sge = 1, .opcode = op,
                           .send_flags = IBV_SEND_SIGNALED};
  wr.wr.rdma.remote_addr = raddr;
  wr.wr.rdma.rkey = rkey;
  struct ibv_send_wr* bad = NULL;
  return ibv_post_send(s->qp, &wr, &bad);
}

/* A BIND_MW (type 2) or LOCAL_INV posted with ibv_post_send. */
static int post_bind(struct ibv_qp* qp, uint64_t wr_id, struct ibv_mw* mw, uint32_t rkey,
                     struct ibv_mr* mr, void* addr, uint64_t len, unsigned access) {
  struct ibv_send_wr wr = {.wr_id = wr_id, .opcode = IBV_WR_BIND_MW,
                           .send_flags = IBV_SEND_SIGNALED};
  wr.bind_mw.mw = mw;
  wr.bind_mw.rkey = rkey;
  wr.bind_mw.bind_info = (struct ibv_mw_bind_info){mr, (uintptr_t)addr, len, access};
  struct ibv_send_wr* bad = NULL;
  return ibv_post_send(qp, &wr, &bad);
}

static int post_local_inv(struct ibv_qp* qp, uint64_t wr_id, uint32_t rkey) {
  struct ibv_send_wr wr = {.wr_id = wr_id, .opcode = IBV_WR_LOCAL_INV,
                           .send_flags = IBV_SEND_SIGNALED, .invalidate_rkey = rkey};
  struct ibv_send_wr* bad = NULL;
  return ibv_post_send(qp, &wr, &bad);
}

static void post_recv(struct side* s, uint64_t wr_id, uint32_t off) {
  struct ibv_sge sge = {(uintptr_t)(s->buf + off), 100, s->mr->lkey};
  struct ibv_recv_wr wr = {.wr_id = wr_id, .sg_list = &sge, .num_sge = 1}, *bad = NULL;
  REQUIRE(ibv_post_recv(s->qp, &wr, &bad) == 0);
}

/* The receive of a SEND_WITH_INV: IBTA gives IBV_WC_WITH_INV and the rkey; rxe (the profile
 * this runs with) IBV_WC_IP_CSUM_OK and no rkey (Behaviour::recv_inv_flag_as_ip_csum_ok). */
static void check_inv_recv(struct ibv_wc wc, uint64_t wr_id, uint32_t rkey) {
  CHECK(wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_RECV && wc.wr_id == wr_id);
  CHECK(wc.byte_len == 16);
  CHECK((wc.wc_flags & IBV_WC_WITH_INV) ? wc.invalidated_rkey == rkey
                                        : (wc.wc_flags & IBV_WC_IP_CSUM_OK) != 0);
}

/* Another RC QP on s's device, PD and CQ, made with ibv_create_qp_ex for the ibv_wr_* calls. */
static void make_qp_ex(struct side* out, const struct side* s) {
  *out = *s;
  struct ibv_qp_init_attr_ex init = {
      .send_cq = s->cq, .recv_cq = s->cq, .qp_type = IBV_QPT_RC,
      .cap = {.max_send_wr = 8, .max_recv_wr = 8, .max_send_sge = 1, .max_recv_sge = 1},
      .comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS, .pd = s->pd,
      .send_ops_flags = IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_SEND |
                        IBV_QP_EX_WITH_SEND_WITH_INV | IBV_QP_EX_WITH_BIND_MW |
                        IBV_QP_EX_WITH_LOCAL_INV};
  out->qp = ibv_create_qp_ex(s->ctx, &init);
  REQUIRE(out->qp != NULL);
  REQUIRE(ibv_qp_to_qp_ex(out->qp) != NULL);
}

int main(int argc, char** argv) {
  setvbuf(stdout, NULL, _IOLBF, 0);
  if (argc != 1 && argc != 3) {
    fprintf(stderr, "usage: verbs_mw [DEVICE_A DEVICE_B]  (default qptwin0 qptwin1)\n");
    return 2;
  }
  struct side a, b;
  make_side(&a, argc == 3 ? argv[1] : "qptwin0", 32, 8);
  make_side(&b, argc == 3 ? argv[2] : "qptwin1", 32, 8);
  connect_side(&a, &b);
  connect_side(&b, &a);
  char* wraw = malloc(kWinLen + 64);
  REQUIRE(wraw != NULL);
  char* w = wraw + 40;  /* not page aligned */
  memset(w, 0, kWinLen);
  struct ibv_mr* wmr = ibv_reg_mr(b.pd, w, kWinLen,
                                  IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
                                      IBV_ACCESS_REMOTE_READ | IBV_ACCESS_MW_BIND);
  REQUIRE(wmr != NULL);
  for (int i = 0; i < kLen; ++i) a.buf[i] = (char)(i * 7 + 1);

  /* 1. Type 1. */
  errno = 0;
  CHECK(ibv_alloc_mw(b.pd, (enum ibv_mw_type)3) == NULL && errno == EINVAL);
  struct ibv_mw* mw1 = ibv_alloc_mw(b.pd, IBV_MW_TYPE_1);
  struct ibv_mw* mw2 = ibv_alloc_mw(b.pd, IBV_MW_TYPE_2);
  REQUIRE(mw1 != NULL && mw2 != NULL);
  CHECK(mw1->type == IBV_MW_TYPE_1 && mw1->pd == b.pd && mw1->context == b.ctx);
  CHECK(mw2->type == IBV_MW_TYPE_2 && mw1->handle != 0 && mw2->handle != mw1->handle);
  CHECK(mw1->rkey >> 8 != mw2->rkey >> 8 && mw1->rkey >> 8 != b.mr->rkey >> 8);
  struct ibv_mw_bind bind = {
      .wr_id = 10, .send_flags = IBV_SEND_SIGNALED,
      .bind_info = {wmr, (uintptr_t)w + 256, 1024,
                    IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ}};
  CHECK(ibv_bind_mw(b.qp, mw2, &bind) == EINVAL);  /* libibverbs: type 1 only */
  struct ibv_mw_bind bad = bind;
  bad.bind_info.mr = a.mr;  /* another PD */
  CHECK(ibv_bind_mw(b.qp, mw1, &bad) == EPERM);
  bad = bind;
  bad.bind_info.mw_access_flags |= IBV_ACCESS_ZERO_BASED;  /* providers/rxe refuses it */
  CHECK(ibv_bind_mw(b.qp, mw1, &bad) == EINVAL);
  const uint32_t k0 = mw1->rkey;
  REQUIRE(ibv_bind_mw(b.qp, mw1, &bind) == 0);
  CHECK(mw1->rkey == ibv_inc_rkey(k0));
  struct ibv_wc wc = poll_one(b.cq);
  CHECK(wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_BIND_MW && wc.wr_id == 10);
  REQUIRE(post_rdma(&a, 11, IBV_WR_RDMA_WRITE, (uintptr_t)w + 300, mw1->rkey, 0, 64) == 0);
  wc = poll_one(a.cq);
  CHECK(wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_RDMA_WRITE && wc.wr_id == 11);
  CHECK(memcmp(w + 300, a.buf, 64) == 0);
  REQUIRE(post_rdma(&a, 12, IBV_WR_RDMA_READ, (uintptr_t)w + 256, mw1->rkey, 1000, 100) == 0);
  wc = poll_one(a.cq);
  CHECK(wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_RDMA_READ && wc.byte_len == 100);
  CHECK(memcmp(a.buf + 1000, w + 256, 100) == 0);

  /* 2. Type 2 through ibv_post_send. */
  const uint32_t m2 = mw2->rkey, k2 = ibv_inc_rkey(m2);
  REQUIRE(post_bind(b.qp, 20, mw2, k2, wmr, w + 2048, 512, IBV_ACCESS_REMOTE_WRITE) == 0);
  CHECK(mw2->rkey == m2);  /* libibverbs leaves a type 2 window's rkey to the program */
  wc = poll_one(b.cq);
  CHECK(wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_BIND_MW && wc.wr_id == 20);
  mw2->rkey = k2;  /* as a program must before binding it again (rxe names it by mw->rkey) */
  REQUIRE(post_rdma(&a, 21, IBV_WR_RDMA_WRITE, (uintptr_t)w + 2148, k2, 100, 64) == 0);
  wc = poll_one(a.cq);
  CHECK(wc.status == IBV_WC_SUCCESS && wc.wr_id == 21);
  CHECK(memcmp(w + 2148, a.buf + 100, 64) == 0);
  post_recv(&b, 22, 5000);
  struct ibv_sge s16 = {(uintptr_t)a.buf, 16, a.mr->lkey};
  struct ibv_send_wr iw = {.wr_id = 23, .sg_list = &s16, .num_sge = 1,
                           .opcode = IBV_WR_SEND_WITH_INV, .send_flags = IBV_SEND_SIGNALED,
                           .invalidate_rkey = k2}, *ibad = NULL;
  REQUIRE(ibv_post_send(a.qp, &iw, &ibad) == 0);
  wc = poll_one(a.cq);
  CHECK(wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_SEND && wc.wr_id == 23);
  check_inv_recv(poll_one(b.cq), 22, k2);
  CHECK(memcmp(b.buf + 5000, a.buf, 16) == 0);
  const uint32_t k3 = ibv_inc_rkey(k2);  /* invalidated, so free: bind it again */
  REQUIRE(post_bind(b.qp, 24, mw2, k3, wmr, w + 2048, 512, IBV_ACCESS_REMOTE_WRITE) == 0);
  wc = poll_one(b.cq);
  CHECK(wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_BIND_MW && wc.wr_id == 24);
  mw2->rkey = k3;
  REQUIRE(post_rdma(&a, 25, IBV_WR_RDMA_WRITE, (uintptr_t)w + 2048, k3, 200, 32) == 0);
  wc = poll_one(a.cq);
  CHECK(wc.status == IBV_WC_SUCCESS && wc.wr_id == 25);
  CHECK(memcmp(w + 2048, a.buf + 200, 32) == 0);
  REQUIRE(post_local_inv(b.qp, 26, k3) == 0);
  wc = poll_one(b.cq);
  CHECK(wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_LOCAL_INV && wc.wr_id == 26);

  /* 3. Type 2 through ibv_wr_*: a zero-based window on a second QP pair. */
  struct side c, d;
  make_qp_ex(&c, &a);
  make_qp_ex(&d, &b);
  connect_side(&c, &d);
  connect_side(&d, &c);
  struct ibv_qp_ex* cx = ibv_qp_to_qp_ex(c.qp);
  struct ibv_qp_ex* dx = ibv_qp_to_qp_ex(d.qp);
  struct ibv_mw* mw3 = ibv_alloc_mw(b.pd, IBV_MW_TYPE_2);
  REQUIRE(mw3 != NULL);
  const uint32_t k4 = ibv_inc_rkey(mw3->rkey);
  const struct ibv_mw_bind_info zb = {wmr, (uintptr_t)w + 3072, 1024,
                                      IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_ZERO_BASED};
  ibv_wr_start(dx);
  dx->wr_id = 30;
  dx->wr_flags = IBV_SEND_SIGNALED;
  ibv_wr_bind_mw(dx, mw3, k4, &zb);
  REQUIRE(ibv_wr_complete(dx) == 0);
  wc = poll_one(b.cq);
  CHECK(wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_BIND_MW && wc.wr_id == 30);
  mw3->rkey = k4;
  ibv_wr_start(cx);
  cx->wr_id = 31;
  cx->wr_flags = IBV_SEND_SIGNALED;
  ibv_wr_rdma_write(cx, k4, 100);  /* zero-based: 100 bytes into the window */
  ibv_wr_set_sge(cx, a.mr->lkey, (uintptr_t)a.buf + 300, 48);
  REQUIRE(ibv_wr_complete(cx) == 0);
  wc = poll_one(a.cq);
  CHECK(wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_RDMA_WRITE && wc.wr_id == 31);
  CHECK(memcmp(w + 3072 + 100, a.buf + 300, 48) == 0);
  post_recv(&d, 32, 6000);
  ibv_wr_start(cx);
  cx->wr_id = 33;
  cx->wr_flags = IBV_SEND_SIGNALED;
  ibv_wr_send_inv(cx, k4);
  ibv_wr_set_sge(cx, a.mr->lkey, (uintptr_t)a.buf + 16, 16);
  REQUIRE(ibv_wr_complete(cx) == 0);
  wc = poll_one(a.cq);
  CHECK(wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_SEND && wc.wr_id == 33);
  check_inv_recv(poll_one(b.cq), 32, k4);
  CHECK(memcmp(b.buf + 6000, a.buf + 16, 16) == 0);
  const uint32_t k5 = ibv_inc_rkey(k4);
  ibv_wr_start(dx);
  dx->wr_id = 34;
  dx->wr_flags = IBV_SEND_SIGNALED;
  ibv_wr_bind_mw(dx, mw3, k5, &zb);
  dx->wr_id = 35;
  ibv_wr_local_inv(dx, k5);  /* bound and invalidated in one batch */
  REQUIRE(ibv_wr_complete(dx) == 0);
  wc = poll_one(b.cq);
  CHECK(wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_BIND_MW && wc.wr_id == 34);
  wc = poll_one(b.cq);
  CHECK(wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_LOCAL_INV && wc.wr_id == 35);
  mw3->rkey = k5;

  /* 4. Refusals: mw1 is still bound to wmr. */
  CHECK(ibv_dereg_mr(wmr) == EINVAL);   /* rxe_dereg_mr: the region has windows */
  CHECK(ibv_dealloc_pd(b.pd) == EBUSY);
  REQUIRE(post_rdma(&a, 40, IBV_WR_RDMA_WRITE, (uintptr_t)w + 2048, k3, 0, 8) == 0);
  wc = poll_one(a.cq);
  CHECK(wc.status == IBV_WC_REM_ACCESS_ERR && wc.wr_id == 40);  /* k3 was invalidated */
  CHECK(ibv_dealloc_mw(mw1) == 0);  /* bound: unbound with it */
  CHECK(ibv_dealloc_mw(mw2) == 0 && ibv_dealloc_mw(mw3) == 0);
  CHECK(ibv_dereg_mr(wmr) == 0);

  /* 5. A rebind naming a stale rkey (d goes to ERR: last use of the c/d pair). */
  struct ibv_mr* wmr2 = ibv_reg_mr(b.pd, w, kWinLen,
                                   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
                                       IBV_ACCESS_MW_BIND);
  REQUIRE(wmr2 != NULL);
  struct ibv_mw* mw4 = ibv_alloc_mw(b.pd, IBV_MW_TYPE_2);
  REQUIRE(mw4 != NULL);
  const uint32_t r4 = mw4->rkey, k6 = ibv_inc_rkey(r4);
  REQUIRE(post_bind(d.qp, 50, mw4, k6, wmr2, w + 512, 256, IBV_ACCESS_REMOTE_WRITE) == 0);
  wc = poll_one(b.cq);
  CHECK(wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_BIND_MW && wc.wr_id == 50);
  REQUIRE(post_local_inv(d.qp, 51, k6) == 0);
  wc = poll_one(b.cq);
  CHECK(wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_LOCAL_INV && wc.wr_id == 51);
  CHECK(mw4->rkey == r4);  /* not stored: the next bind names the window by r4 */
  REQUIRE(post_bind(d.qp, 52, mw4, ibv_inc_rkey(k6), wmr2, w + 512, 256,
                    IBV_ACCESS_REMOTE_WRITE) == 0);
  wc = poll_one(b.cq);
  CHECK(wc.status == IBV_WC_MW_BIND_ERR && wc.wr_id == 52);
  CHECK(ibv_dealloc_mw(mw4) == 0);
  CHECK(ibv_dereg_mr(wmr2) == 0);

  CHECK(ibv_destroy_qp(c.qp) == 0 && ibv_destroy_qp(d.qp) == 0);
  CHECK(ibv_destroy_qp(a.qp) == 0 && ibv_destroy_qp(b.qp) == 0);
  CHECK(ibv_dereg_mr(a.mr) == 0 && ibv_dereg_mr(b.mr) == 0);
  CHECK(ibv_destroy_cq(a.cq) == 0 && ibv_destroy_cq(b.cq) == 0);
  CHECK(ibv_destroy_comp_channel(a.ch) == 0 && ibv_destroy_comp_channel(b.ch) == 0);
  CHECK(ibv_dealloc_pd(a.pd) == 0 && ibv_dealloc_pd(b.pd) == 0);
  CHECK(ibv_close_device(a.ctx) == 0 && ibv_close_device(b.ctx) == 0);
  free(a.raw);
  free(b.raw);
  free(wraw);
  printf("%s: %d failed checks\n", failures ? "FAIL" : "PASS", failures);
  return failures ? 1 : 0;
}
