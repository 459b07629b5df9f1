/* ib_write_bw's loop in one process (plain C, -libverbs only): 8-byte RDMA WRITEs from a QP
 * on qptwin0 to one on qptwin1, TX depth 128, every 100th signaled (perftest's CQ
 * moderation), polled 16 at a time. Prints the wall-clock message rate and the verbs calls
 * made, so that the preload's cost per call can be set beside `qptwin bench write_bw -s 8`
 * (tools/exec/README.md, docs/bench/REPORT.md).
 * usage: verbs_rate [ITERATIONS] [SIZE] */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "tools/exec/verbs_pair.h"

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

int main(int argc, char** argv) {
  const long iters = argc > 1 ? atol(argv[1]) : 100000;
  const uint32_t size = argc > 2 ? (uint32_t)atol(argv[2]) : 8;
  enum { kDepth = 128, kModeration = 100 };
  struct side a, b;
  make_side(&a, "qptwin0", 256, kDepth);
  make_side(&b, "qptwin1", 256, kDepth);
  connect_side(&a, &b);
  connect_side(&b, &a);
  struct ibv_sge sge = {.addr = (uintptr_t)a.buf, .length = size, .lkey = a.mr->lkey};
  struct ibv_send_wr wr = {.sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE};
  wr.wr.rdma.remote_addr = (uintptr_t)b.buf;
  wr.wr.rdma.rkey = b.mr->rkey;
  long posted = 0, completed = 0, posts = 0, polls = 0, outstanding = 0;
  struct ibv_wc wc[16];
  const double t0 = now_s();
  while (completed < iters) {
    while (posted < iters && outstanding + kModeration <= kDepth) {
      /* One post of kModeration WRs would be a post list; perftest posts one at a time. */
      for (int i = 0; i < kModeration && posted < iters; ++i) {
        wr.wr_id = (uint64_t)posted;
        wr.send_flags = (i == kModeration - 1 || posted == iters - 1) ? IBV_SEND_SIGNALED : 0;
        struct ibv_send_wr* bad = NULL;
        REQUIRE(ibv_post_send(a.qp, &wr, &bad) == 0);
        ++posts;
        ++posted;
      }
      outstanding += kModeration;
    }
    const int n = ibv_poll_cq(a.cq, 16, wc);
    ++polls;
    REQUIRE(n >= 0);
    for (int i = 0; i < n; ++i) {
      REQUIRE(wc[i].status == IBV_WC_SUCCESS);
      const long done = (long)wc[i].wr_id + 1;
      outstanding -= kModeration;
      completed = done;
    }
  }
  const double wall = now_s() - t0;
  printf("verbs_rate: %ld x %u B RDMA WRITE, %ld posts + %ld polls in %.3f s wall: "
         "%.1f kWR/s, %.3f us per verbs call\n",
         iters, size, posts, polls, wall, iters / wall / 1e3, wall / (posts + polls) * 1e6);
  return failures ? 1 : 0;
}
