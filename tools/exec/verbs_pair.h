/* Two RC QPs connected to each other, one on qptwin0 and one on qptwin1, in one process:
 * the setup the plain-C verbs programs of tools/exec share (only libibverbs calls). */
#pragma once

#include <infiniband/verbs.h>
#include <stdio.h>
#include <stdlib.h>

extern int failures;
#define CHECK(cond)                                                          \
  do {                                                                       \
    if (!(cond)) {                                                           \
      fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
      ++failures;                                                            \
    }                                                                        \
  } while (0)
#define REQUIRE(cond)                                                        \
  do {                                                                       \
    if (!(cond)) {                                                           \
      fprintf(stderr, "%s:%d: REQUIRE failed: %s (errno %d)\n", __FILE__, __LINE__, #cond, \
              errno);                                                        \
      exit(1);                                                               \
    }                                                                        \
  } while (0)

enum { kLen = 10000, kGidIndex = 1 };

struct side {
  struct ibv_context* ctx;
  struct ibv_pd* pd;
  struct ibv_comp_channel* ch;
  struct ibv_cq* cq;
  struct ibv_qp* qp;
  struct ibv_mr* mr;
  char* raw;  /* malloc'd, so the buffer is not page aligned */
  char* buf;
  union ibv_gid gid;
};

/* The device of that name, opened; NULL when there is none. */
struct ibv_context* open_named(const char* name);
/* PD, channel, CQ (depth cq_depth), kLen-byte MR with every access, RC QP of send depth
 * max_send_wr; the GID at kGidIndex. */
void make_side(struct side* s, const char* name, int cq_depth, int max_send_wr);
/* RESET -> INIT -> RTR -> RTS towards peer (checks that RTR without its attributes is EINVAL). */
void connect_side(struct side* s, const struct side* peer);
