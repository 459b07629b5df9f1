#include "tools/exec/verbs_pair.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>

int failures = 0;

struct ibv_context* open_named(const char* name) {
  int n = 0;
  struct ibv_device** list = ibv_get_device_list(&n);
  REQUIRE(list != NULL);
  struct ibv_context* ctx = NULL;
  for (int i = 0; i < n; ++i) {
    if (strcmp(ibv_get_device_name(list[i]), name) == 0) ctx = ibv_open_device(list[i]);
  }
  ibv_free_device_list(list);
  return ctx;
}

void make_side(struct side* s, const char* name, int cq_depth, int max_send_wr) {
  s->ctx = open_named(name);
  REQUIRE(s->ctx != NULL);
  s->pd = ibv_alloc_pd(s->ctx);
  REQUIRE(s->pd != NULL);
  s->ch = ibv_create_comp_channel(s->ctx);
  REQUIRE(s->ch != NULL);
  s->cq = ibv_create_cq(s->ctx, cq_depth, s, s->ch, 0);
  REQUIRE(s->cq != NULL);
  s->raw = malloc(kLen + 64);
  s->buf = s->raw + 24;
  memset(s->buf, 0, kLen);
  s->mr = ibv_reg_mr(s->pd, s->buf, kLen,
                     IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
                         IBV_ACCESS_REMOTE_ATOMIC);
  REQUIRE(s->mr != NULL);
  struct ibv_qp_init_attr init = {
      .send_cq = s->cq, .recv_cq = s->cq, .qp_type = IBV_QPT_RC,
      .cap = {.max_send_wr = max_send_wr, .max_recv_wr = 8, .max_send_sge = 2, .max_recv_sge = 2,
              .max_inline_data = 64}};
  s->qp = ibv_create_qp(s->pd, &init);
  REQUIRE(s->qp != NULL);
  CHECK(init.cap.max_send_wr >= (uint32_t)max_send_wr);
  REQUIRE(ibv_query_gid(s->ctx, 1, kGidIndex, &s->gid) == 0);
}

void connect_side(struct side* s, const struct side* peer) {
  struct ibv_qp_attr a = {.qp_state = IBV_QPS_INIT, .pkey_index = 0, .port_num = 1,
                          .qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
                                             IBV_ACCESS_REMOTE_ATOMIC};
  REQUIRE(ibv_modify_qp(s->qp, &a,
                        IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS) == 0);
  CHECK(s->qp->state == IBV_QPS_INIT);
  memset(&a, 0, sizeof(a));
  a.qp_state = IBV_QPS_RTR;
  a.path_mtu = IBV_MTU_1024;
  a.dest_qp_num = peer->qp->qp_num;
  a.rq_psn = 0;
  a.max_dest_rd_atomic = 1;
  a.min_rnr_timer = 12;
  a.ah_attr.is_global = 1;
  a.ah_attr.grh.dgid = peer->gid;
  a.ah_attr.grh.sgid_index = kGidIndex;
  a.ah_attr.grh.hop_limit = 1;
  a.ah_attr.port_num = 1;
  /* RTR without its required attributes: EINVAL, nothing changes (ibv_modify_qp(3)). */
  CHECK(ibv_modify_qp(s->qp, &a, IBV_QP_STATE) == EINVAL);
  CHECK(s->qp->state == IBV_QPS_INIT);
  REQUIRE(ibv_modify_qp(s->qp, &a,
                        IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
                            IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER) == 0);
  memset(&a, 0, sizeof(a));
  a.qp_state = IBV_QPS_RTS;
  a.timeout = 14;
  a.retry_cnt = 7;
  a.rnr_retry = 7;
  a.sq_psn = 0;
  a.max_rd_atomic = 1;
  REQUIRE(ibv_modify_qp(s->qp, &a,
                        IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
                            IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC) == 0);
  struct ibv_qp_attr q;
  struct ibv_qp_init_attr qi;
  REQUIRE(ibv_query_qp(s->qp, &q, IBV_QP_STATE | IBV_QP_DEST_QPN, &qi) == 0);
  CHECK(q.qp_state == IBV_QPS_RTS);
  CHECK(q.dest_qp_num == peer->qp->qp_num);
  CHECK(qi.send_cq == s->cq);
}

