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
  const bool send = c.verb == Verb::kPostSend;
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
    trace_->wqes.push_back(w);
    (send ? target.sq : target.rq).push_back(trace_->wqes.size() - 1);
  }
}

namespace {

// Removes the entry of `queue` whose WR has `wr_id`; returns its index in `wqes`, or -1.
// With `in_order`, the entries before it are removed too and listed in *retired.
long Take(std::deque<size_t>* queue, const std::vector<Wqe>& wqes, uint64_t wr_id,
          bool in_order, std::vector<size_t>* retired) {
  auto it = std::find_if(queue->begin(), queue->end(),
                         [&](size_t i) { return wqes[i].wr_id == wr_id; });
  if (it == queue->end()) return -1;
  long found = static_cast<long>(*it);
  if (in_order) {
    retired->assign(queue->begin(), it);
    queue->erase(queue->begin(), it + 1);
  } else {
    queue->erase(it);
  }
  return found;
}

bool IsReceive(const WorkCompletion& wc) {
  return wc.status == WcStatus::kSuccess && wc.opcode >= WcOpcode::kRecv;
}

}  // namespace

void Runner::RecordCompletion(const std::string& cq, const Outcome& o, const Step& step) {
  if (o.kind != Outcome::Kind::kWc) return;
  auto qp_it = objects_.find(o.qp);
  if (qp_it == objects_.end()) return;
  Object& qp = qp_it->second;
  const uint64_t now = backend_->NowNs() - start_ns_;
  std::vector<Wqe>& wqes = trace_->wqes;
  // Which queue: the CQ tells when it serves only one side, else the opcode (SUCCESS) or
  // the wr_id (errors: the opcode is undefined, IBTA 11.4.2.1).
  const bool send_side = cq == qp.send_cq, recv_side = cq == qp.recv_cq;
  bool try_send = send_side && (!recv_side || !IsReceive(o.wc));
  bool try_recv = recv_side && (!send_side || IsReceive(o.wc) || o.wc.status != WcStatus::kSuccess);
  std::vector<size_t> retired;
  long idx = try_send ? Take(&qp.sq, wqes, o.wc.wr_id, /*in_order=*/true, &retired) : -1;
  if (idx < 0 && try_recv) {
    std::deque<size_t>* rq = qp.srq.empty() ? &qp.rq : &Obj(qp.srq).rq;
    idx = Take(rq, wqes, o.wc.wr_id, /*in_order=*/false, &retired);
  }
  if (idx < 0) return;  // not one the runner posted (should not happen)
  Wqe& w = wqes[idx];
  w.end = Wqe::End::kCqe;
  w.end_line = step.line;
  w.end_ns = now;
  w.status = o.wc.status;
  w.cq = cq;
  w.wc_opcode = std::string(ToName(o.wc.opcode));
  w.byte_len = o.wc.byte_len;
  if (w.queue == "SRQ") w.qp = w.qp + "->" + o.qp;
  for (size_t r : retired) {
    wqes[r].end = Wqe::End::kImplicit;
    wqes[r].end_line = step.line;
    wqes[r].end_ns = now;
    wqes[r].completed_by = "wr_id=" + std::to_string(o.wc.wr_id);
  }
}

void Runner::EndQueues(Object* o, Wqe::End end, const Step& step) {
  const uint64_t now = backend_->NowNs() - start_ns_;
  for (std::deque<size_t>* q : {&o->sq, &o->rq}) {
    for (size_t i : *q) {
      trace_->wqes[i].end = end;
      trace_->wqes[i].end_line = step.line;
      trace_->wqes[i].end_ns = now;
    }
    q->clear();
  }
}

void Runner::ObserveStates(const Command& c, int ret, Step* step) {
  const uint64_t now = backend_->NowNs() - start_ns_;
  const size_t first_new = trace_->states.size();
  if (c.verb == Verb::kQp && ret == 0) {
    trace_->states.push_back({c.name, step->start_ns, c.line, QpState::kReset, QpState::kReset,
                              "created"});
  }
  for (auto& [name, o] : objects_) {
    if (o.kind != ObjectKind::kQp || !o.handle || o.destroyed) continue;
    Device* dev = DeviceOf(o);
    if (!dev) continue;
    std::vector<StateChange> history;
    if (dev->QpHistory(QpHandle{o.handle}, &history) == 0) {
      for (size_t i = o.history_seen; i < history.size(); ++i) {
        const StateChange& h = history[i];
        if (h.cause == "create" || h.cause == "created") continue;  // recorded above
        uint64_t t = h.time_ns >= start_ns_ ? h.time_ns - start_ns_ : 0;
        t = std::clamp(t, step->start_ns, now);
        trace_->states.push_back({name, t, c.line, h.from, h.to, h.cause});
        o.state = h.to;
      }
      o.history_seen = history.size();
    }
    // The device's word wins over the history (hw may not record what the device did).
    QpAttr attr;
    QpInitAttr init;
    if (dev->QueryQp(QpHandle{o.handle}, &attr, &init) == 0 && attr.qp_state != o.state) {
      trace_->states.push_back({name, now, c.line, o.state, attr.qp_state, "seen by query"});
      o.state = attr.qp_state;
    }
    // R9: to RESET, the queues are discarded without completions.
    if (o.state == QpState::kReset && (!o.sq.empty() || !o.rq.empty())) {
      EndQueues(&o, Wqe::End::kDiscarded, *step);
    }
  }
  std::stable_sort(trace_->states.begin() + first_new, trace_->states.end(),
                   [](const StateEvent& a, const StateEvent& b) { return a.time_ns < b.time_ns; });
}

std::vector<QpView> Runner::Views() {
  std::vector<QpView> views;
  for (const auto& [name, o] : objects_) {
    if (o.kind != ObjectKind::kQp || !o.handle || o.destroyed) continue;
    QpView v;
    v.name = name;
    v.type = o.type;
    v.state = o.state;
    v.sq = static_cast<int>(o.sq.size());
    v.rq = static_cast<int>(o.srq.empty() ? o.rq.size() : Obj(o.srq).rq.size());
    v.max_send_wr = o.init.cap.max_send_wr;
    v.max_recv_wr = o.init.cap.max_recv_wr;
    v.max_send_sge = o.init.cap.max_send_sge;
    v.max_recv_sge = o.init.cap.max_recv_sge;
    v.srq = o.srq;
    v.sig_all = o.init.sq_sig_all;
    views.push_back(v);
  }
  return views;
}

}  // namespace qptwin::scenario
