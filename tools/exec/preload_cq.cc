// Completion channels, CQs (ibv_create_cq and the create_cq_ex op), CQ events and async
// events of model devices. Channel and async fds are eventfds the preload signals when the
// model has an event (preload.h, Harvest).
#include <fcntl.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>

#include "tools/exec/preload.h"

using qptwin::exec::Ctx;
using qptwin::exec::Fail;
using qptwin::exec::IsModel;
using qptwin::exec::Model;
using qptwin::exec::ModelChannel;
using qptwin::exec::ModelContext;
using qptwin::exec::ModelCq;
using qptwin::exec::Preload;
using qptwin::exec::Real;
using qptwin::exec::kBridgeWaitNs;
using qptwin::exec::kIdleStepNs;
using qptwin::CqHandle;

namespace qptwin::exec {
void InstallCqExOps(ModelCq* cq, uint64_t wc_flags);

namespace {

// Takes one count off an eventfd (non-blocking; the preload keeps its own queue).
void Consume(int fd) {
  const int flags = fcntl(fd, F_GETFL);
  fcntl(fd, F_SETFL, flags | O_NONBLOCK);
  uint64_t n = 0;
  if (read(fd, &n, sizeof(n)) == sizeof(n) && n > 1) {
    n -= 1;
    if (write(fd, &n, sizeof(n)) < 0) {
    }
  }
  fcntl(fd, F_SETFL, flags);
}

bool NonBlocking(int fd) { return (fcntl(fd, F_GETFL) & O_NONBLOCK) != 0; }

ModelCq* CreateCq(ibv_context* context, int cqe, void* cq_context, ibv_comp_channel* channel,
                  uint64_t wc_flags, int* err) {
  ModelContext* m = Ctx(context);
  auto* cq = new ModelCq();
  int actual = 0;
  Preload::Get().Run([&] {
    ChannelHandle ch;
    if (channel) ch = Model<ModelChannel>(channel)->h;
    *err = m->dev->CreateCq(cqe, ch, &cq->h, &actual);
    if (!*err) m->cqs[cq->h.id] = cq;
  });
  if (*err) {
    delete cq;
    return nullptr;
  }
  cq->mctx = m;
  ibv_cq_ex& c = cq->cq;
  c.context = context;
  c.channel = channel;
  c.cq_context = cq_context;
  c.handle = cq->h.id;
  c.cqe = actual;
  pthread_mutex_init(&c.mutex, nullptr);
  pthread_cond_init(&c.cond, nullptr);
  InstallCqExOps(cq, wc_flags);
  return cq;
}

}  // namespace

ibv_cq_ex* CreateCqExOp(ibv_context* context, ibv_cq_init_attr_ex* attr) {
  // rdma-core providers/rxe rxe_create_cq_ex: only the standard fields, else EOPNOTSUPP.
  constexpr uint64_t kSupported = IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_IMM |
                                  IBV_WC_EX_WITH_QP_NUM | IBV_WC_EX_WITH_SRC_QP |
                                  IBV_WC_EX_WITH_SLID | IBV_WC_EX_WITH_SL |
                                  IBV_WC_EX_WITH_DLID_PATH_BITS;
  if (attr->comp_mask & ~uint32_t(IBV_CQ_INIT_ATTR_MASK_FLAGS)) return Fail<ibv_cq_ex>(EOPNOTSUPP);
  if (attr->wc_flags & ~kSupported) return Fail<ibv_cq_ex>(EOPNOTSUPP);
  if (attr->comp_vector >= static_cast<uint32_t>(context->num_comp_vectors)) {
    return Fail<ibv_cq_ex>(EINVAL);
  }
  int err = 0;
  ModelCq* cq = CreateCq(context, static_cast<int>(attr->cqe), attr->cq_context, attr->channel,
                         attr->wc_flags, &err);
  return cq ? &cq->cq : Fail<ibv_cq_ex>(err);
}

}  // namespace qptwin::exec

extern "C" {

ibv_comp_channel* ibv_create_comp_channel(ibv_context* context) {
  static auto real = Real(&ibv_create_comp_channel, "ibv_create_comp_channel", "IBVERBS_1.0");
  if (!IsModel(context)) return real(context);
  ModelContext* m = Ctx(context);
  auto* ch = new ModelChannel();
  int err = 0;
  Preload::Get().Run([&] {
    err = m->dev->CreateCompChannel(&ch->h);
    if (!err) m->channels.push_back(ch);
  });
  if (err) {
    delete ch;
    return Fail<ibv_comp_channel>(err);
  }
  ch->mctx = m;
  ch->ch.context = context;
  ch->ch.fd = eventfd(0, EFD_CLOEXEC);
  qptwin::exec::RegisterModelFd(ch->ch.fd);
  return &ch->ch;
}

int ibv_destroy_comp_channel(ibv_comp_channel* channel) {
  static auto real = Real(&ibv_destroy_comp_channel, "ibv_destroy_comp_channel", "IBVERBS_1.0");
  if (!IsModel(channel->context)) return real(channel);
  auto* ch = Model<ModelChannel>(channel);
  int err = 0;
  Preload::Get().Run([&] {
    err = ch->mctx->dev->DestroyCompChannel(ch->h);
    if (err) return;
    auto& v = ch->mctx->channels;
    v.erase(std::remove(v.begin(), v.end(), ch), v.end());
  });
  if (err) return err;
  qptwin::exec::UnregisterModelFd(channel->fd);
  close(channel->fd);
  delete ch;
  return 0;
}

ibv_cq* ibv_create_cq(ibv_context* context, int cqe, void* cq_context, ibv_comp_channel* channel,
                      int comp_vector) {
  static auto real = Real(&ibv_create_cq, "ibv_create_cq");
  if (!IsModel(context)) return real(context, cqe, cq_context, channel, comp_vector);
  if (comp_vector < 0 || comp_vector >= context->num_comp_vectors) return Fail<ibv_cq>(EINVAL);
  int err = 0;
  ModelCq* cq = qptwin::exec::CreateCq(context, cqe, cq_context, channel, 0, &err);
  return cq ? ibv_cq_ex_to_cq(&cq->cq) : Fail<ibv_cq>(err);
}

int ibv_destroy_cq(ibv_cq* cq) {
  static auto real = Real(&ibv_destroy_cq, "ibv_destroy_cq");
  if (!IsModel(cq->context)) return real(cq);
  auto* c = Model<ModelCq>(cq);
  int err = 0;
  Preload::Get().Run([&] {
    err = c->mctx->dev->DestroyCq(c->h);
    if (err) return;
    c->mctx->cqs.erase(c->h.id);
    for (ModelChannel* ch : c->mctx->channels) {
      auto& ev = ch->events;
      ev.erase(std::remove(ev.begin(), ev.end(), cq), ev.end());
      if (c->armed && cq->channel == &ch->ch) --ch->armed;
    }
  });
  if (!err) delete c;
  return err;
}

int ibv_get_cq_event(ibv_comp_channel* channel, ibv_cq** cq, void** cq_context) {
  static auto real = Real(&ibv_get_cq_event, "ibv_get_cq_event");
  if (!IsModel(channel->context)) return real(channel, cq, cq_context);
  auto* ch = Model<ModelChannel>(channel);
  const bool nonblocking = qptwin::exec::NonBlocking(channel->fd);
  ibv_cq* got = nullptr;
  Preload& p = Preload::Get();
  for (;;) {
    p.Run([&] {
      p.Harvest(ch->mctx);
      if (ch->events.empty() && !nonblocking && ch->armed > 0) {
        // Both ends live in this process: let simulated time run until the event.
        CqHandle h;
        if (ch->mctx->dev->GetCqEvent(ch->h, p.TimeStep(kIdleStepNs), &h) == 0) {
          auto it = ch->mctx->cqs.find(h.id);
          if (it != ch->mctx->cqs.end()) {
            it->second->armed = false;
            --ch->armed;
            ch->events.push_back(ibv_cq_ex_to_cq(&it->second->cq));
            const uint64_t one = 1;
            if (write(channel->fd, &one, sizeof(one)) < 0) {
            }
          }
        }
      }
      if (!ch->events.empty()) {
        got = ch->events.front();
        ch->events.pop_front();
        Model<ModelCq>(got)->events_unacked++;
      }
    });
    if (got) break;
    if (nonblocking) {
      errno = EAGAIN;
      return -1;
    }
    p.WaitWall(kBridgeWaitNs);  // the bridge: the peer answers in wall time
    if (ch->armed == 0) {  // nothing can arrive: wait for another thread to arm a CQ
      pollfd pfd{channel->fd, POLLIN, 0};
      poll(&pfd, 1, 1);
    }
  }
  qptwin::exec::Consume(channel->fd);
  *cq = got;
  *cq_context = got->cq_context;
  return 0;
}

void ibv_ack_cq_events(ibv_cq* cq, unsigned int nevents) {
  static auto real = Real(&ibv_ack_cq_events, "ibv_ack_cq_events");
  if (!IsModel(cq->context)) return real(cq, nevents);
  auto* c = Model<ModelCq>(cq);
  Preload::Get().Run([&] {
    c->mctx->dev->AckCqEvents(c->h, nevents);
    c->events_unacked -= std::min(c->events_unacked, nevents);
  });
}

int ibv_get_async_event(ibv_context* context, ibv_async_event* event) {
  static auto real = Real(&ibv_get_async_event, "ibv_get_async_event");
  if (!IsModel(context)) return real(context, event);
  ModelContext* m = Ctx(context);
  const bool nonblocking = qptwin::exec::NonBlocking(context->async_fd);
  Preload& p = Preload::Get();
  for (;;) {
    bool got = false;
    p.Run([&] {
      p.Harvest(m);
      if (!m->async_events.empty()) {
        *event = m->async_events.front();
        m->async_events.pop_front();
        got = true;
      }
    });
    if (got) break;
    if (nonblocking) {
      errno = EAGAIN;
      return -1;
    }
    // Async events come from what the program's other calls make happen: wait for them
    // (the model thread signals the fd) rather than run simulated time from here.
    pollfd pfd{context->async_fd, POLLIN, 0};
    poll(&pfd, 1, 10);
  }
  qptwin::exec::Consume(context->async_fd);
  return 0;
}

void ibv_ack_async_event(ibv_async_event* event) {
  static auto real = Real(&ibv_ack_async_event, "ibv_ack_async_event");
  // Model events need no acknowledgement bookkeeping: destroy does not wait for them.
  ibv_context* ctx = nullptr;
  switch (event->event_type) {
    case IBV_EVENT_CQ_ERR:
      ctx = event->element.cq->context;
      break;
    case IBV_EVENT_SRQ_ERR:
    case IBV_EVENT_SRQ_LIMIT_REACHED:
      ctx = event->element.srq->context;
      break;
    case IBV_EVENT_DEVICE_FATAL:
    case IBV_EVENT_PORT_ACTIVE:
    case IBV_EVENT_PORT_ERR:
    case IBV_EVENT_LID_CHANGE:
    case IBV_EVENT_PKEY_CHANGE:
    case IBV_EVENT_SM_CHANGE:
    case IBV_EVENT_CLIENT_REREGISTER:
    case IBV_EVENT_GID_CHANGE:
      return real(event);  // no element: real events only (the model raises none)
    case IBV_EVENT_WQ_FATAL:
      return real(event);
    default:
      ctx = event->element.qp->context;
      break;
  }
  if (!IsModel(ctx)) real(event);
}

}  // extern "C"
