#include "tools/cli/table_render.h"

#include <algorithm>

namespace qptwin::cli {
namespace {

struct Entry {
  QpState from;
  QpState to;
  AttrMask required;
  AttrMask optional;
};

std::vector<Entry> EntriesOf(QpType type) {
  std::vector<Entry> entries;
  const int t = static_cast<int>(type);
  for (QpState from : AllQpStates()) {
    for (QpState to : AllQpStates()) {
      const Transition& tr = TransitionOf(from, to);
      if (tr.valid) entries.push_back({from, to, tr.required[t], tr.optional[t]});
    }
  }
  return entries;
}

std::string Joined(AttrMask mask, std::string_view separator, std::string_view none) {
  if (mask == 0) return std::string(none);
  std::string out;
  for (const std::string& name : AttrNames(mask)) {
    if (!out.empty()) out += separator;
    out += name;
  }
  return out;
}

std::string Padded(std::string s, size_t width) {
  if (s.size() < width) s.append(width - s.size(), ' ');
  return s;
}

std::string Text(const std::vector<QpType>& types) {
  std::string out =
      "QP state transitions (Linux ib_modify_qp_is_ok). STATE is always allowed and is\n"
      "needed to change state; CUR_STATE only from RTR, RTS, SQD, SQE.\n";
  for (QpType type : types) {
    const std::vector<Entry> entries = EntriesOf(type);
    size_t width = std::string_view("REQUIRED").size();
    for (const Entry& e : entries) width = std::max(width, Joined(e.required, "|", "-").size());
    out += "\n";
    out += ToName(type);
    if (!CanBeInSqe(type)) out += " (never in SQE: its SQE rows are the kernel table's, unreachable)";
    out += "\n  FROM   TO     " + Padded("REQUIRED", width) + "  OPTIONAL\n";
    for (const Entry& e : entries) {
      out += "  " + Padded(std::string(ToName(e.from)), 7) + Padded(std::string(ToName(e.to)), 7) +
             Padded(Joined(e.required, "|", "-"), width) + "  " + Joined(e.optional, "|", "-") +
             "\n";
    }
  }
  return out;
}

std::string Markdown(const std::vector<QpType>& types) {
  std::string out;
  for (QpType type : types) {
    if (!out.empty()) out += "\n";
    out += "### " + std::string(ToName(type)) + "\n\n";
    out += "| from | to | required | optional |\n|---|---|---|---|\n";
    for (const Entry& e : EntriesOf(type)) {
      out += "| " + std::string(ToName(e.from)) + " | " + std::string(ToName(e.to)) + " | " +
             Joined(e.required, ", ", "-") + " | " + Joined(e.optional, ", ", "-") + " |\n";
    }
  }
  return out;
}

std::string JsonList(AttrMask mask) {
  std::string out = "[";
  for (const std::string& name : AttrNames(mask)) {
    if (out.size() > 1) out += ",";
    out += "\"" + name + "\"";  // attribute names are [A-Z0-9_]: nothing to escape
  }
  return out + "]";
}

std::string Json(const std::vector<QpType>& types) {
  std::string out = "{";
  for (size_t i = 0; i < types.size(); ++i) {
    out += (i ? ",\n" : "\n");
    out += "  \"" + std::string(ToName(types[i])) + "\": [";
    const std::vector<Entry> entries = EntriesOf(types[i]);
    for (size_t k = 0; k < entries.size(); ++k) {
      const Entry& e = entries[k];
      out += (k ? ",\n" : "\n");
      out += "    {\"from\": \"" + std::string(ToName(e.from)) + "\", \"to\": \"" +
             std::string(ToName(e.to)) + "\", \"required\": " + JsonList(e.required) +
             ", \"optional\": " + JsonList(e.optional) + "}";
    }
    out += "\n  ]";
  }
  return out + "\n}\n";
}

}  // namespace

bool CanBeInSqe(QpType type) {
  return type == QpType::kUc || type == QpType::kUd || type == QpType::kSmi ||
         type == QpType::kGsi;
}

std::optional<TableFormat> ParseTableFormat(std::string_view s) {
  if (s == "text") return TableFormat::kText;
  if (s == "markdown" || s == "md") return TableFormat::kMarkdown;
  if (s == "json") return TableFormat::kJson;
  return std::nullopt;
}

std::vector<std::string> AttrNames(AttrMask mask) {
  std::vector<std::string> names;
  for (int b = 0; b < 32; ++b) {
    if (mask & (1u << b)) names.push_back(FormatAttrMask(1u << b));
  }
  return names;
}

std::string RenderTable(const std::vector<QpType>& types, TableFormat format) {
  switch (format) {
    case TableFormat::kText:
      return Text(types);
    case TableFormat::kMarkdown:
      return Markdown(types);
    case TableFormat::kJson:
      return Json(types);
  }
  return {};
}

}  // namespace qptwin::cli
