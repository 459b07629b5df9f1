#include "spec/scenario/runner.h"

#include <cerrno>

#include "spec/attr_checks.h"
#include "spec/qp_state_table.h"
#include "spec/scenario/narrate.h"

namespace qptwin::scenario {
namespace {

std::string ResultName(int ret) { return ret == 0 ? "ok" : std::string(ErrnoName(ret)); }

std::string CapsText(const QpCap& cap) {
  return "granted max_send_wr=" + std::to_string(cap.max_send_wr) +
         " max_recv_wr=" + std::to_string(cap.max_recv_wr) +
         " max_send_sge=" + std::to_string(cap.max_send_sge) +
         " max_recv_sge=" + std::to_string(cap.max_recv_sge) +
         " max_inline=" + std::to_string(cap.max_inline_data);
}

template <typename T, typename F>
std::string JoinNames(const std::vector<T>& v, F name) {
  if (v.empty()) return "none";
  std::string out;
  for (const T& x : v) out += (out.empty() ? "" : ",") + std::string(name(x));
  return out;
}

}  // namespace

int RunResult::FailureCount() const {
  int n = 0;
  for (const Step& s : steps) n += static_cast<int>(s.failures.size());
  return n;
}

Runner::Runner(Backend* backend) : backend_(backend) {}

Runner::~Runner() {
  // Devices release what is still alive (backend.h contract 4).
  devices_.clear();
}

RunResult Runner::Run(const Scenario& scenario, RunOptions options) {
  RunResult result;
  result.steps.reserve(scenario.commands.size());
  Start(options);
  for (const Command& c : scenario.commands) NextInto(c, &result.steps.emplace_back());
  result.trace = Finish();
  return result;
}

void Runner::Start(RunOptions options) {
  options_ = options;
  run_trace_ = RunTrace{};
  // A scenario posts a few dozen WRs at most, mostly: room for them at once, instead of a
  // vector of WRs (7 strings each) moved at every doubling.
  run_trace_.wqes.reserve(32);
  free_wqes_.clear();
  before_.clear();
  for (QpEntry* e : busy_) e->second->busy = false;
  busy_.clear();
  ledger_ = WrLedger(&run_trace_.wqes);
  if (!options_.keep_trace) ledger_.ReleaseTo(&free_wqes_);
  start_ns_ = backend_->NowNs();
}

Step Runner::Next(const Command& c) {
  Step step;
  NextInto(c, &step);
  return step;
}

void Runner::Next(const Command& c, Step* step) {
  step->line = 0;
  step->text.clear();
  step->start_ns = step->end_ns = 0;
  step->outcomes.clear();
  step->note.clear();
  step->failures.clear();
  step->why.clear();
  step->qps.clear();
  NextInto(c, step);
}

void Runner::NextInto(const Command& c, Step* out) {
  Step& step = *out;
  step.line = c.line;
  if (options_.narrate) step.text = c.text;
  step.start_ns = backend_->NowNs() - start_ns_;
  if (!options_.keep_trace && options_.narrate) {
    // Streaming views leave out quiet QPs: the command's QP is put back before the step.
    auto it = qps_.find(c.name);
    if (it != qps_.end() && it->second->handle && !it->second->destroyed) {
      auto at = std::lower_bound(before_.begin(), before_.end(), c.name,
                                 [](const QpView& v, const std::string& n) { return v.name < n; });
      if (at == before_.end() || at->name != c.name) before_.insert(at, ViewOf(c.name, *it->second));
    }
  }
  if (options_.host_ns > 0 && c.verb != Verb::kAdvance) backend_->Advance(options_.host_ns);
  int ret = Execute(c, &step);
  if (step.outcomes.empty()) {
    Outcome& o = step.outcomes.emplace_back();
    o.kind = ret == 0 ? Outcome::Kind::kOk : Outcome::Kind::kError;
    o.err = ret;
  }
  CheckExpectation(c, ret, &step);
  step.end_ns = backend_->NowNs() - start_ns_;
  const size_t states_before = run_trace_.states.size();
  ObserveStates(c, ret, &step);
  if (!options_.narrate) {
    if (!options_.keep_trace) run_trace_.states.clear();
    step.note.clear();
    return;
  }
  step.qps = Views(c.name);
  std::vector<StateEvent> changes(run_trace_.states.begin() + states_before,
                                  run_trace_.states.end());
  step.why = ExplainStep(c, ret, step, before_, changes);
  if (!options_.keep_trace) run_trace_.states.clear();
  before_ = step.qps;
}

RunTrace Runner::Finish() {
  RunTrace out = std::move(run_trace_);
  run_trace_ = RunTrace{};
  ledger_ = WrLedger(&run_trace_.wqes);
  return out;
}

int Runner::Execute(const Command& c, Step* step) {
  switch (c.verb) {
    case Verb::kDevice:
      return OpenDevice(c, step);
    case Verb::kPd:
    case Verb::kMr:
    case Verb::kCq:
    case Verb::kSrq:
      return Create(c, step);
    case Verb::kQp:
      return CreateQp(c, step);
    case Verb::kModify:
      return Modify(c, step);
    case Verb::kQuery:
      return Query(c, step);
    case Verb::kPostSend:
      return PostSend(c, step);
    case Verb::kPostRecv:
      return PostRecv(c, step);
    case Verb::kPoll:
      return Poll(c, step);
    case Verb::kEvents:
      return Events(c, step);
    case Verb::kFill:
    case Verb::kCheck:
      return FillOrCheck(c, step);
    case Verb::kDestroy:
      return Destroy(c, step);
    case Verb::kAdvance:
      backend_->Advance(c.advance_ns);
      return 0;
    case Verb::kQueryDevice:
      return QueryDevice(c, step);
    case Verb::kQueryPort:
      return QueryPort(c, step);
    case Verb::kQuerySrq:
      return QuerySrq(c, step);
    case Verb::kModifySrq:
      return ModifySrq(c, step);
    case Verb::kResizeCq:
      return ResizeCq(c, step);
    case Verb::kChannel:
      return CreateChannel(c, step);
    case Verb::kReqNotify:
      return ReqNotify(c, step);
    case Verb::kGetCqEvent:
      return GetCqEvent(c, step);
    case Verb::kAckCqEvents:
      return AckCqEvents(c, step);
    case Verb::kReregMr:
      return ReregMr(c, step);
    case Verb::kAllocMw:
      return AllocMw(c, step);
    case Verb::kBindMw:
      return BindMw(c, step);
    case Verb::kDeallocMw:
      return Destroy(c, step);
  }
  return EINVAL;
}

Device* Runner::DeviceOf(const Object& o) {
  if (o.device < 0 || o.device >= static_cast<int>(devices_.size())) return nullptr;
  return devices_[o.device].get();
}

int Runner::OpenDevice(const Command& c, Step* step) {
  std::vector<std::string> names = backend_->ListDevices();
  std::string name;
  if (!names.empty()) {
    name = names[std::min<size_t>(devices_opened_, names.size() - 1)];
  }
  ++devices_opened_;
  std::unique_ptr<Device> dev;
  int ret = backend_->OpenDevice(name, &dev);
  Object& o = Obj(c.name);
  o.kind = ObjectKind::kDevice;
  o.device = static_cast<int>(devices_.size());
  devices_.push_back(ret == 0 ? std::move(dev) : nullptr);
  if (ret == 0 && options_.narrate) step->note = "opened " + devices_.back()->Name();
  return ret;
}

// pd, mr, cq, srq.
int Runner::Create(const Command& c, Step* step) {
  Object& o = Obj(c.name);
  if (c.verb == Verb::kPd || c.verb == Verb::kCq) {
    o.device = Obj(c.device).device;
  } else {
    o.device = Obj(c.pd).device;
    o.pd = c.pd;
  }
  Device* dev = DeviceOf(o);
  if (!dev) return ENODEV;
  const PdHandle pd{c.pd.empty() ? 0 : Obj(c.pd).handle};
  int ret = EINVAL;
  switch (c.verb) {
    case Verb::kPd: {
      o.kind = ObjectKind::kPd;
      PdHandle h;
      ret = dev->AllocPd(&h);
      o.handle = h.id;
      break;
    }
    case Verb::kMr: {
      o.kind = ObjectKind::kMr;
      MrHandle h;
      ret = dev->RegMr(pd, c.length, c.access, &h, &o.buf, &o.lkey, &o.rkey);
      if (ret == 0) {
        o.handle = h.id;
        o.len = c.length;
      }
      break;
    }
    case Verb::kCq: {
      o.kind = ObjectKind::kCq;
      CqHandle h;
      int actual = 0;
      const ChannelHandle ch{c.channel.empty() ? 0 : Obj(c.channel).handle};
      ret = dev->CreateCq(c.cqe, ch, &h, &actual);
      o.handle = h.id;
      if (ret == 0 && options_.narrate) step->note = "granted cqe=" + std::to_string(actual);
      break;
    }
    case Verb::kSrq: {
      o.kind = ObjectKind::kSrq;
      SrqHandle h;
      ret = dev->CreateSrq(pd, c.max_wr, c.max_sge, &h);
      o.handle = h.id;
      break;
    }
    default:
      break;
  }
  if (ret != 0) o.handle = 0;
  return ret;
}

int Runner::CreateQp(const Command& c, Step* step) {
  Object& o = Obj(c.name);
  o.kind = ObjectKind::kQp;
  o.pd = c.pd;
  o.device = Obj(c.pd).device;
  o.type = c.init.qp_type;
  Device* dev = DeviceOf(o);
  if (!dev) return ENODEV;
  QpInitAttr init = c.init;
  init.pd = PdHandle{Obj(c.pd).handle};
  init.send_cq = CqHandle{Obj(c.send_cq).handle};
  init.recv_cq = CqHandle{Obj(c.recv_cq).handle};
  if (!c.srq.empty()) init.srq = SrqHandle{Obj(c.srq).handle};
  QpHandle h;
  QpCap actual;
  int ret = dev->CreateQp(init, &h, &actual);
  if (ret != 0) return ret;
  o.handle = h.id;
  qps_[c.name] = &o;
  if (dev->QpNum(h, &o.qp_num) != 0) o.qp_num = 0;
  o.init = init;
  o.init.cap = actual;
  o.send_cq = c.send_cq;
  o.recv_cq = c.recv_cq;
  o.srq = c.srq;
  if (options_.narrate) step->note = CapsText(actual);
  return 0;
}

int Runner::AddressTo(const Object& sender, const std::string& target, AhAttr* ah,
                      uint32_t* qp_num) {
  const Object& peer = Obj(target);
  Device* peer_dev = DeviceOf(peer);
  Device* dev = DeviceOf(sender);
  if (!peer_dev || !dev) return ENODEV;
  ConnectionInfo info;
  if (int ret = peer_dev->LocalConnectionInfo(QpHandle{peer.handle}, &info)) return ret;
  int gid_index = 0;
  if (int ret = dev->DefaultGidIndex(sender.port, &gid_index)) return ret;
  *ah = qptwin::AddressTo(info, gid_index);
  ah->port_num = sender.port;  // ibv_ah_attr.port_num is the local port
  *qp_num = info.qp_num;
  return 0;
}

int Runner::Modify(const Command& c, Step* step) {
  Object& o = Obj(c.name);
  Device* dev = DeviceOf(o);
  if (!dev) return ENODEV;
  QpAttr attr = c.attr;
  const uint8_t old_port = o.port;
  if (c.mask & attr::kPort) o.port = attr.port_num;  // the AV below uses the new port
  if (!c.dest.empty()) {
    if (int ret = AddressTo(o, c.dest, &attr.ah_attr, &attr.dest_qp_num)) {
      step->note = "could not address " + c.dest + ": " + ResultName(ret);
      return ret;
    }
  }
  QpHandle qp{o.handle};
  QpAttr before;
  QpInitAttr init;
  bool known_before = dev->QueryQp(qp, &before, &init) == 0;
  int ret = dev->ModifyQp(qp, attr, c.mask);
  if (ret == 0) {
    if (c.mask & attr::kQkey) o.qkey = attr.qkey;
    if (!c.dest.empty()) o.peer = c.dest;
    return 0;
  }
  o.port = old_port;
  if (known_before && (c.mask & attr::kCurState) && attr.cur_qp_state != before.qp_state) {
    step->note = CurStateMismatch(o.type, attr.cur_qp_state, before.qp_state, attr, c.mask, ret);
  } else if (known_before) {
    QpState next = NextState(before.qp_state, attr.qp_state, c.mask);
    Verdict v = Judge(o.type, before.qp_state, next, c.mask);
    if (!v.legal) {
      step->note = v.Reason();
    } else {
      DeviceAttr dattr;
      std::vector<PortAttr> ports(1);
      if (dev->QueryDevice(&dattr) == 0 && dev->QueryPort(1, &ports[0]) == 0) {
        auto problems = CheckAttrValues(attr, c.mask, o.type, dattr, ports, before.port_num);
        step->note = problems.empty() ? "legal per the table and its values; the device refused "
                                        "it with " + ResultName(ret)
                                      : JoinProblems(problems);
      }
    }
  }
  return ret;
}

int Runner::Destroy(const Command& c, Step* step) {
  Object& o = Obj(c.name);
  if (o.kind == ObjectKind::kDevice) {
    if (!DeviceOf(o)) return ENODEV;
    devices_[o.device].reset();
    // Its regions went with it (backend.h contract 4): as after a dereg, fill/check of them
    // is out of range, not a write into memory the backend freed or reuses.
    for (auto& [name, mr] : objects_) {
      if (mr.kind == ObjectKind::kMr && mr.device == o.device) {
        mr.buf = nullptr;
        mr.len = 0;
      }
    }
    return 0;
  }
  Device* dev = DeviceOf(o);
  if (!dev) return ENODEV;
  switch (o.kind) {
    case ObjectKind::kPd: {
      // The runner's own UD address handles on this PD go first.
      for (auto it = ahs_.begin(); it != ahs_.end();) {
        if (it->first.first != c.name) {
          ++it;
          continue;
        }
        (void)dev->DestroyAh(AhHandle{it->second});
        it = ahs_.erase(it);
      }
      return dev->DeallocPd(PdHandle{o.handle});
    }
    case ObjectKind::kMr: {
      int ret = dev->DeregMr(MrHandle{o.handle});
      if (ret == 0) {
        o.buf = nullptr;
        o.len = 0;
      }
      return ret;
    }
    case ObjectKind::kCq:
      return dev->DestroyCq(CqHandle{o.handle});
    case ObjectKind::kChannel:
      return dev->DestroyCompChannel(ChannelHandle{o.handle});
    case ObjectKind::kMw:
      return dev->DeallocMw(MwHandle{o.handle});
    case ObjectKind::kSrq: {
      int ret = dev->DestroySrq(SrqHandle{o.handle});
      if (ret == 0) EndQueues(&o, Wqe::End::kDestroyed, *step);
      return ret;
    }
    case ObjectKind::kQp: {
      int ret = dev->DestroyQp(QpHandle{o.handle});
      if (ret == 0) {
        o.destroyed = true;
        EndQueues(&o, Wqe::End::kDestroyed, *step);
      }
      return ret;
    }
    case ObjectKind::kDevice:
      break;
  }
  return EINVAL;
}

void Runner::CheckExpectation(const Command& c, int ret, Step* step) {
  const Expect& e = c.expect;
  auto fail = [&](const std::string& got) {
    step->failures.push_back("expected " + e.text + ", got " + got);
  };
  switch (e.kind) {
    case Expect::Kind::kNone:
      return;
    case Expect::Kind::kOk:
      if (ret != 0) fail(ResultName(ret));
      return;
    case Expect::Kind::kErrno:
      if (ret != e.err) fail(ResultName(ret));
      return;
    case Expect::Kind::kState:
      if (ret != 0) return fail(ResultName(ret));
      if (step->outcomes.front().state != e.state) {
        fail(std::string(ToName(step->outcomes.front().state)));
      }
      return;
    case Expect::Kind::kStatuses: {
      if (ret != 0 && ret != ETIMEDOUT) return fail(ResultName(ret));
      std::vector<WcStatus> got;
      for (const Outcome& o : step->outcomes) {
        if (o.kind == Outcome::Kind::kWc) got.push_back(o.wc.status);
      }
      if (got != e.statuses) fail(JoinNames(got, [](WcStatus s) { return ToName(s); }));
      return;
    }
    case Expect::Kind::kEvents: {
      if (ret != 0 && ret != ETIMEDOUT) return fail(ResultName(ret));
      std::vector<EventType> got;
      for (const Outcome& o : step->outcomes) {
        if (o.kind == Outcome::Kind::kEvent) got.push_back(o.event);
      }
      if (got != e.events) fail(JoinNames(got, [](EventType t) { return ToName(t); }));
      return;
    }
  }
}

}  // namespace qptwin::scenario
