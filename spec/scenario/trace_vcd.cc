#include "spec/scenario/trace_vcd.h"

#include <map>
#include <set>

namespace qptwin::scenario {
namespace {

// VCD identifier codes: printable ASCII '!'..'~', base 94.
std::string Code(int n) {
  std::string s;
  do {
    s += static_cast<char>('!' + n % 94);
    n /= 94;
  } while (n > 0);
  return s;
}

std::string Binary(uint64_t v) {
  if (v == 0) return "b0";
  std::string s;
  for (; v; v >>= 1) s.insert(s.begin(), (v & 1) ? '1' : '0');
  return "b" + s;
}

struct Signal {
  std::string code;
  std::string kind;  // "integer" or "wire"
  int width;
  std::string name;
};

std::string Value(const Signal& sig, const std::string& v) {
  // Scalars are written "<v><code>", vectors "b<bits> <code>".
  if (sig.width == 1) return v + sig.code;
  return v + " " + sig.code;
}

}  // namespace

std::string RenderVcd(const RunResult& result, const std::string& scenario_name) {
  // QPs in order of creation.
  std::vector<std::string> qps;
  std::set<std::string> seen;
  for (const StateEvent& e : result.trace.states) {
    if (seen.insert(e.qp).second) qps.push_back(e.qp);
  }
  int next = 0;
  Signal line{Code(next++), "integer", 32, "line"};
  Signal failures{Code(next++), "integer", 32, "failures"};
  struct QpSignals {
    Signal state, in_err, sq, rq;
  };
  std::map<std::string, QpSignals> sigs;
  for (const std::string& q : qps) {
    sigs[q] = {{Code(next++), "integer", 8, "state"},
               {Code(next++), "wire", 1, "in_err"},
               {Code(next++), "integer", 32, "sq_outstanding"},
               {Code(next++), "integer", 32, "rq_outstanding"}};
  }

  // Display times: a step that takes no time still gets 1 ns of its own, so that the order
  // of the steps shows in the waveform (the model runs setup steps at the same instant).
  std::map<int, uint64_t> shift_of_line;  // .qps line -> ns added to its times
  uint64_t shift = 0, prev_end = 0;
  bool first = true;
  for (const Step& s : result.steps) {
    if (!first && s.start_ns + shift <= prev_end) shift = prev_end + 1 - s.start_ns;
    first = false;
    shift_of_line[s.line] = shift;
    prev_end = s.end_ns + shift;
  }
  auto at = [&](uint64_t t, int line) { return t + shift_of_line[line]; };

  // time -> code -> value; a later write at the same time wins.
  std::map<uint64_t, std::map<std::string, std::string>> changes;
  auto set = [&](uint64_t t, const Signal& s, const std::string& v) {
    changes[t][s.code] = Value(s, v);
  };
  int failed = 0;
  for (const Step& s : result.steps) {
    set(at(s.start_ns, s.line), line, Binary(s.line));
    failed += static_cast<int>(s.failures.size());
    const uint64_t end = at(s.end_ns, s.line);
    set(end, failures, Binary(failed));
    for (const QpView& v : s.qps) {
      if (!sigs.count(v.name)) continue;
      set(end, sigs[v.name].sq, Binary(v.sq));
      set(end, sigs[v.name].rq, Binary(v.rq));
    }
  }
  for (const StateEvent& e : result.trace.states) {
    const QpSignals& q = sigs[e.qp];
    const uint64_t t = at(e.time_ns, e.line);
    set(t, q.state, Binary(static_cast<uint64_t>(e.to)));
    set(t, q.in_err, e.to == QpState::kErr ? "1" : "0");
    if (e.cause == "created") {
      set(t, q.sq, "b0");
      set(t, q.rq, "b0");
    }
  }

  std::string out = "$version qptwin scenario trace $end\n";
  out += "$comment " + scenario_name + "; state = libibverbs enum ibv_qp_state $end\n";
  out += "$timescale 1ns $end\n$scope module scenario $end\n";
  auto declare = [&](const Signal& s) {
    out += "$var " + s.kind + " " + std::to_string(s.width) + " " + s.code + " " + s.name +
           " $end\n";
  };
  declare(line);
  declare(failures);
  for (const std::string& q : qps) {
    out += "$scope module " + q + " $end\n";
    declare(sigs[q].state);
    declare(sigs[q].in_err);
    declare(sigs[q].sq);
    declare(sigs[q].rq);
    out += "$upscope $end\n";
  }
  out += "$upscope $end\n$enddefinitions $end\n";
  // Initial values: line 0, QPs unknown until created.
  out += "#0\n$dumpvars\n" + Value(line, "b0") + "\n" + Value(failures, "b0") + "\n";
  for (const std::string& q : qps) {
    out += Value(sigs[q].state, "bx") + "\n" + Value(sigs[q].in_err, "x") + "\n" +
           Value(sigs[q].sq, "bx") + "\n" + Value(sigs[q].rq, "bx") + "\n";
  }
  out += "$end\n";
  std::map<std::string, std::string> last;
  for (const auto& [t, values] : changes) {
    std::string block;
    for (const auto& [code, v] : values) {
      if (last[code] == v) continue;
      last[code] = v;
      block += v + "\n";
    }
    if (block.empty()) continue;
    if (t != 0) out += "#" + std::to_string(t) + "\n";
    out += block;
  }
  return out;
}

}  // namespace qptwin::scenario
