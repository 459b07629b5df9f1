/* An ordinary libibverbs program (plain C, -libverbs only) for the extended verbs, under the
 * preload (verbs_ex_test.sh): create_cq_ex + ibv_start_poll/ibv_wc_read_*, create_qp_ex +
 * ibv_wr_* (WRITE, SEND_WITH_IMM inline), an SRQ (post, query, modify: the limit event
 * through ibv_get_async_event), and UD with an AH, answered with ibv_create_ah_from_wc. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "tools/exec/verbs_pair.h"

static struct ibv_cq_ex* cq_ex(struct ibv_context* ctx) {
  struct ibv_cq_init_attr_ex a = {.cqe = 32, .wc_flags = IBV_WC_STANDARD_FLAGS};
  struct ibv_cq_ex* cq = ibv_create_cq_ex(ctx, &a);
  REQUIRE(cq != NULL);
  return cq;
}

/* The next completion through the extended API (start_poll lets simulated time pass). */
static int next_wc(struct ibv_cq_ex* cq, int* started) {
  for (long spins = 0;; ++spins) {
    REQUIRE(spins < 10000000);
    const int rc = *started ? ibv_next_poll(cq) : ibv_start_poll(cq, &(struct ibv_poll_cq_attr){0});
    if (rc == 0) {
      *started = 1;
      return 0;
    }
    REQUIRE(rc == ENOENT);
    if (*started) {
      ibv_end_poll(cq);
      *started = 0;
    }
  }
}

static void rc_with_srq(void) {
  struct side a = {0}, b = {0};
  a.ctx = open_named("qptwin0");
  b.ctx = open_named("qptwin1");
  REQUIRE(a.ctx && b.ctx);
  a.pd = ibv_alloc_pd(a.ctx);
  b.pd = ibv_alloc_pd(b.ctx);
  struct ibv_cq_ex* acq = cq_ex(a.ctx);
  struct ibv_cq_ex* bcq = cq_ex(b.ctx);
  a.buf = a.raw = calloc(1, kLen);
  b.buf = b.raw = calloc(1, kLen);
  const int acc = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
  a.mr = ibv_reg_mr(a.pd, a.buf, kLen, acc);
  b.mr = ibv_reg_mr(b.pd, b.buf, kLen, acc);
  REQUIRE(a.mr && b.mr);
  struct ibv_srq_init_attr sa = {.attr = {.max_wr = 8, .max_sge = 1}};
  struct ibv_srq* srq = ibv_create_srq(b.pd, &sa);
  REQUIRE(srq != NULL);
  for (int i = 0; i < 4; ++i) {
    struct ibv_sge s = {(uintptr_t)(b.buf + 1000 * i), 1000, b.mr->lkey};
    struct ibv_recv_wr r = {.wr_id = 100 + i, .sg_list = &s, .num_sge = 1}, *bad;
    REQUIRE(ibv_post_srq_recv(srq, &r, &bad) == 0);
  }
  struct ibv_srq_attr q;
  REQUIRE(ibv_query_srq(srq, &q) == 0);
  CHECK(q.max_wr >= 8 && q.srq_limit == 0);
  q.srq_limit = 3;
  CHECK(ibv_modify_srq(srq, &q, IBV_SRQ_LIMIT) == 0);
  struct ibv_qp_init_attr_ex qa = {
      .qp_type = IBV_QPT_RC, .comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
      .cap = {.max_send_wr = 8, .max_recv_wr = 8, .max_send_sge = 1, .max_recv_sge = 1,
              .max_inline_data = 64},
      .send_ops_flags = IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_SEND_WITH_IMM};
  qa.pd = a.pd;
  qa.send_cq = qa.recv_cq = ibv_cq_ex_to_cq(acq);
  a.qp = ibv_create_qp_ex(a.ctx, &qa);
  qa.pd = b.pd;
  qa.send_cq = qa.recv_cq = ibv_cq_ex_to_cq(bcq);
  qa.srq = srq;
  b.qp = ibv_create_qp_ex(b.ctx, &qa);
  REQUIRE(a.qp && b.qp);
  a.cq = ibv_cq_ex_to_cq(acq);
  b.cq = ibv_cq_ex_to_cq(bcq);
  REQUIRE(ibv_query_gid(a.ctx, 1, kGidIndex, &a.gid) == 0);
  REQUIRE(ibv_query_gid(b.ctx, 1, kGidIndex, &b.gid) == 0);
  connect_side(&a, &b);
  connect_side(&b, &a);

  struct ibv_qp_ex* x = ibv_qp_to_qp_ex(a.qp);
  REQUIRE(x != NULL);
  strcpy(a.buf, "written by ibv_wr_rdma_write");
  char msg[] = "sent by ibv_wr_send_imm";
  ibv_wr_start(x);
  x->wr_id = 1;
  x->wr_flags = IBV_SEND_SIGNALED;
  ibv_wr_rdma_write(x, b.mr->rkey, (uintptr_t)b.buf + 5000);
  ibv_wr_set_sge(x, a.mr->lkey, (uintptr_t)a.buf, 29);
  x->wr_id = 2;
  ibv_wr_send_imm(x, htonl(77));
  ibv_wr_set_inline_data(x, msg, sizeof(msg));
  x->wr_id = 3;
  ibv_wr_send_imm(x, htonl(78));
  ibv_wr_set_inline_data(x, msg, sizeof(msg));
  REQUIRE(ibv_wr_complete(x) == 0);

  int started = 0;
  for (uint64_t want = 1; want <= 3; ++want) {
    next_wc(acq, &started);
    printf("a: wr_id=%llu status=%d opcode=%d\n", (unsigned long long)acq->wr_id, acq->status,
           ibv_wc_read_opcode(acq));
    CHECK(acq->wr_id == want && acq->status == IBV_WC_SUCCESS);
  }
  ibv_end_poll(acq);
  started = 0;
  for (int i = 0; i < 2; ++i) {
    next_wc(bcq, &started);
    printf("b: wr_id=%llu status=%d opcode=%d byte_len=%u imm=%u\n",
           (unsigned long long)bcq->wr_id, bcq->status, ibv_wc_read_opcode(bcq),
           ibv_wc_read_byte_len(bcq), ntohl(ibv_wc_read_imm_data(bcq)));
    CHECK(bcq->wr_id == (uint64_t)(100 + i) && bcq->status == IBV_WC_SUCCESS);
    CHECK(ibv_wc_read_opcode(bcq) == IBV_WC_RECV && ibv_wc_read_byte_len(bcq) == sizeof(msg));
    CHECK(ntohl(ibv_wc_read_imm_data(bcq)) == (uint32_t)(77 + i));
    CHECK(ibv_wc_read_qp_num(bcq) == b.qp->qp_num);
    CHECK(memcmp(b.buf + 1000 * i, msg, sizeof(msg)) == 0);
  }
  ibv_end_poll(bcq);
  CHECK(strcmp(b.buf + 5000, "written by ibv_wr_rdma_write") == 0);
  /* Two WRs left on the SRQ, below the limit of 3: SRQ_LIMIT_REACHED, once. */
  struct ibv_async_event ev;
  REQUIRE(ibv_get_async_event(b.ctx, &ev) == 0);
  printf("b: async event %s\n", ibv_event_type_str(ev.event_type));
  CHECK(ev.event_type == IBV_EVENT_SRQ_LIMIT_REACHED && ev.element.srq == srq);
  ibv_ack_async_event(&ev);
  REQUIRE(ibv_query_srq(srq, &q) == 0);
  CHECK(q.srq_limit == 0);  /* the event disarmed it */

  CHECK(ibv_destroy_srq(srq) == EBUSY);
  CHECK(ibv_destroy_qp(a.qp) == 0 && ibv_destroy_qp(b.qp) == 0);
  CHECK(ibv_destroy_srq(srq) == 0);
  CHECK(ibv_destroy_cq(ibv_cq_ex_to_cq(acq)) == 0 && ibv_destroy_cq(ibv_cq_ex_to_cq(bcq)) == 0);
  CHECK(ibv_dereg_mr(a.mr) == 0 && ibv_dereg_mr(b.mr) == 0);
  CHECK(ibv_dealloc_pd(a.pd) == 0 && ibv_dealloc_pd(b.pd) == 0);
  CHECK(ibv_close_device(a.ctx) == 0 && ibv_close_device(b.ctx) == 0);
  free(a.raw);
  free(b.raw);
}

struct ud_end {
  struct ibv_context* ctx;
  struct ibv_pd* pd;
  struct ibv_cq* cq;
  struct ibv_qp* qp;
  struct ibv_mr* mr;
  char* buf;
};

static void ud_end(struct ud_end* e, const char* name) {
  e->ctx = open_named(name);
  REQUIRE(e->ctx != NULL);
  e->pd = ibv_alloc_pd(e->ctx);
  e->cq = ibv_create_cq(e->ctx, 8, NULL, NULL, 0);
  e->buf = calloc(1, 4096);
  e->mr = ibv_reg_mr(e->pd, e->buf, 4096, IBV_ACCESS_LOCAL_WRITE);
  struct ibv_qp_init_attr ia = {.send_cq = e->cq, .recv_cq = e->cq, .qp_type = IBV_QPT_UD,
                                .cap = {.max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1,
                                        .max_recv_sge = 1}};
  e->qp = ibv_create_qp(e->pd, &ia);
  REQUIRE(e->pd && e->cq && e->mr && e->qp);
  struct ibv_qp_attr a = {.qp_state = IBV_QPS_INIT, .port_num = 1, .qkey = 0x11111111};
  REQUIRE(ibv_modify_qp(e->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY) == 0);
  a.qp_state = IBV_QPS_RTR;
  REQUIRE(ibv_modify_qp(e->qp, &a, IBV_QP_STATE) == 0);
  a.qp_state = IBV_QPS_RTS;
  REQUIRE(ibv_modify_qp(e->qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN) == 0);
  struct ibv_sge s = {(uintptr_t)e->buf, 40 + 100, e->mr->lkey};
  struct ibv_recv_wr r = {.wr_id = 9, .sg_list = &s, .num_sge = 1}, *bad;
  REQUIRE(ibv_post_recv(e->qp, &r, &bad) == 0);
}

static struct ibv_wc poll_cq(struct ibv_cq* cq) {
  struct ibv_wc wc;
  int n;
  for (long spins = 0; (n = ibv_poll_cq(cq, 1, &wc)) == 0;) REQUIRE(++spins < 10000000);
  REQUIRE(n == 1);
  return wc;
}

static void ud_send(struct ud_end* from, struct ibv_ah* ah, uint32_t qpn, const char* text) {
  strcpy(from->buf + 2000, text);
  struct ibv_sge s = {(uintptr_t)(from->buf + 2000), (uint32_t)strlen(text) + 1, from->mr->lkey};
  struct ibv_send_wr w = {.wr_id = 1, .sg_list = &s, .num_sge = 1, .opcode = IBV_WR_SEND,
                          .send_flags = IBV_SEND_SIGNALED}, *bad;
  w.wr.ud.ah = ah;
  w.wr.ud.remote_qpn = qpn;
  w.wr.ud.remote_qkey = 0x11111111;
  REQUIRE(ibv_post_send(from->qp, &w, &bad) == 0);
  struct ibv_wc wc = poll_cq(from->cq);
  CHECK(wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_SEND);
}

static void ud_with_ah_from_wc(void) {
  struct ud_end a, b;
  ud_end(&a, "qptwin0");
  ud_end(&b, "qptwin1");
  union ibv_gid bgid;
  REQUIRE(ibv_query_gid(b.ctx, 1, kGidIndex, &bgid) == 0);
  struct ibv_ah_attr aa = {.is_global = 1, .port_num = 1,
                           .grh = {.dgid = bgid, .sgid_index = kGidIndex, .hop_limit = 64}};
  struct ibv_ah* ah = ibv_create_ah(a.pd, &aa);
  REQUIRE(ah != NULL);
  ud_send(&a, ah, b.qp->qp_num, "ping over UD");
  struct ibv_wc wc = poll_cq(b.cq);
  printf("b: UD recv status=%d byte_len=%u src_qp=%u grh=%d\n", wc.status, wc.byte_len,
         wc.src_qp, !!(wc.wc_flags & IBV_WC_GRH));
  CHECK(wc.status == IBV_WC_SUCCESS && wc.src_qp == a.qp->qp_num);
  CHECK(wc.byte_len == 40 + 13 && strcmp(b.buf + 40, "ping over UD") == 0);
  /* Answer the sender with an AH made from what arrived. */
  struct ibv_ah* back = ibv_create_ah_from_wc(b.pd, &wc, (struct ibv_grh*)b.buf, 1);
  REQUIRE(back != NULL);
  ud_send(&b, back, wc.src_qp, "pong");
  wc = poll_cq(a.cq);
  CHECK(wc.status == IBV_WC_SUCCESS && strcmp(a.buf + 40, "pong") == 0);
  CHECK(ibv_dealloc_pd(a.pd) == EBUSY);  /* the AH holds it */
  CHECK(ibv_destroy_ah(ah) == 0 && ibv_destroy_ah(back) == 0);
  CHECK(ibv_close_device(a.ctx) == 0 && ibv_close_device(b.ctx) == 0);
  free(a.buf);
  free(b.buf);
}

int main(void) {
  setvbuf(stdout, NULL, _IOLBF, 0);
  rc_with_srq();
  ud_with_ah_from_wc();
  printf("%s: %d failed checks\n", failures ? "FAIL" : "PASS", failures);
  return failures ? 1 : 0;
}
