#include "examples/practice/state_history.h"

#include <algorithm>
#include <cerrno>

#include "examples/practice/qp_connect.h"

namespace qptwin::practice {

int StateHistory::Modify(QpHandle qp, const QpAttr& attr, AttrMask mask,
                         const std::string& cause) {
  if (int err = Sync(qp)) return err;
  QpState from;
  if (int err = QueryState(*dev_, qp, &from)) return err;
  if (int err = dev_->ModifyQp(qp, attr, mask)) return err;
  QpState to = from;
  (void)QueryState(*dev_, qp, &to);  // the QP exists: it was just modified
  Track& t = tracks_[qp.id];
  t.expected_echo.emplace_back(from, to);
  Record(qp, &t, StateChange{backend_->NowNs(), from, to, cause});
  return Sync(qp);
}

int StateHistory::Sync(QpHandle qp) {
  std::vector<StateChange> device;
  int err = dev_->QpHistory(qp, &device);
  if (err == EOPNOTSUPP) return 0;
  if (err) return err;
  Track& t = tracks_[qp.id];
  for (size_t i = t.device_seen; i < device.size(); ++i) {
    const StateChange& c = device[i];
    if (c.cause == "modify") {
      // A modify: one this wrapper drove (skip the echo) or one made past the wrapper.
      auto echo = std::find(t.expected_echo.begin(), t.expected_echo.end(),
                            std::make_pair(c.from, c.to));
      if (echo != t.expected_echo.end()) {
        t.expected_echo.erase(echo);
        continue;
      }
    }
    Record(qp, &t, c);
  }
  t.device_seen = device.size();
  // A device that does not record a modify (e.g. RTS->RTS) never echoes it.
  t.expected_echo.clear();
  return 0;
}

std::vector<StateChange> StateHistory::History(QpHandle qp) const {
  auto it = tracks_.find(qp.id);
  return it == tracks_.end() ? std::vector<StateChange>{} : it->second.merged;
}

int StateHistory::OnChange(Callback cb) {
  int id = next_callback_id_++;
  callbacks_[id] = std::move(cb);
  return id;
}

void StateHistory::RemoveCallback(int id) { callbacks_.erase(id); }

void StateHistory::Record(QpHandle qp, Track* t, const StateChange& change) {
  t->merged.push_back(change);
  // Copy: a callback may register or remove callbacks.
  std::vector<Callback> cbs;
  for (const auto& [id, cb] : callbacks_) cbs.push_back(cb);
  for (const Callback& cb : cbs) cb(qp, change);
}

}  // namespace qptwin::practice
