// VerbsDevice: the data path (post, poll, completion events).
#include <poll.h>
#include <sched.h>

#include <algorithm>
#include <cerrno>

#include "hw/convert.h"
#include "hw/verbs_device.h"

namespace qptwin::hw {
namespace {

constexpr int kPollBatch = 16;    // WaitForCompletions' batch
constexpr int kPollScratch = 64;  // ibv_wc entries per ibv_poll_cq call

timespec ToTimespec(uint64_t ns) {
  timespec ts;
  ts.tv_sec = static_cast<time_t>(ns / 1000000000u);
  ts.tv_nsec = static_cast<long>(ns % 1000000000u);
  return ts;
}

}  // namespace

int VerbsDevice::PostSend(QpHandle h, const std::vector<SendWr>& wrs, size_t* bad_wr) {
  size_t ignored = 0;
  if (bad_wr == nullptr) bad_wr = &ignored;  // spec/backend.h: bad_wr may be null
  QpEntry* q = qps_.Find(h);
  if (q == nullptr) return EINVAL;
  // UD: resolve every AH first. An unknown AH never reaches the provider: the WRs before it
  // are posted, it fails with EINVAL (as a provider's own per-WR check would).
  size_t usable = wrs.size();
  // Per-thread scratch reused across calls: the fast path (perftest-like loops, measured in
  // the rxe VM under emulation, where every allocation shows) allocates nothing.
  thread_local std::vector<ibv_ah*> ahs;
  ahs.clear();
  if (q->init.qp_type == QpType::kUd) {
    for (size_t i = 0; i < wrs.size(); ++i) {
      AhEntry* a = ahs_.Find(wrs[i].ah);
      if (a == nullptr) {
        usable = i;
        break;
      }
      ahs.push_back(a->ah);
    }
  }
  // BIND_MW: the window and region resolved the same way (verbs_device_mw.cc).
  thread_local std::vector<BindTarget> binds;
  (void)ResolveBinds(wrs, &binds, &usable);
  thread_local SendChain chain;
  BuildSendChain(wrs, q->init.qp_type, ahs, &chain, binds);
  if (usable < wrs.size()) {
    if (usable == 0) {
      *bad_wr = 0;
      return EINVAL;
    }
    chain.wrs[usable - 1].next = nullptr;
  }
  ibv_send_wr* bad = nullptr;
  int ret = ibv_post_send(q->qp, chain.head(), &bad);
  if (ret != 0) {
    // A NULL bad_wr with an error: every WR given was written to the send ring and the
    // doorbell failed after it (rdma-core providers/rxe rxe_post_send: post_send_db refuses
    // a QP below RTS). Those WRs were posted: they run or are flushed later (spec/backend.h).
    *bad_wr = bad == nullptr ? usable : chain.IndexOf(bad);
    NoteBindsPosted(wrs, *bad_wr);
    return ret;
  }
  NoteBindsPosted(wrs, usable);
  if (usable < wrs.size()) {
    *bad_wr = usable;
    return EINVAL;
  }
  return 0;
}

int VerbsDevice::PostRecv(QpHandle h, const std::vector<RecvWr>& wrs, size_t* bad_wr) {
  size_t ignored = 0;
  if (bad_wr == nullptr) bad_wr = &ignored;  // spec/backend.h: bad_wr may be null
  QpEntry* q = qps_.Find(h);
  if (q == nullptr) return EINVAL;
  thread_local RecvChain chain;
  BuildRecvChain(wrs, &chain);
  ibv_recv_wr* bad = nullptr;
  int ret = ibv_post_recv(q->qp, chain.head(), &bad);
  // A NULL bad_wr here means nothing was written (rxe_post_recv checks RESET first): 0.
  if (ret != 0) *bad_wr = chain.IndexOf(bad);
  return ret;
}

int VerbsDevice::PostSrqRecv(SrqHandle h, const std::vector<RecvWr>& wrs, size_t* bad_wr) {
  size_t ignored = 0;
  if (bad_wr == nullptr) bad_wr = &ignored;  // spec/backend.h: bad_wr may be null
  SrqEntry* s = srqs_.Find(h);
  if (s == nullptr) return EINVAL;
  thread_local RecvChain chain;
  BuildRecvChain(wrs, &chain);
  ibv_recv_wr* bad = nullptr;
  int ret = ibv_post_srq_recv(s->srq, chain.head(), &bad);
  if (ret != 0) *bad_wr = chain.IndexOf(bad);
  return ret;
}

int VerbsDevice::PollCq(CqHandle h, int num_entries, WorkCompletion* wc) {
  CqEntry* c = cqs_.Find(h);
  if (c == nullptr || num_entries < 0 || (num_entries > 0 && wc == nullptr)) return -EINVAL;
  // Polled in chunks through a bounded array on the stack: a huge num_entries allocates
  // nothing, and threads polling different CQs of this device share no buffer.
  ibv_wc scratch[kPollScratch];
  int total = 0;
  while (total < num_entries) {
    int chunk = std::min(num_entries - total, kPollScratch);
    int n = ibv_poll_cq(c->cq, chunk, scratch);
    if (n < 0) return total > 0 ? total : n;
    for (int i = 0; i < n; ++i) {
      WorkCompletion& out = wc[total + i];
      out = FromIbvWc(scratch[i]);
      if (out.status != WcStatus::kSuccess) ObserveAfterErrorCompletion(out.qp_num, out.status);
    }
    total += n;
    if (n < chunk) break;
  }
  return total;
}

int VerbsDevice::ReqNotifyCq(CqHandle h, bool solicited_only) {
  CqEntry* c = cqs_.Find(h);
  if (c == nullptr) return EINVAL;
  return ibv_req_notify_cq(c->cq, solicited_only ? 1 : 0);
}

int VerbsDevice::GetCqEvent(ChannelHandle h, uint64_t timeout_ns, CqHandle* out) {
  ChannelEntry* ch = channels_.Find(h);
  if (ch == nullptr || out == nullptr) return EINVAL;
  const uint64_t deadline = clock_.DeadlineAfter(timeout_ns);
  for (;;) {
    ibv_cq* cq = nullptr;
    void* cq_context = nullptr;
    errno = 0;
    if (ibv_get_cq_event(ch->channel, &cq, &cq_context) == 0) {
      CqHandle found = FindCqHandle(cq);
      CqEntry* c = cqs_.Find(found);
      if (c == nullptr) {
        ibv_ack_cq_events(cq, 1);  // cannot happen: every CQ of this context is in the table
        continue;
      }
      ++c->unacked_events;
      *out = found;
      return 0;
    }
    if (errno != EAGAIN && errno != EWOULDBLOCK) return LastErrno();
    uint64_t now = clock_.NowNs();
    if (now >= deadline) return ETIMEDOUT;
    pollfd pfd{ch->channel->fd, POLLIN, 0};
    timespec ts = ToTimespec(deadline - now);
    if (ppoll(&pfd, 1, &ts, nullptr) < 0 && errno != EINTR) return LastErrno();
  }
}

void VerbsDevice::AckCqEvents(CqHandle h, unsigned n) {
  CqEntry* c = cqs_.Find(h);
  if (c == nullptr) return;
  // Acknowledging more than was received would make ibv_destroy_cq wait forever.
  unsigned count = std::min(n, c->unacked_events);
  if (count == 0) return;
  ibv_ack_cq_events(c->cq, count);
  c->unacked_events -= count;
}

int VerbsDevice::WaitForCompletions(CqHandle h, int n, uint64_t timeout_ns,
                                    std::vector<WorkCompletion>* out) {
  if (cqs_.Find(h) == nullptr || out == nullptr) return EINVAL;
  const uint64_t deadline = clock_.DeadlineAfter(timeout_ns);
  WorkCompletion batch[kPollBatch];
  int got = 0;
  while (got < n) {
    int polled = PollCq(h, std::min(n - got, kPollBatch), batch);
    if (polled < 0) return -polled;
    out->insert(out->end(), batch, batch + polled);
    got += polled;
    if (got >= n) break;
    if (polled == 0) {
      if (clock_.NowNs() >= deadline) return ETIMEDOUT;
      sched_yield();  // busy poll, but let the kernel's rxe tasks run on a small machine
    }
  }
  return 0;
}

}  // namespace qptwin::hw
