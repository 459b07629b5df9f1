// qptwin table [--type T] [--format text|markdown|json]
#include <ostream>

#include "tools/cli/commands.h"
#include "tools/cli/flags.h"
#include "tools/cli/names.h"
#include "tools/cli/table_render.h"

namespace qptwin::cli {
namespace {

constexpr char kUsage[] =
    "usage: qptwin table [--type TYPE] [--format text|markdown|json]\n"
    "  every valid (from, to) pair per QP type with its required and optional attributes;\n"
    "  without --type: RC, UC, UD, XRC_SEND, XRC_RECV, RAW_PACKET, SMI, GSI.\n";

const std::vector<FlagSpec> kFlags = {{"--type"}, {"--format"}};

}  // namespace

int RunTable(const Args& args, std::istream& in, std::ostream& out, std::ostream& err) {
  std::string error;
  auto flags = ParseFlags(args, kFlags, &error);
  if (!flags) return BadInput(err, "table: " + error);
  if (flags->help) {
    out << kUsage;
    return kExitOk;
  }
  std::vector<QpType> types = TableQpTypes();
  if (flags->Has("--type")) {
    auto type = ParseQpTypeArg(flags->Get("--type"), &error);
    if (!type) return BadInput(err, "table: " + error);
    types = {*type};
  }
  const std::string format_name = flags->Get("--format", "text");
  auto format = ParseTableFormat(format_name);
  if (!format) {
    return BadInput(err, "table: unknown table format '" + format_name +
                             "' (valid: text, markdown, json)");
  }
  out << RenderTable(types, *format);
  return kExitOk;
}

}  // namespace qptwin::cli
