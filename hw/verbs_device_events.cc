// VerbsDevice: affiliated and unaffiliated async events, read from the context's
// non-blocking async fd (verbs_device.h contract 4).
#include <poll.h>

#include <cerrno>

#include "hw/verbs_device.h"

namespace qptwin::hw {
namespace {

bool IsQpEvent(ibv_event_type t) {
  switch (t) {
    case IBV_EVENT_QP_FATAL:
    case IBV_EVENT_QP_REQ_ERR:
    case IBV_EVENT_QP_ACCESS_ERR:
    case IBV_EVENT_COMM_EST:
    case IBV_EVENT_SQ_DRAINED:
    case IBV_EVENT_PATH_MIG:
    case IBV_EVENT_PATH_MIG_ERR:
    case IBV_EVENT_QP_LAST_WQE_REACHED:
      return true;
    default:
      return false;
  }
}

bool IsPortEvent(ibv_event_type t) {
  switch (t) {
    case IBV_EVENT_PORT_ACTIVE:
    case IBV_EVENT_PORT_ERR:
    case IBV_EVENT_LID_CHANGE:
    case IBV_EVENT_PKEY_CHANGE:
    case IBV_EVENT_SM_CHANGE:
    case IBV_EVENT_CLIENT_REREGISTER:
    case IBV_EVENT_GID_CHANGE:
      return true;
    default:
      return false;
  }
}

}  // namespace

QpHandle VerbsDevice::FindQpHandle(const ibv_qp* qp) const {
  QpHandle found;
  qps_.ForEach([&](QpHandle h, const QpEntry& e) {
    if (e.qp == qp) found = h;
  });
  return found;
}

CqHandle VerbsDevice::FindCqHandle(const ibv_cq* cq) const {
  CqHandle found;
  cqs_.ForEach([&](CqHandle h, const CqEntry& e) {
    if (e.cq == cq) found = h;
  });
  return found;
}

SrqHandle VerbsDevice::FindSrqHandle(const ibv_srq* srq) const {
  SrqHandle found;
  srqs_.ForEach([&](SrqHandle h, const SrqEntry& e) {
    if (e.srq == srq) found = h;
  });
  return found;
}

AsyncEvent VerbsDevice::ToAsyncEvent(const ibv_async_event& ev) {
  AsyncEvent out;
  out.type = static_cast<EventType>(ev.event_type);
  out.time_ns = clock_.NowNs();
  if (IsQpEvent(ev.event_type)) {
    out.qp = FindQpHandle(ev.element.qp);
  } else if (ev.event_type == IBV_EVENT_CQ_ERR) {
    out.cq = FindCqHandle(ev.element.cq);
  } else if (ev.event_type == IBV_EVENT_SRQ_ERR || ev.event_type == IBV_EVENT_SRQ_LIMIT_REACHED) {
    out.srq = FindSrqHandle(ev.element.srq);
  } else if (IsPortEvent(ev.event_type)) {
    out.port_num = static_cast<uint8_t>(ev.element.port_num);
  }
  return out;
}

void VerbsDevice::DrainAsyncEvents() {
  for (;;) {
    ibv_async_event ev{};
    if (ibv_get_async_event(context_, &ev) != 0) return;  // EAGAIN: nothing pending
    AsyncEvent event = ToAsyncEvent(ev);
    // Every event is acknowledged at once: a destroy waits for its object's events.
    ibv_ack_async_event(&ev);
    if (event.type == EventType::kQpFatal || event.type == EventType::kQpReqErr ||
        event.type == EventType::kQpAccessErr) {
      if (QpEntry* q = qps_.Find(event.qp)) {
        ObserveState(q, "device: " + std::string(ToName(event.type)));
      }
    }
    async_events_.push_back(event);
  }
}

std::vector<AsyncEvent> VerbsDevice::TakeAsyncEvents() {
  DrainAsyncEvents();
  std::vector<AsyncEvent> out(async_events_.begin(), async_events_.end());
  async_events_.clear();
  return out;
}

int VerbsDevice::WaitForAsyncEvent(EventType type, QpHandle qp, uint64_t timeout_ns) {
  const uint64_t deadline = clock_.DeadlineAfter(timeout_ns);
  for (;;) {
    DrainAsyncEvents();
    for (const AsyncEvent& e : async_events_) {
      if (e.type == type && (!qp || e.qp == qp)) return 0;
    }
    uint64_t now = clock_.NowNs();
    if (now >= deadline) return ETIMEDOUT;
    uint64_t left = deadline - now;
    timespec ts;
    ts.tv_sec = static_cast<time_t>(left / 1000000000u);
    ts.tv_nsec = static_cast<long>(left % 1000000000u);
    pollfd pfd{context_->async_fd, POLLIN, 0};
    if (ppoll(&pfd, 1, &ts, nullptr) < 0 && errno != EINTR) return LastErrno();
  }
}

}  // namespace qptwin::hw
