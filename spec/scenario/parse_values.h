// Value syntax of .qps arguments (FORMAT.md): numbers, sge lists, remote refs, opcodes and
// `expect=` values. Pure functions; names are returned unresolved (the parser checks them).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "spec/vocabulary.h"
#include "spec/scenario/command.h"

namespace qptwin::scenario {

// Decimal or 0x-hex, at most `max`.
std::optional<uint64_t> ParseNumberAtMost(std::string_view s, uint64_t max);

// "MR:OFF:LEN[,MR:OFF:LEN...]"
std::optional<std::vector<SgeRef>> ParseSgeList(std::string_view s);
// "MR:OFF"
std::optional<RemoteRef> ParseRemote(std::string_view s);

// SEND|SEND_IMM|WRITE|WRITE_IMM|READ|CMP_SWP|FETCH_ADD, or a libibverbs name (RDMA_WRITE...).
std::optional<WrOpcode> ParseSendOp(std::string_view s);
std::string SendOpChoices();
// The short name used in narration ("WRITE_IMM").
std::string_view SendOpName(WrOpcode op);

// `expect=` for `verb`: ok | errno name | (query) a state | (poll) statuses | (events) event
// types; "none" is the empty list for poll/events. On failure *expected says what fits.
bool ParseExpect(Verb verb, std::string_view s, Expect* out, std::string* expected);

// Splits on `sep`, keeping empty parts.
std::vector<std::string_view> Split(std::string_view s, char sep);

}  // namespace qptwin::scenario
