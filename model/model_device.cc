#include "model/model_device.h"

#include "model/model_backend.h"

#include <cerrno>
#include <algorithm>

namespace qptwin::model {

ModelDevice::ModelDevice(std::shared_ptr<engine::World> world, int nic_index)
    : world_(std::move(world)), nic_(world_->nic(nic_index)), ctx_(nic_->NewContext()) {}

ModelDevice::~ModelDevice() { nic_->ReleaseContext(ctx_); }

std::string ModelDevice::Name() const { return nic_->name(); }

int ModelDevice::QueryDevice(DeviceAttr* out) {
  if (!out) return EINVAL;
  *out = nic_->device_attr();
  return 0;
}

int ModelDevice::QueryPort(uint8_t port_num, PortAttr* out) {
  if (!out || port_num != 1) return EINVAL;
  *out = nic_->port_attr();
  return 0;
}

int ModelDevice::QueryGid(uint8_t port_num, int index, Gid* out) {
  if (!out || port_num != 1) return EINVAL;
  return nic_->GidAt(index, out) ? 0 : EINVAL;
}

int ModelDevice::DefaultGidIndex(uint8_t port_num, int* index) {
  if (!index || port_num != 1) return EINVAL;
  *index = nic_->default_gid_index();
  return 0;
}

int ModelDevice::AllocPd(PdHandle* out) {
  if (!out) return EINVAL;
  return Host()->AllocPd(ctx_, &out->id);
}

int ModelDevice::DeallocPd(PdHandle pd) { return Host()->DeallocPd(ctx_, pd.id); }

int ModelDevice::RegMr(PdHandle pd, size_t length, AccessFlags access, MrHandle* out,
                       uint8_t** buf, uint32_t* lkey, uint32_t* rkey) {
  if (!out) return EINVAL;
  engine::Mr* mr = nullptr;
  int err = Host()->RegMr(ctx_, pd.id, length, access, &mr);
  if (err) return err;
  out->id = mr->handle;
  if (buf) *buf = mr->buf;
  if (lkey) *lkey = mr->lkey;
  if (rkey) *rkey = mr->rkey;
  return 0;
}

int ModelDevice::RegMrAt(PdHandle pd, uint64_t addr, size_t length, AccessFlags access,
                         MrHandle* out, uint32_t* lkey, uint32_t* rkey) {
  if (!out) return EINVAL;
  engine::Mr* mr = nullptr;
  if (int err = Host()->RegMrAt(ctx_, pd.id, addr, length, access, &mr)) return err;
  out->id = mr->handle;
  if (lkey) *lkey = mr->lkey;
  if (rkey) *rkey = mr->rkey;
  return 0;
}

int ModelDevice::SetQueueMemory(uint64_t addr, uint64_t length) {
  if (length != 0 && addr + (length - 1) < addr) return EINVAL;  // wraps the address space
  return Host()->SetQueueMemory(addr, length);
}

bool ModelDevice::HasQueueMemory() { return Host()->has_queue_memory(); }

int ModelDevice::SendRingOf(QpHandle qp, SendRing* out) {
  const engine::Qp* q = Host()->QpOf(ctx_, qp.id);
  if (q == nullptr) return ENOENT;
  if (!q->sq_block) return EINVAL;
  out->addr = q->sq_block.addr();
  out->slots = static_cast<uint32_t>(q->send_ring_slots());
  out->stride = static_cast<uint32_t>(q->sq_stride);
  out->producer = static_cast<uint32_t>(q->sq_posts);
  out->qpn = q->qpn;
  return 0;
}

int ModelDevice::RecvRingOf(QpHandle qp, RecvRing* out) {
  const engine::Qp* q = Host()->QpOf(ctx_, qp.id);
  if (q == nullptr) return ENOENT;
  if (q->srq != nullptr || !q->rq.placed()) return EINVAL;
  out->addr = q->rq.ring_addr();
  out->record = q->rq.record_addr();
  out->slots = static_cast<uint32_t>(q->rq.slots());
  out->stride = static_cast<uint32_t>(q->rq.stride());
  out->producer = q->rq.producer();
  return 0;
}

int ModelDevice::SrqRingOf(SrqHandle srq, RecvRing* out) {
  const engine::Srq* s = Host()->SrqOf(ctx_, srq.id);
  if (s == nullptr) return ENOENT;
  if (!s->rq.placed()) return EINVAL;
  out->addr = s->rq.ring_addr();
  out->record = s->rq.record_addr();
  out->slots = static_cast<uint32_t>(s->rq.slots());
  out->stride = static_cast<uint32_t>(s->rq.stride());
  out->producer = s->rq.producer();
  return 0;
}

int ModelDevice::CqRingOf(CqHandle cq, CqRing* out) {
  const engine::Cq* c = Host()->FindCq(ctx_, cq.id);
  if (c == nullptr) return ENOENT;
  if (!c->placed()) return EINVAL;
  out->addr = c->ring_addr();
  out->record = c->record_addr();
  out->slots = static_cast<uint32_t>(c->slots());
  out->cqn = cq.id;  // the NIC's key of the CQ (engine Nic::OnCqArm)
  return 0;
}

int ModelDevice::SetCqEvent(CqHandle cq, uint64_t addr, uint32_t data) {
  if (Host()->FindCq(ctx_, cq.id) == nullptr) return ENOENT;
  return Host()->SetCqEvent(ctx_, cq.id, addr, data);
}

int ModelDevice::DeregMr(MrHandle mr) { return Host()->DeregMr(ctx_, mr.id); }

int ModelDevice::ReregMr(MrHandle mr, int flags, PdHandle pd, size_t length, AccessFlags access,
                         uint8_t** buf, uint32_t* lkey, uint32_t* rkey) {
  engine::Mr* m = nullptr;
  if (int err = Host()->ReregMr(ctx_, mr.id, flags, pd.id, length, access, &m)) return err;
  if (buf) *buf = m->at_bus_address ? nullptr : m->buf;  // ModelRegMrAt's: no buffer here
  if (lkey) *lkey = m->lkey;
  if (rkey) *rkey = m->rkey;
  return 0;
}

int ModelDevice::AllocMw(PdHandle pd, MwType type, MwHandle* out, uint32_t* rkey) {
  if (!out) return EINVAL;
  return Host()->AllocMw(ctx_, pd.id, type, &out->id, rkey);
}

int ModelDevice::DeallocMw(MwHandle mw) { return Host()->DeallocMw(ctx_, mw.id); }

int ModelDevice::BindMw(QpHandle qp, MwHandle mw, const MwBind& bind, uint32_t* rkey) {
  return Host()->BindMw(ctx_, qp.id, mw.id, bind, rkey);
}

int ModelDevice::CreateCompChannel(ChannelHandle* out) {
  if (!out) return EINVAL;
  return Host()->CreateChannel(ctx_, &out->id);
}

int ModelDevice::DestroyCompChannel(ChannelHandle ch) { return Host()->DestroyChannel(ctx_, ch.id); }

int ModelDevice::CreateCq(int cqe, ChannelHandle channel, CqHandle* out, int* actual_cqe) {
  if (!out) return EINVAL;
  return Host()->CreateCq(ctx_, cqe, channel.id, &out->id, actual_cqe);
}

int ModelDevice::DestroyCq(CqHandle cq) { return Host()->DestroyCq(ctx_, cq.id); }

int ModelDevice::ResizeCq(CqHandle cq, int cqe, int* actual_cqe) {
  return Host()->ResizeCq(ctx_, cq.id, cqe, actual_cqe);
}

int ModelDevice::PollCq(CqHandle cq, int num_entries, WorkCompletion* wc) {
  return Host()->PollCq(ctx_, cq.id, num_entries, wc);
}

int ModelDevice::ReqNotifyCq(CqHandle cq, bool solicited_only) {
  return Host()->ReqNotifyCq(ctx_, cq.id, solicited_only);
}

uint64_t ModelDevice::Deadline(uint64_t timeout_ns) const {
  // A wait longer than kMaxWaitNs (about 13 simulated days) is cut there: the SystemC
  // clock of the process is shared by every scenario and must not run out.
  return world_->events().Now() + std::min(timeout_ns, kMaxWaitNs);
}

void ModelDevice::SettleHeldWork() {
  // Flushes held to the end of a tick's timers (engine::World::HoldTickFlush): the tick's
  // timers and the tasklets they start run in softirq context, so the program runs again
  // only after the last of them (World::StallHost), when the held flushes have run.
  world_->WaitOutHostStall();
  if (world_->has_held_work()) world_->RunHeldWork();
}

void ModelDevice::CatchUpHost() {
  uint64_t until = std::min(nic_->host_free_ns(), world_->events().Now() + kMaxWaitNs);
  if (until > world_->events().Now()) world_->events().RunUntil([] { return false; }, until);
}

int ModelDevice::UseHostThread(int thread, uint64_t* free_ns) {
  if (!nic_->SelectHostThread(thread)) return EINVAL;
  if (free_ns) *free_ns = std::max(nic_->host_free_ns(), world_->events().Now());
  return 0;
}

int ModelDevice::GetCqEvent(ChannelHandle ch, uint64_t timeout_ns, CqHandle* cq) {
  if (!cq || !nic_->FindChannel(ctx_, ch.id)) return EINVAL;
  CatchUpHost();
  auto ready = [&] {
    engine::Channel* c = nic_->FindChannel(ctx_, ch.id);
    return c && !c->events.empty();
  };
  const uint64_t asleep = world_->events().Now();
  const bool got = world_->events().RunUntil(ready, Deadline(timeout_ns));
  if (world_->events().Now() > asleep) world_->HostWakes();  // it waited
  world_->WaitOutHostStall();  // World::StallHost: the thread runs again only then
  if (!got) return ETIMEDOUT;
  engine::Channel* c = nic_->FindChannel(ctx_, ch.id);
  cq->id = c->events.front();
  c->events.pop_front();
  if (engine::Cq* q = nic_->FindCq(ctx_, cq->id)) ++q->events_unacked;
  // The interrupt follows the CQE's write; the thread then wakes up (timing.h).
  const Timing& t = nic_->profile().timing;
  nic_->ChargeHost(t.nic.cqe_ns + t.host.event_wakeup_ns);
  CatchUpHost();
  world_->WaitOutHostStall();  // a stall (a tick's held flushes) that began meanwhile
  return 0;
}

void ModelDevice::AckCqEvents(CqHandle cq, unsigned n) { (void)Host()->AckCqEvents(ctx_, cq.id, n); }

int ModelDevice::WaitForCompletions(CqHandle cq, int n, uint64_t timeout_ns,
                                    std::vector<WorkCompletion>* out) {
  if (!out || n < 0 || !Host()->FindCq(ctx_, cq.id)) return EINVAL;
  CatchUpHost();
  int got = 0;
  auto done = [&] {
    WorkCompletion wc[16];
    while (got < n) {
      int k = nic_->PollCq(ctx_, cq.id, std::min(16, n - got), wc);
      if (k <= 0) break;
      out->insert(out->end(), wc, wc + k);
      got += k;
    }
    return got >= n;
  };
  const uint64_t holds = world_->tick_holds();
  const uint64_t asleep = world_->events().Now();
  bool ok = world_->events().RunUntil(done, Deadline(timeout_ns));
  if (world_->events().Now() > asleep) world_->HostWakes();  // it waited
  world_->WaitOutHostStall();  // World::StallHost: the thread runs again only then
  // A tick's held flushes (engine::World::HoldTickFlush) that ran after the deadline: rxe's
  // run microseconds after the error, before it, so the poll sees their CQEs.
  if (!ok && world_->tick_holds() != holds) ok = done();
  CatchUpHost();  // consuming the CQEs took the thread's time
  world_->WaitOutHostStall();  // a stall (a tick's held flushes) that began meanwhile
  return ok ? 0 : ETIMEDOUT;
}

int ModelDevice::CreateSrq(PdHandle pd, uint32_t max_wr, uint32_t max_sge, SrqHandle* out) {
  if (!out) return EINVAL;
  return Host()->CreateSrq(ctx_, pd.id, max_wr, max_sge, &out->id);
}

int ModelDevice::DestroySrq(SrqHandle srq) { return Host()->DestroySrq(ctx_, srq.id); }

int ModelDevice::PostSrqRecv(SrqHandle srq, const std::vector<RecvWr>& wrs, size_t* bad_wr) {
  return Host()->PostSrqRecv(ctx_, srq.id, wrs, bad_wr);
}

int ModelDevice::ModifySrq(SrqHandle srq, const SrqAttr& attr, uint32_t mask) {
  return Host()->ModifySrq(ctx_, srq.id, attr, mask);
}

int ModelDevice::QuerySrq(SrqHandle srq, SrqAttr* out) {
  return Host()->QuerySrq(ctx_, srq.id, out);
}

int ModelDevice::CreateSrqEx(const SrqInitAttr& init, SrqHandle* out) {
  if (!out) return EINVAL;
  return Host()->CreateSrqEx(ctx_, init, &out->id);
}

int ModelDevice::SrqNum(SrqHandle srq, uint32_t* srq_num) {
  if (!srq_num) return EINVAL;
  return Host()->SrqNum(ctx_, srq.id, srq_num);
}

int ModelDevice::OpenXrcd(XrcdHandle* out) {
  if (!out) return EINVAL;
  return Host()->OpenXrcd(ctx_, &out->id);
}

int ModelDevice::CloseXrcd(XrcdHandle xrcd) { return Host()->CloseXrcd(ctx_, xrcd.id); }

int ModelDevice::CreateAh(PdHandle pd, const AhAttr& attr, AhHandle* out) {
  if (!out) return EINVAL;
  return Host()->CreateAh(ctx_, pd.id, attr, &out->id);
}

int ModelDevice::DestroyAh(AhHandle ah) { return Host()->DestroyAh(ctx_, ah.id); }

int ModelDevice::CreateQp(const QpInitAttr& init, QpHandle* out, QpCap* actual) {
  if (!out) return EINVAL;
  return Host()->CreateQp(ctx_, init, &out->id, actual);
}

int ModelDevice::DestroyQp(QpHandle qp) {
  const uint64_t stall_before = world_->host_stall_end_ns();
  const int err = Host()->DestroyQp(ctx_, qp.id);
  // The call may wait (ControlTiming::destroy_qp_bound_mw_wait_ns: World::StallHost); the
  // device runs on meanwhile. Only a wait this destroy started (not another stall).
  if (err == 0 && world_->host_stall_end_ns() != stall_before &&
      world_->host_stall_end_ns() > world_->events().Now()) {
    CatchUpHost();
    world_->WaitOutHostStall();
  }
  return err;
}

int ModelDevice::QpNum(QpHandle qp, uint32_t* qp_num) {
  if (!qp_num) return EINVAL;
  return Host()->QpNum(ctx_, qp.id, qp_num);
}

int ModelDevice::ModifyQp(QpHandle qp, const QpAttr& attr, AttrMask mask) {
  return Host()->ModifyQp(ctx_, qp.id, attr, mask);
}

int ModelDevice::QueryQp(QpHandle qp, QpAttr* attr, QpInitAttr* init) {
  return Host()->QueryQp(ctx_, qp.id, attr, init);
}

int ModelDevice::PostSend(QpHandle qp, const std::vector<SendWr>& wrs, size_t* bad_wr) {
  const int err = Host()->PostSend(ctx_, qp.id, wrs, bad_wr);
  // Behaviour::post_send_runs_to_completion (rxe): the call returns once the exchanges it
  // started have run (rxe_post_send runs the requester in the caller; over loopback
  // rxe_rcv runs the responder and completer inline). Timers are jiffies on rxe (>= 1 ms),
  // so the wait is cut at kPostRunNs. A refused post rings the doorbell too (providers/rxe
  // post_send_db after its loop; Behaviour::rts_waits_for_doorbell): what it queued before
  // the refused WR runs as well (measured: differential sequence 1457).
  if (nic_->profile().behaviour.post_send_runs_to_completion) {
    CatchUpHost();
    world_->events().RunUntil([this] { return world_->ExchangesSettled(); },
                              Deadline(engine::Nic::kPostRunNs));
    world_->WaitOutHostStall();
  }
  return err;
}

int ModelDevice::PostRecv(QpHandle qp, const std::vector<RecvWr>& wrs, size_t* bad_wr) {
  return Host()->PostRecv(ctx_, qp.id, wrs, bad_wr);
}

std::vector<AsyncEvent> ModelDevice::TakeAsyncEvents() { return nic_->TakeEvents(ctx_); }

int ModelDevice::WaitForAsyncEvent(EventType type, QpHandle qp, uint64_t timeout_ns) {
  uint32_t dummy = 0;
  if (qp && Host()->QpNum(ctx_, qp.id, &dummy) != 0) return EINVAL;
  CatchUpHost();
  auto seen = [&] { return nic_->HasEvent(ctx_, type, qp.id); };
  const uint64_t asleep = world_->events().Now();
  const bool ok = world_->events().RunUntil(seen, Deadline(timeout_ns));
  if (world_->events().Now() > asleep) world_->HostWakes();  // it waited
  world_->WaitOutHostStall();  // World::StallHost: the thread runs again only then
  return ok ? 0 : ETIMEDOUT;
}

int ModelDevice::QpHistory(QpHandle qp, std::vector<StateChange>* out) {
  return QpHistorySince(qp, 0, out);
}

int ModelDevice::QpHistorySince(QpHandle qp, size_t first, std::vector<StateChange>* out) {
  if (!out) return EINVAL;
  return nic_->History(ctx_, qp.id, first, out);
}

int ModelDevice::LocalConnectionInfo(QpHandle qp, ConnectionInfo* out) {
  if (!out) return EINVAL;
  ConnectionInfo info;
  int err = Host()->QpNum(ctx_, qp.id, &info.qp_num);
  if (err) return err;
  PortAttr port = nic_->port_attr();
  info.lid = port.lid;
  info.port_num = 1;
  info.link_layer = port.link_layer;
  nic_->GidAt(nic_->default_gid_index(), &info.gid);
  *out = info;
  return 0;
}

}  // namespace qptwin::model
