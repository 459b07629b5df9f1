#include "tools/report/timeline_svg.h"

#include <map>
#include <set>
#include <vector>

namespace qptwin::report {
namespace {

using scenario::RunResult;
using scenario::StateEvent;
using scenario::Step;
using scenario::Wqe;

constexpr int kLabelWidth = 170;  // px, left column with row names
constexpr int kColWidth = 22;     // px per step
constexpr int kRowHeight = 18;
constexpr int kHeaderHeight = 34;

std::string StateColor(QpState s) {
  switch (s) {
    case QpState::kReset:
      return "#d9d9d9";
    case QpState::kInit:
      return "#c6dbef";
    case QpState::kRtr:
      return "#9ecae1";
    case QpState::kRts:
      return "#74c476";
    case QpState::kSqd:
      return "#fdd0a2";
    case QpState::kSqe:
      return "#fdae6b";
    case QpState::kErr:
      return "#fb6a4a";
  }
  return "#ffffff";
}

// The bar's CSS class: how the WR ended.
std::string EndClass(const Wqe& w) {
  switch (w.end) {
    case Wqe::End::kCqe:
      if (w.status == WcStatus::kSuccess) return "wqe-ok";
      return w.status == WcStatus::kWrFlushErr ? "wqe-flush" : "wqe-err";
    case Wqe::End::kImplicit:
      return "wqe-implicit";
    case Wqe::End::kDiscarded:
    case Wqe::End::kDestroyed:
      return "wqe-gone";
    case Wqe::End::kOutstanding:
      return "wqe-open";
  }
  return "";
}

std::string EndText(const Wqe& w) {
  switch (w.end) {
    case Wqe::End::kCqe:
      return "CQE " + std::string(ToName(w.status)) + " on " + w.cq;
    case Wqe::End::kImplicit:
      return "no CQE (unsignaled), implied by the later CQE of its SQ (" + w.completed_by +
             ", line " + std::to_string(w.end_line) + ")";
    case Wqe::End::kDiscarded:
      return "discarded by RESET, no CQE";
    case Wqe::End::kDestroyed:
      return w.queue == "SRQ" ? "gone with its destroyed SRQ" : "gone with its destroyed QP";
    case Wqe::End::kOutstanding:
      return "no CQE seen by the end";
  }
  return "";
}

std::string Us(uint64_t ns) {
  return std::to_string(ns / 1000) + "." + std::to_string(ns % 1000 / 100) + " us";
}

std::string Text(int x, int y, const std::string& cls, const std::string& s) {
  return "<text x=\"" + std::to_string(x) + "\" y=\"" + std::to_string(y) + "\" class=\"" + cls +
         "\">" + Escape(s) + "</text>\n";
}

}  // namespace

std::string Escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string RenderTimelineSvg(const RunResult& result) {
  std::map<int, int> col;  // .qps line -> column
  for (size_t i = 0; i < result.steps.size(); ++i) col[result.steps[i].line] = static_cast<int>(i);
  const int ncols = static_cast<int>(result.steps.size());
  auto x_of = [&](int line) { return kLabelWidth + col[line] * kColWidth; };

  // QPs in order of creation, each with its WRs.
  std::vector<std::string> qps;
  std::set<std::string> seen;
  for (const StateEvent& e : result.trace.states) {
    if (seen.insert(e.qp).second) qps.push_back(e.qp);
  }
  std::map<std::string, std::vector<const Wqe*>> wrs_of;
  for (const Wqe& w : result.trace.wqes) {
    std::string owner = w.qp.substr(0, w.qp.find("->"));
    if (!seen.count(owner)) {  // posted to an SRQ: a lane of its own
      seen.insert(owner);
      qps.push_back(owner);
    }
    wrs_of[owner].push_back(&w);
  }

  std::string body;
  int y = kHeaderHeight;
  for (const std::string& q : qps) {
    // The state band.
    std::vector<const StateEvent*> events;
    for (const StateEvent& e : result.trace.states) {
      if (e.qp == q) events.push_back(&e);
    }
    body += "<g class=\"lane\" data-qp=\"" + Escape(q) + "\">\n";
    body += Text(4, y + 12, "lane-label", q + (events.empty() ? " (SRQ)" : " state"));
    for (size_t i = 0; i < events.size(); ++i) {
      const StateEvent& e = *events[i];
      const int x0 = x_of(e.line);
      const int x1 = i + 1 < events.size() ? x_of(events[i + 1]->line) : x_of(result.steps.back().line) + kColWidth;
      if (x1 <= x0 && i + 1 < events.size()) continue;  // superseded within the same step
      const int w = std::max(x1 - x0, kColWidth / 2);
      body += "<rect class=\"state-band\" x=\"" + std::to_string(x0) + "\" y=\"" +
              std::to_string(y) + "\" width=\"" + std::to_string(w) + "\" height=\"" +
              std::to_string(kRowHeight - 2) + "\" fill=\"" + StateColor(e.to) + "\"><title>" +
              Escape(q + ": " + std::string(ToName(e.to)) + " from L" + std::to_string(e.line) +
                     " at " + Us(e.time_ns) + " (" + e.cause + ")") +
              "</title></rect>\n";
      if (w >= 30) body += Text(x0 + 3, y + 11, "state-name", std::string(ToName(e.to)));
    }
    y += kRowHeight;
    for (const Wqe* w : wrs_of[q]) {
      const int x0 = x_of(w->post_line);
      const int end_line = w->end == Wqe::End::kOutstanding ? result.steps.back().line : w->end_line;
      const int x1 = x_of(end_line) + kColWidth;
      body += Text(14, y + 11, "wr-label",
                   w->queue + " wr_id=" + std::to_string(w->wr_id) + " " + w->opcode);
      body += "<rect class=\"wqe " + EndClass(*w) + "\" x=\"" + std::to_string(x0 + 2) +
              "\" y=\"" + std::to_string(y + 3) + "\" width=\"" + std::to_string(x1 - x0 - 4) +
              "\" height=\"" + std::to_string(kRowHeight - 7) + "\"><title>" +
              Escape(w->qp + " " + w->queue + " wr_id=" + std::to_string(w->wr_id) + " " +
                     w->opcode + (w->signaled ? "" : " (unsignaled)") + ": posted L" +
                     std::to_string(w->post_line) + " at " + Us(w->post_ns) + "; " + EndText(*w) +
                     (w->end == Wqe::End::kOutstanding
                          ? ""
                          : " at L" + std::to_string(w->end_line) + ", " + Us(w->end_ns))) +
              "</title></rect>\n";
      if (w->end == Wqe::End::kCqe) {
        body += "<circle class=\"cqe " + EndClass(*w) + "\" cx=\"" + std::to_string(x1 - 4) +
                "\" cy=\"" + std::to_string(y + 7) + "\" r=\"4\"/>\n";
      }
      y += kRowHeight;
    }
    body += "</g>\n";
    y += 4;
  }

  // Column headers: the .qps line of every step, and a grid line.
  std::string head;
  for (int i = 0; i < ncols; ++i) {
    const Step& s = result.steps[i];
    const int x = kLabelWidth + i * kColWidth;
    head += "<g class=\"col\"><rect class=\"col-bg" + std::string(s.failures.empty() ? "" : " col-fail") +
            "\" x=\"" + std::to_string(x) + "\" y=\"0\" width=\"" + std::to_string(kColWidth) +
            "\" height=\"" + std::to_string(y) + "\"><title>" +
            Escape("L" + std::to_string(s.line) + " " + s.text + " @ " + Us(s.start_ns)) +
            "</title></rect>" + Text(x + 3, 12 + (i % 2) * 12, "col-label", std::to_string(s.line)) +
            "</g>\n";
  }
  const int width = kLabelWidth + ncols * kColWidth + 4;
  return "<svg class=\"timeline\" width=\"" + std::to_string(width) + "\" height=\"" +
         std::to_string(y) + "\" viewBox=\"0 0 " + std::to_string(width) + " " +
         std::to_string(y) + "\" role=\"img\" aria-label=\"timeline of work requests and QP states\">\n" +
         head + body + "</svg>\n";
}

}  // namespace qptwin::report
