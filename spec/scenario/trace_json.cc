#include "spec/scenario/trace_json.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>

namespace qptwin::scenario {
namespace {

struct Event {
  uint64_t time_ns;
  // (sorting: time, then the step the event belongs to)
  std::string kind;
  int line;
  std::string qp;
  std::string details;  // the members of the details object, already JSON
};

std::string Member(const std::string& key, const std::string& json_value) {
  return JsonString(key) + ": " + json_value;
}
std::string Str(const std::string& key, const std::string& v) { return Member(key, JsonString(v)); }
std::string Num(const std::string& key, uint64_t v) { return Member(key, std::to_string(v)); }
std::string Bool(const std::string& key, bool v) { return Member(key, v ? "true" : "false"); }
std::string Strings(const std::string& key, const std::vector<std::string>& v) {
  std::string out;
  for (const std::string& s : v) out += (out.empty() ? "" : ", ") + JsonString(s);
  return Member(key, "[" + out + "]");
}
std::string Join(std::initializer_list<std::string> parts) {
  std::string out;
  for (const std::string& p : parts) out += (out.empty() ? "" : ", ") + p;
  return out;
}

std::string StepResult(const Step& s) {
  for (const Outcome& o : s.outcomes) {
    if (o.kind == Outcome::Kind::kError) return std::string(ErrnoName(o.err));
  }
  return "ok";
}

}  // namespace

std::string JsonString(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  return out + "\"";
}

std::string RenderTraceJson(const RunResult& result, const std::string& scenario_name,
                            const std::string& backend_label, const std::string& clock) {
  std::vector<Event> events;
  std::map<std::string, std::pair<int, int>> depth;  // qp -> (sq, rq) last reported
  for (const Step& s : result.steps) {
    events.push_back({s.start_ns, "call", s.line, "",
                      Join({Str("text", s.text), Str("result", StepResult(s)),
                            Str("note", s.note), Strings("why", s.why),
                            Strings("failures", s.failures)})});
    for (const Outcome& o : s.outcomes) {
      if (o.kind == Outcome::Kind::kEvent) {
        std::string qp = o.object.rfind("qp=", 0) == 0 ? o.object.substr(3) : "";
        events.push_back({s.end_ns, "async_event", s.line, qp,
                          Join({Str("type", std::string(ToName(o.event))),
                                Str("object", o.object)})});
      }
    }
    for (const QpView& v : s.qps) {
      auto it = depth.find(v.name);
      if (it != depth.end() && it->second == std::make_pair(v.sq, v.rq)) continue;
      depth[v.name] = {v.sq, v.rq};
      events.push_back({s.end_ns, "depth", s.line, v.name,
                        Join({Num("sq", v.sq), Num("rq", v.rq)})});
    }
  }
  for (const Wqe& w : result.trace.wqes) {
    events.push_back({w.post_ns, "post", w.post_line, w.qp,
                      Join({Str("queue", w.queue), Num("wr_id", w.wr_id),
                            Str("opcode", w.opcode), Bool("signaled", w.signaled)})});
    if (w.end == Wqe::End::kCqe) {
      std::string d = Join({Str("queue", w.queue), Num("wr_id", w.wr_id), Str("cq", w.cq),
                            Str("status", std::string(ToName(w.status)))});
      if (w.status == WcStatus::kSuccess) {
        d += ", " + Join({Str("opcode", w.wc_opcode), Num("byte_len", w.byte_len)});
      }
      events.push_back({w.end_ns, "completion", w.end_line, w.qp, d});
    } else {
      events.push_back({w.end == Wqe::End::kOutstanding ? result.steps.back().end_ns : w.end_ns,
                        "wqe_end", w.end_line, w.qp,
                        Join({Str("queue", w.queue), Num("wr_id", w.wr_id),
                              Str("end", std::string(ToName(w.end))),
                              Str("by", w.completed_by)})});
    }
  }
  for (const StateEvent& e : result.trace.states) {
    events.push_back({e.time_ns, "state", e.line, e.qp,
                      Join({Str("from", std::string(ToName(e.from))),
                            Str("to", std::string(ToName(e.to))), Str("cause", e.cause)})});
  }
  std::map<int, size_t> step_of_line;
  for (size_t i = 0; i < result.steps.size(); ++i) step_of_line[result.steps[i].line] = i;
  std::stable_sort(events.begin(), events.end(), [&](const Event& a, const Event& b) {
    if (a.time_ns != b.time_ns) return a.time_ns < b.time_ns;
    return step_of_line[a.line] < step_of_line[b.line];
  });

  std::vector<std::string> qps;
  std::set<std::string> seen;
  std::map<std::string, std::string> types;
  for (const Step& s : result.steps) {
    for (const QpView& v : s.qps) {
      types[v.name] = std::string(ToName(v.type));
      if (seen.insert(v.name).second) qps.push_back(v.name);
    }
  }
  std::string out = "{\n";
  out += "  " + Str("schema", "qptwin-trace/1") + ",\n";
  out += "  " + Str("scenario", scenario_name) + ",\n";
  out += "  " + Str("backend", backend_label) + ",\n";
  out += "  " + Str("clock", clock) + ",\n";
  out += "  " + Num("failures", result.FailureCount()) + ",\n";
  out += "  \"qps\": [";
  for (size_t i = 0; i < qps.size(); ++i) {
    out += std::string(i ? ", " : "") + "{" + Str("name", qps[i]) + ", " +
           Str("type", types[qps[i]]) + "}";
  }
  out += "],\n  \"events\": [\n";
  for (size_t i = 0; i < events.size(); ++i) {
    const Event& e = events[i];
    out += "    {" + Num("time_ns", e.time_ns) + ", " + Str("kind", e.kind) + ", " +
           Num("line", e.line) + ", " + Str("qp", e.qp) + ", \"details\": {" + e.details + "}}" +
           (i + 1 < events.size() ? ",\n" : "\n");
  }
  out += "  ]\n}\n";
  return out;
}

}  // namespace qptwin::scenario
