// The QP state-transition table (spec/qp_state_table.h) rendered for people and programs:
// for each QP type, each valid (from, to) pair with its required and optional attributes.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "spec/qp_state_table.h"

namespace qptwin::cli {

enum class TableFormat { kText, kMarkdown, kJson };

std::optional<TableFormat> ParseTableFormat(std::string_view s);  // text, markdown, json

// Can a QP of this type be in SQE? Only the device moves a QP there, on a send error of an
// unreliable service (IBTA 10.3.1: UC, UD and the UD-based SMI/GSI); reliable types go to ERR.
// The kernel table still lists SQE's transitions for every type.
bool CanBeInSqe(QpType type);

// The attribute names of a mask, in bit order ("PKEY_INDEX", "PORT", ...).
std::vector<std::string> AttrNames(AttrMask mask);

// text: aligned columns per type; markdown: one table per type; json: an object keyed by type
// name, each a list of {"from","to","required":[...],"optional":[...]}.
std::string RenderTable(const std::vector<QpType>& types, TableFormat format);

}  // namespace qptwin::cli
