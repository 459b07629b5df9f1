/* An ordinary libibverbs program (plain C, linked with -libverbs, nothing of qptwin): RC
 * between a QP on qptwin0 and one on qptwin1, both in this process. Run under the preload
 * (verbs_loopback_test.sh). It checks the data that arrives and the errnos that come back,
 * prints one line per completion, and exits 0 only when every check held. */
#include <errno.h>
#include <infiniband/verbs.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <poll.h>

#include "tools/exec/verbs_pair.h"

/* Busy-polls as perftest does: an empty poll lets simulated time pass. */
static struct ibv_wc poll_one(struct ibv_cq* cq) {
  struct ibv_wc wc;
  int n;
  long spins = 0;
  while ((n = ibv_poll_cq(cq, 1, &wc)) == 0) REQUIRE(++spins < 100000000);
  REQUIRE(n == 1);
  printf("wc wr_id=%llu status=%s opcode=%d byte_len=%u imm=%u\n",
         (unsigned long long)wc.wr_id, ibv_wc_status_str(wc.status), wc.opcode, wc.byte_len,
         (wc.wc_flags & IBV_WC_WITH_IMM) ? ntohl(wc.imm_data) : 0);
  return wc;
}

static int post_send(struct side* s, uint64_t wr_id, enum ibv_wr_opcode op, uint64_t raddr,
                     uint32_t rkey, uint32_t off, uint32_t len, unsigned flags) {
  struct ibv_sge sge = {.addr = (uintptr_t)(s->buf + off), .length = len, .lkey = s->mr->lkey};
  struct ibv_send_wr wr = {.wr_id = wr_id, .sg_list = &sge, .num_sge = 1, .opcode = op,
                           .send_flags = IBV_SEND_SIGNALED | flags};
  wr.imm_data = htonl(0x1234);
  if (op == IBV_WR_ATOMIC_FETCH_AND_ADD) {
    wr.wr.atomic.remote_addr = raddr;
    wr.wr.atomic.rkey = rkey;
    wr.wr.atomic.compare_add = 5;
  } else {
    wr.wr.rdma.remote_addr = raddr;
    wr.wr.rdma.rkey = rkey;
  }
  struct ibv_send_wr* bad = NULL;
  return ibv_post_send(s->qp, &wr, &bad);
}

int main(void) {
  setvbuf(stdout, NULL, _IOLBF, 0);
  struct side a, b;
  make_side(&a, "qptwin0", 16, 8);
  make_side(&b, "qptwin1", 16, 8);
  connect_side(&a, &b);
  connect_side(&b, &a);

  /* RDMA WRITE: a's bytes 0..99 land in b's buffer at 1000. */
  for (int i = 0; i < 100; ++i) a.buf[i] = (char)(i + 1);
  REQUIRE(post_send(&a, 1, IBV_WR_RDMA_WRITE, (uintptr_t)b.buf + 1000, b.mr->rkey, 0, 100, 0) == 0);
  struct ibv_wc wc = poll_one(a.cq);
  CHECK(wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_RDMA_WRITE && wc.wr_id == 1);
  CHECK(memcmp(b.buf + 1000, a.buf, 100) == 0);

  /* SEND with immediate into a posted receive (two SGEs), inline from the stack. */
  struct ibv_sge rsge[2] = {{(uintptr_t)(b.buf + 5000), 10, b.mr->lkey},
                            {(uintptr_t)(b.buf + 6000), 100, b.mr->lkey}};
  struct ibv_recv_wr rwr = {.wr_id = 7, .sg_list = rsge, .num_sge = 2}, *rbad = NULL;
  REQUIRE(ibv_post_recv(b.qp, &rwr, &rbad) == 0);
  char msg[] = "hello from an unmodified verbs program";
  struct ibv_sge isge = {.addr = (uintptr_t)msg, .length = sizeof(msg), .lkey = 0};
  struct ibv_send_wr swr = {.wr_id = 2, .sg_list = &isge, .num_sge = 1,
                            .opcode = IBV_WR_SEND_WITH_IMM,
                            .send_flags = IBV_SEND_SIGNALED | IBV_SEND_INLINE,
                            .imm_data = htonl(42)}, *sbad = NULL;
  REQUIRE(ibv_post_send(a.qp, &swr, &sbad) == 0);
  wc = poll_one(a.cq);
  CHECK(wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_SEND);
  wc = poll_one(b.cq);
  CHECK(wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_RECV && wc.wr_id == 7);
  CHECK(wc.byte_len == sizeof(msg));
  CHECK((wc.wc_flags & IBV_WC_WITH_IMM) && ntohl(wc.imm_data) == 42);
  CHECK(wc.qp_num == b.qp->qp_num);
  CHECK(memcmp(b.buf + 5000, msg, 10) == 0 && memcmp(b.buf + 6000, msg + 10, sizeof(msg) - 10) == 0);

  /* RDMA READ back and a fetch-and-add on b's buffer. */
  REQUIRE(post_send(&a, 3, IBV_WR_RDMA_READ, (uintptr_t)b.buf + 5000, b.mr->rkey, 200, 39, 0) == 0);
  wc = poll_one(a.cq);
  CHECK(wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_RDMA_READ);
  CHECK(memcmp(a.buf + 200, msg, 10) == 0);
  uint64_t* counter = (uint64_t*)(b.buf + 8000);
  *counter = 100;
  REQUIRE(post_send(&a, 4, IBV_WR_ATOMIC_FETCH_AND_ADD, (uintptr_t)counter, b.mr->rkey, 304, 8, 0) == 0);
  wc = poll_one(a.cq);
  CHECK(wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_FETCH_ADD);
  CHECK(*counter == 105 && *(uint64_t*)(a.buf + 304) == 100);

  /* A bad rkey: a remote access error, and the QP goes to ERR (IBTA 9.7.5.2.8). */
  REQUIRE(ibv_req_notify_cq(a.cq, 0) == 0);
  REQUIRE(post_send(&a, 5, IBV_WR_RDMA_WRITE, (uintptr_t)b.buf, b.mr->rkey ^ 0x80, 0, 8, 0) == 0);
  /* Asleep in poll() on the channel fd, as event-driven programs are: time passes. */
  struct pollfd pfd = {.fd = a.ch->fd, .events = POLLIN};
  CHECK(poll(&pfd, 1, 10000) == 1 && (pfd.revents & POLLIN));
  struct ibv_cq* ev_cq = NULL;
  void* ev_ctx = NULL;
  REQUIRE(ibv_get_cq_event(a.ch, &ev_cq, &ev_ctx) == 0);  /* waits in simulated time */
  CHECK(ev_cq == a.cq && ev_ctx == &a);
  ibv_ack_cq_events(ev_cq, 1);
  wc = poll_one(a.cq);
  CHECK(wc.status == IBV_WC_REM_ACCESS_ERR && wc.wr_id == 5);

  /* Errnos rxe returns. */
  CHECK(ibv_dealloc_pd(a.pd) == EBUSY);
  CHECK(ibv_destroy_cq(a.cq) == EBUSY);

  CHECK(ibv_destroy_qp(a.qp) == 0 && ibv_destroy_qp(b.qp) == 0);
  CHECK(ibv_dereg_mr(a.mr) == 0 && ibv_dereg_mr(b.mr) == 0);
  CHECK(memcmp(b.buf + 1000, a.buf, 100) == 0);  /* the program keeps its bytes */
  CHECK(ibv_destroy_cq(a.cq) == 0 && ibv_destroy_cq(b.cq) == 0);
  CHECK(ibv_destroy_comp_channel(a.ch) == 0 && ibv_destroy_comp_channel(b.ch) == 0);
  CHECK(ibv_dealloc_pd(a.pd) == 0 && ibv_dealloc_pd(b.pd) == 0);
  CHECK(ibv_close_device(a.ctx) == 0 && ibv_close_device(b.ctx) == 0);
  free(a.raw);
  free(b.raw);
  printf("%s: %d failed checks\n", failures ? "FAIL" : "PASS", failures);
  return failures ? 1 : 0;
}
