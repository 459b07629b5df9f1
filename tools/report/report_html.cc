#include "tools/report/report_html.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <regex>
#include <set>

#include "tools/report/report_style.h"
#include "tools/report/timeline_svg.h"
#include "spec/scenario/transcript.h"

namespace qptwin::report {
namespace {

using scenario::Outcome;
using scenario::RunResult;
using scenario::StateEvent;
using scenario::Step;
using scenario::Wqe;

std::string Us(uint64_t ns) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f us", static_cast<double>(ns) / 1000.0);
  return buf;
}

std::string PathText(const std::vector<QpState>& path) {
  std::string s;
  for (QpState st : path) s += (s.empty() ? "" : " \u2192 ") + std::string(ToName(st));
  return s;
}

std::string Td(const std::string& text, const std::string& cls = "") {
  return "<td" + (cls.empty() ? std::string() : " class=\"" + cls + "\"") + ">" + Escape(text) +
         "</td>";
}

std::string ResultText(const Step& s) {
  std::string out;
  for (const Outcome& o : s.outcomes) {
    if (!out.empty()) out += "; ";
    out += scenario::CanonicalLine(s.line, o).substr(std::to_string(s.line).size() + 2);
  }
  return out;
}

std::string WqeEnd(const Wqe& w) {
  switch (w.end) {
    case Wqe::End::kCqe:
      return std::string(ToName(w.status)) + " (CQE on " + w.cq + ")";
    case Wqe::End::kImplicit:
      return "done, no CQE (unsignaled; implied by the later CQE of the same SQ, " +
             w.completed_by + " at line " + std::to_string(w.end_line) + ")";
    case Wqe::End::kDiscarded:
      return "discarded by RESET";
    case Wqe::End::kDestroyed:
      return w.queue == "SRQ" ? "destroyed with the SRQ" : "destroyed with the QP";
    case Wqe::End::kOutstanding:
      return "no CQE by the end";
  }
  return "";
}

// The scenario's file name for headings (the full path, which can be a long build-tree path,
// goes in a tooltip).
std::string DisplayName(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string SummarySection(const std::string& path, const scenario::ScenarioRun& run) {
  const RunResult& r = run.result;
  const int failures = r.FailureCount();
  uint64_t end = r.steps.empty() ? 0 : r.steps.back().end_ns;
  std::string s = "<section id=\"summary\" class=\"" + std::string(failures ? "fail" : "pass") +
                  "\">\n<h1 title=\"" + Escape(path) + "\">qptwin report: " + Escape(DisplayName(path)) +
                  "</h1>\n<p>";
  s += "Backend <b>" + Escape(run.backend_label) + "</b> (" + Escape(run.clock) + " time). " +
       std::to_string(r.steps.size()) + " steps, " + std::to_string(r.trace.wqes.size()) +
       " work requests posted, " + std::to_string(failures) +
       " failed expectation(s). Ended at " + Us(end) + ".";
  s += " <span id=\"js-summary\"></span></p>\n";
  if (failures) {
    s += "<ul class=\"failures\">";
    for (const Step& st : r.steps) {
      for (const std::string& f : st.failures) {
        s += "<li><a href=\"#L" + std::to_string(st.line) + "\">line " +
             std::to_string(st.line) + "</a>: " + Escape(f) + "</li>";
      }
    }
    s += "</ul>\n";
  }
  return s + "</section>\n";
}

std::string DiagramSection(const RunResult& r, const std::vector<Diagram>& diagrams) {
  auto paths = QpPaths(r);
  std::string s = "<section id=\"diagrams\">\n<h2>State diagrams</h2>\n"
                  "<p class=\"hint\">Solid edges: ibv_modify_qp transitions (kernel "
                  "qp_state_table) labelled with required attributes; dashed: what the device "
                  "does on its own. Bold red: the path this scenario's QP took.</p>\n";
  for (const auto& [type, qps] : QpTypesUsed(r)) {
    s += "<figure class=\"diagram\" data-qp-type=\"" + std::string(ToName(type)) + "\">\n";
    auto it = std::find_if(diagrams.begin(), diagrams.end(),
                           [&](const Diagram& d) { return d.type == type; });
    if (it != diagrams.end() && !it->svg.empty()) {
      s += it->svg;
    } else {
      s += "<p class=\"missing\">diagram not rendered: " +
           Escape(it != diagrams.end() ? it->error : "no diagram") + "</p>";
    }
    s += "<figcaption><b>" + std::string(ToName(type)) + "</b>";
    for (size_t i = 0; i < qps.size(); ++i) {
      s += std::string(i == 0 ? " \u2014 highlighted: " : "; ") + "<span class=\"qp-path\">" +
           Escape(qps[i]) + ": " + Escape(PathText(paths[qps[i]])) + "</span>";
    }
    s += "</figcaption>\n</figure>\n";
  }
  return s + "</section>\n";
}

std::string TimelineSection(const RunResult& r) {
  std::string s = "<section id=\"timeline\">\n<h2>Timeline</h2>\n"
                  "<p class=\"hint\">One column per step (hover for the command and its time), "
                  "one band per QP coloured by state, one bar per work request from its post to "
                  "its end. <span class=\"key wqe-ok\">SUCCESS</span> "
                  "<span class=\"key wqe-err\">error</span> <span class=\"key wqe-flush\">"
                  "flushed</span> <span class=\"key wqe-implicit\">done without CQE</span> "
                  "<span class=\"key wqe-gone\">discarded</span> <span class=\"key wqe-open\">"
                  "no CQE seen</span></p>\n<div class=\"scroll\">" + RenderTimelineSvg(r) +
                  "</div>\n";
  s += "<table id=\"wqe-table\"><thead><tr><th>posted</th><th>line</th><th>QP</th><th>queue</th>"
       "<th>wr_id</th><th>opcode</th><th>signaled</th><th>ended</th><th>line</th><th>how</th>"
       "</tr></thead><tbody>\n";
  for (const Wqe& w : r.trace.wqes) {
    const bool open = w.end == Wqe::End::kOutstanding;
    s += "<tr class=\"wqe-row\" data-qp=\"" + Escape(w.qp.substr(0, w.qp.find("->"))) +
         "\" data-line=\"" + std::to_string(w.post_line) + "\">" + Td(Us(w.post_ns)) +
         Td("L" + std::to_string(w.post_line)) + Td(w.qp) + Td(w.queue) +
         Td(std::to_string(w.wr_id)) + Td(w.opcode) + Td(w.signaled ? "yes" : "no") +
         Td(open ? "" : Us(w.end_ns)) + Td(open ? "" : "L" + std::to_string(w.end_line)) +
         "<td class=\"" + std::string(w.end == Wqe::End::kCqe && w.status != WcStatus::kSuccess
                                          ? "bad"
                                          : "") +
         "\">" + Escape(WqeEnd(w)) + "</td></tr>\n";
  }
  return s + "</tbody></table>\n</section>\n";
}

std::string EventsSection(const RunResult& r) {
  struct Row {
    uint64_t t;
    size_t order;
    int line;
    std::string qp, kind, text;
  };
  std::vector<Row> rows;
  for (const StateEvent& e : r.trace.states) {
    rows.push_back({e.time_ns, rows.size(), e.line, e.qp, "state",
                    std::string(ToName(e.from)) + " \u2192 " + std::string(ToName(e.to)) + " (" +
                        e.cause + ")"});
  }
  for (const Step& st : r.steps) {
    for (const Outcome& o : st.outcomes) {
      if (o.kind == Outcome::Kind::kWc) {
        rows.push_back({st.end_ns, rows.size(), st.line, o.qp, "CQE",
                        "wr_id=" + std::to_string(o.wc.wr_id) + " " +
                            std::string(ToName(o.wc.status)) +
                            (o.wc.status == WcStatus::kSuccess
                                 ? " " + std::string(ToName(o.wc.opcode)) + " len=" +
                                       std::to_string(o.wc.byte_len)
                                 : "")});
      } else if (o.kind == Outcome::Kind::kEvent) {
        rows.push_back({st.end_ns, rows.size(), st.line,
                        o.object.rfind("qp=", 0) == 0 ? o.object.substr(3) : "", "async event",
                        std::string(ToName(o.event)) + " " + o.object});
      }
    }
  }
  std::stable_sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) {
    return a.t != b.t ? a.t < b.t : a.line < b.line;
  });
  std::string s = "<section id=\"events\">\n<h2>CQEs, state changes and async events</h2>\n"
                  "<table id=\"event-table\"><thead><tr><th>time</th><th>line</th><th>QP</th>"
                  "<th>what</th><th></th></tr></thead><tbody>\n";
  for (const Row& row : rows) {
    s += "<tr class=\"event-row ev-" + std::string(row.kind == "CQE" ? "cqe" : row.kind == "state" ? "state" : "async") +
         "\" data-qp=\"" + Escape(row.qp) + "\">" + Td(Us(row.t)) +
         Td("L" + std::to_string(row.line)) + Td(row.qp) + Td(row.kind) + Td(row.text) + "</tr>\n";
  }
  return s + "</tbody></table>\n</section>\n";
}

std::string NarrationSection(const RunResult& r) {
  std::string s = "<section id=\"narration\">\n<h2>Narration</h2>\n<ol class=\"steps\">\n";
  for (const Step& st : r.steps) {
    const bool failed = !st.failures.empty();
    s += "<li id=\"L" + std::to_string(st.line) + "\" class=\"step" +
         std::string(failed ? " failed" : "") + "\"><span class=\"time\">" + Us(st.start_ns) +
         "</span> <span class=\"line\">L" + std::to_string(st.line) + "</span> <code>" +
         Escape(st.text) + "</code> <span class=\"result\">\u2192 " + Escape(ResultText(st)) +
         "</span>";
    if (!st.note.empty()) s += " <span class=\"note\">(" + Escape(st.note) + ")</span>";
    if (!st.why.empty() || failed) {
      s += "<ul class=\"why\">";
      for (const std::string& w : st.why) s += "<li>" + Escape(w) + "</li>";
      for (const std::string& f : st.failures) {
        s += "<li class=\"failure\">expectation failed: " + Escape(f) + "</li>";
      }
      s += "</ul>";
    }
    s += "</li>\n";
  }
  return s + "</ol>\n</section>\n";
}

}  // namespace

std::map<std::string, std::vector<QpState>> QpPaths(const RunResult& result) {
  std::map<std::string, std::vector<QpState>> paths;
  for (const StateEvent& e : result.trace.states) {
    std::vector<QpState>& p = paths[e.qp];
    if (p.empty()) p.push_back(e.from);
    if (e.cause == "created") continue;
    // A self transition (RTS->RTS, SQD->SQD) by modify is drawn as its loop.
    if (p.back() != e.to || (e.from == e.to && e.cause == "modify")) p.push_back(e.to);
  }
  return paths;
}

std::vector<std::pair<QpType, std::vector<std::string>>> QpTypesUsed(const RunResult& result) {
  std::vector<std::pair<QpType, std::vector<std::string>>> out;
  std::set<std::string> seen;
  for (const Step& st : result.steps) {
    for (const scenario::QpView& v : st.qps) {
      if (!seen.insert(v.name).second) continue;
      auto it = std::find_if(out.begin(), out.end(), [&](const auto& p) { return p.first == v.type; });
      if (it == out.end()) {
        out.push_back({v.type, {}});
        it = out.end() - 1;
      }
      it->second.push_back(v.name);
    }
  }
  return out;
}

std::string InlineSvg(const std::string& dot_svg) {
  size_t start = dot_svg.find("<svg");
  if (start == std::string::npos) return "";
  std::string svg = dot_svg.substr(start);
  svg = std::regex_replace(svg, std::regex(R"( xmlns(:xlink)?="[^"]*")"), "");
  return "<div class=\"scroll\">" + svg + "</div>\n";
}

std::string RenderReportHtml(const std::string& scenario_path, const scenario::ScenarioRun& run,
                             const std::vector<Diagram>& diagrams) {
  std::string html = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  html += "<title>qptwin report: " + Escape(DisplayName(scenario_path)) + "</title>\n";
  html += "<style>\n" + std::string(kReportCss) + "</style>\n</head>\n<body>\n";
  html += "<nav><a href=\"#summary\">summary</a> <a href=\"#diagrams\">diagrams</a> "
          "<a href=\"#timeline\">timeline</a> <a href=\"#events\">events</a> "
          "<a href=\"#narration\">narration</a> <label>QP <select id=\"qp-filter\">"
          "<option value=\"\">all</option></select></label></nav>\n<main>\n";
  html += SummarySection(scenario_path, run);
  html += DiagramSection(run.result, diagrams);
  html += TimelineSection(run.result);
  html += EventsSection(run.result);
  html += NarrationSection(run.result);
  html += "</main>\n<script>\n" + std::string(kReportJs) + "</script>\n</body>\n</html>\n";
  return html;
}

}  // namespace qptwin::report
