// The runner's tracing: every posted WR from post to its end (trace.h invariant 1), the QPs'
// state changes (Device::QpHistory, cross-checked with QueryQp), and the QP views per step.
#include <algorithm>

#include "spec/scenario/runner.h"

namespace qptwin::scenario {

std::string_view ToName(Wqe::End e) {
  switch (e) {
    case Wqe::End::kOutstanding:
      return "outstanding";
    case Wqe::End::kCqe:
      return "cqe";
    case Wqe::End::kImplicit:
      return "implicit";
    case Wqe::End::kDiscarded:
      return "discarded";
    case Wqe::End::kDestroyed:
      return "destroyed";
  }
  return "?";
}

void Runner::RecordPosts(const Command& c, size_t posted, uint64_t now_ns) {
  Object& target = Obj(c.name);
  const bool send = c.verb == Verb::kPostSend || c.verb == Verb::kBindMw;
  for (size_t i = 0; i < posted; ++i) {
    Wqe w;
    w.qp = c.name;
    w.queue = send ? "SQ" : (target.kind == ObjectKind::kSrq ? "SRQ" : "RQ");
    w.wr_id = c.wr_id + i;
    w.opcode = send ? std::string(ToName(c.send.opcode)) : "RECV";
    // IBTA 10.8.3 / R21: a CQE is written when SIGNALED or sq_sig_all; receives always.
    w.signaled = !send || (c.send.send_flags & send_flag::kSignaled) || target.init.sq_sig_all;
    w.post_line = c.line;
    w.post_ns = now_ns;
    size_t index = trace_->wqes.size();
    if (!free_wqes_.empty()) {  // keep_trace == false: reuse an ended WR's slot
      index = free_wqes_.back();
      free_wqes_.pop_back();
      trace_->wqes[index] = std::move(w);
    } else {
      trace_->wqes.push_back(std::move(w));
    }
    ledger_.Post(send ? &target.sq : &target.rq, index);
  }
}

// Accounting by queue position (accounting.h): the CQE names its QP by qp_num, the runner
// gives the queues it may belong to.
void Runner::RecordCompletion(const std::string& cq, Outcome* out, const Step& step) {
  const Outcome& o = *out;
  if (o.kind != Outcome::Kind::kWc) return;
  auto qp_it = objects_.find(o.qp);
  if (qp_it == objects_.end()) return;
  Object& qp = qp_it->second;
  CqeSeen seen;
  seen.wc = o.wc;
  seen.cq = cq;
  seen.qp = o.qp;
  seen.line = step.line;
  seen.ns = backend_->NowNs() - start_ns_;
  QpQueues queues;
  queues.sq = &qp.sq;
  queues.rq = qp.srq.empty() ? &qp.rq : &Obj(qp.srq).rq;
  queues.rq_is_srq = !qp.srq.empty();
  queues.sq_on_cq = cq == qp.send_cq;
  queues.rq_on_cq = cq == qp.recv_cq;
  const long index = ledger_.Complete(seen, queues);  // -1: none of ours (should not happen)
  if (index >= 0) out->wr_opcode = trace_->wqes[index].opcode;
}

void Runner::EndQueues(Object* o, Wqe::End end, const Step& step) {
  const uint64_t now = backend_->NowNs() - start_ns_;
  ledger_.EndAll(&o->sq, end, step.line, now);
  ledger_.EndAll(&o->rq, end, step.line, now);
}

void Runner::ObserveStates(const Command& c, int ret, Step* step) {
  const uint64_t now = step->end_ns;  // NextInto's NowNs() - start_ns_, just taken
  const size_t first_new = trace_->states.size();
  // Neither a trace nor a narration reads the state events (the differential fuzzer): only
  // the QPs' states are followed, no event is recorded.
  const bool record = options_.keep_trace || options_.narrate;
  if (record && c.verb == Verb::kQp && ret == 0) {
    trace_->states.push_back({c.name, step->start_ns, c.line, QpState::kReset, QpState::kReset,
                              "created"});
  }
  // Only the busy QPs and the command's: a quiet one has nothing new (Quiet()), so a step
  // costs O(busy QPs), not O(QPs) (issue 15: 100,000 QPs moved to INIT one by one).
  for (QpEntry* entry : Watched(c.name)) {
    const std::string& name = entry->first;
    Object& o = *entry->second;
    if (!o.handle || o.destroyed) {
      SetBusy(entry, false);
      continue;
    }
    Device* dev = DeviceOf(o);
    if (!dev) continue;
    // Only what is new since the last look (QpHistorySince): a long scenario stays linear.
    // Nothing is new while the device's history version stays (0: it has none, ask).
    const uint64_t version = dev->HistoryVersion();
    std::vector<StateChange>& history = history_;  // replaced by the call
    if ((version == 0 || version != o.history_version) &&
        dev->QpHistorySince(QpHandle{o.handle}, o.history_seen, &history) == 0) {
      o.history_version = version;
      for (const StateChange& h : history) {
        if (h.cause == "create" || h.cause == "created") continue;  // recorded above
        if (record) {
          uint64_t t = h.time_ns >= start_ns_ ? h.time_ns - start_ns_ : 0;
          t = std::clamp(t, step->start_ns, now);
          trace_->states.push_back({name, t, c.line, h.from, h.to, h.cause});
        }
        o.state = h.to;
      }
      o.history_seen += history.size();
    }
    // The device's word wins over the history (hw may not record what the device did); a
    // device whose history is complete (the model) needs no query.
    if (!dev->HistoryIsComplete()) {
      QpAttr attr;
      QpInitAttr init;
      if (dev->QueryQp(QpHandle{o.handle}, &attr, &init) == 0 && attr.qp_state != o.state) {
        if (record) {
          trace_->states.push_back({name, now, c.line, o.state, attr.qp_state, "seen by query"});
        }
        o.state = attr.qp_state;
      }
    }
    // R9: to RESET, the queues are discarded without completions.
    if (o.state == QpState::kReset && (o.sq.Live() > 0 || o.rq.Live() > 0)) {
      EndQueues(&o, Wqe::End::kDiscarded, *step);
    }
    const bool busy = !Quiet(o);
    if (o.busy != busy) SetBusy(entry, busy);  // mostly unchanged: no call
  }
  if (trace_->states.size() - first_new < 2) return;  // nothing to order
  std::stable_sort(trace_->states.begin() + first_new, trace_->states.end(),
                   [](const StateEvent& a, const StateEvent& b) { return a.time_ns < b.time_ns; });
}

void Runner::SetBusy(QpEntry* qp, bool busy) {
  if (qp->second->busy == busy) return;
  qp->second->busy = busy;
  auto at = std::lower_bound(busy_.begin(), busy_.end(), qp, ByName());
  if (busy) {
    busy_.insert(at, qp);
  } else {
    busy_.erase(at);  // it is there: its flag was set
  }
}

bool Runner::Quiet(const Object& o) const {
  return (o.state == QpState::kReset || o.state == QpState::kInit) && o.sq.Live() == 0 &&
         o.rq.Live() == 0 && o.srq.empty();
}

const std::vector<Runner::QpEntry*>& Runner::Watched(const std::string& named) {
  std::vector<QpEntry*>& entries = watched_;
  entries = busy_;
  if (named.empty()) return entries;
  auto it = qps_.find(named);
  if (it != qps_.end() && !it->second->busy) {
    entries.insert(std::lower_bound(entries.begin(), entries.end(), &*it, ByName()), &*it);
  }
  return entries;
}

QpView Runner::ViewOf(const std::string& name, const Object& o) const {
  QpView v;
  v.name = name;
  v.type = o.type;
  v.state = o.state;
  v.sq = static_cast<int>(o.sq.Live());
  auto srq = o.srq.empty() ? objects_.end() : objects_.find(o.srq);
  v.rq = static_cast<int>(srq == objects_.end() ? o.rq.Live() : srq->second.rq.Live());
  v.max_send_wr = o.init.cap.max_send_wr;
  v.max_recv_wr = o.init.cap.max_recv_wr;
  v.max_send_sge = o.init.cap.max_send_sge;
  v.max_recv_sge = o.init.cap.max_recv_sge;
  v.srq = o.srq;
  v.sig_all = o.init.sq_sig_all;
  return v;
}

std::vector<QpView> Runner::Views(const std::string& named) {
  std::vector<QpView> views;
  if (!options_.keep_trace) {
    for (const QpEntry* entry : Watched(named)) {
      const Object& o = *entry->second;
      if (o.handle && !o.destroyed) views.push_back(ViewOf(entry->first, o));
    }
    return views;
  }
  for (const auto& [name, qp] : qps_) {
    const Object& o = *qp;
    if (!o.handle || o.destroyed) continue;
    views.push_back(ViewOf(name, o));
  }
  return views;
}

}  // namespace qptwin::scenario
