#include "tools/cli/diagram_render.h"

#include <algorithm>

namespace qptwin::cli {
namespace {

constexpr char kHighlight[] = "color=\"#d62728\", fontcolor=\"#d62728\", penwidth=2.5";

std::string Quoted(std::string_view s) { return "\"" + std::string(s) + "\""; }

std::string Names(AttrMask mask, std::string_view separator) {
  std::string out;
  for (int b = 0; b < 32; ++b) {
    if (!(mask & (1u << b))) continue;
    if (!out.empty()) out += separator;
    out += FormatAttrMask(1u << b);
  }
  return out;
}

bool OnPath(const std::vector<QpState>& path, QpState from, QpState to) {
  for (size_t i = 0; i + 1 < path.size(); ++i) {
    if (path[i] == from && path[i + 1] == to) return true;
  }
  return false;
}

std::string EdgeAttributes(QpType type, QpState from, QpState to, bool highlighted) {
  const Transition& tr = TransitionOf(from, to);
  const AttrMask required = tr.required[static_cast<int>(type)];
  const AttrMask optional = tr.optional[static_cast<int>(type)];
  std::vector<std::string> attrs;
  if (required) {
    attrs.push_back("label=" + Quoted(Names(required, "\\n")));
  } else if (from == to) {
    attrs.push_back(std::string("label=") + (optional ? "\"optional only\"" : "\"no attributes\""));
  }
  if (optional) attrs.push_back("tooltip=" + Quoted("optional: " + Names(optional, "|")));
  const bool to_sink = from != to && (to == QpState::kReset || to == QpState::kErr);
  if (highlighted) {
    attrs.push_back(kHighlight);
  } else if (to_sink) {
    attrs.push_back("color=gray60");
  }
  std::string out;
  for (const std::string& a : attrs) out += (out.empty() ? "" : ", ") + a;
  return out.empty() ? "" : " [" + out + "]";
}

}  // namespace

std::string RenderDot(QpType type, const std::vector<QpState>& highlight_path) {
  const std::string name(ToName(type));
  std::vector<QpState> states;
  for (QpState s : AllQpStates()) {
    if (s != QpState::kSqe || CanBeInSqe(type)) states.push_back(s);
  }
  auto drawn = [&states](QpState s) {
    return std::find(states.begin(), states.end(), s) != states.end();
  };
  auto in_path = [&highlight_path](QpState s) {
    return std::find(highlight_path.begin(), highlight_path.end(), s) != highlight_path.end();
  };

  std::string out = "digraph " + Quoted("qp_states_" + name) + " {\n";
  out += "  label=" +
         Quoted(name + " QP states: solid = ibv_modify_qp (label: required attributes), "
                       "dashed = entered by the device") +
         ";\n  labelloc=t;\n  fontname=\"Helvetica\";\n";
  out += "  node [shape=ellipse, fontname=\"Helvetica\"];\n";
  out += "  edge [fontname=\"Helvetica\", fontsize=10];\n";
  for (QpState s : states) {
    std::vector<std::string> attrs;
    if (s == QpState::kSqe) attrs.push_back("label=\"SQE\\n(device-entered)\", style=dashed");
    if (in_path(s)) attrs.push_back(kHighlight);
    std::string joined;
    for (const std::string& a : attrs) joined += (joined.empty() ? "" : ", ") + a;
    out += "  " + Quoted(ToName(s)) + (joined.empty() ? "" : " [" + joined + "]") + ";\n";
  }
  out += "  { rank=same; \"RTS\"; \"SQD\";" + std::string(CanBeInSqe(type) ? " \"SQE\";" : "") +
         " }\n";
  out += "  \"any state\" [shape=plaintext, fontcolor=gray40];\n";

  for (QpState from : states) {
    for (QpState to : states) {
      if (!TransitionOf(from, to).valid) continue;
      out += "  " + Quoted(ToName(from)) + " -> " + Quoted(ToName(to)) +
             EdgeAttributes(type, from, to, OnPath(highlight_path, from, to)) + ";\n";
    }
  }
  if (CanBeInSqe(type)) {
    out += "  \"RTS\" -> \"SQE\" [style=dashed, label=\"send error (device)\"];\n";
  }
  out += "  \"any state\" -> \"ERR\" [style=dashed, color=gray40, label=\"error (device)\"];\n";
  for (size_t i = 0; i + 1 < highlight_path.size(); ++i) {
    const QpState from = highlight_path[i], to = highlight_path[i + 1];
    if (TransitionOf(from, to).valid && drawn(from) && drawn(to)) continue;
    out += "  " + Quoted(ToName(from)) + " -> " + Quoted(ToName(to)) +
           " [style=dotted, label=\"not a transition\", " + kHighlight + "];\n";
  }
  return out + "}\n";
}

}  // namespace qptwin::cli
