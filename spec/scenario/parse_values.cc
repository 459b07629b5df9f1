#include "spec/scenario/parse_values.h"

#include <algorithm>
#include <array>
#include <cerrno>

namespace qptwin::scenario {
namespace {

constexpr std::array<NamedValue<WrOpcode>, 10> kSendOps{{
    {WrOpcode::kSend, "SEND"},
    {WrOpcode::kSendWithImm, "SEND_IMM"},
    {WrOpcode::kRdmaWrite, "WRITE"},
    {WrOpcode::kRdmaWriteWithImm, "WRITE_IMM"},
    {WrOpcode::kRdmaRead, "READ"},
    {WrOpcode::kAtomicCmpAndSwp, "CMP_SWP"},
    {WrOpcode::kAtomicFetchAndAdd, "FETCH_ADD"},
    {WrOpcode::kBindMw, "BIND_MW"},
    {WrOpcode::kLocalInv, "LOCAL_INV"},
    {WrOpcode::kSendWithInv, "SEND_WITH_INV"},
}};

bool IsName(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {  // no ':', ',' or '=' (find_first_of calls memchr per character)
    if (c == ':' || c == ',' || c == '=') return false;
  }
  return true;
}

}  // namespace

std::vector<std::string_view> Split(std::string_view s, char sep) {
  std::vector<std::string_view> parts;
  for (;;) {
    size_t cut = s.find(sep);
    parts.push_back(s.substr(0, cut));
    if (cut == s.npos) return parts;
    s.remove_prefix(cut + 1);
  }
}

std::optional<uint64_t> ParseNumberAtMost(std::string_view s, uint64_t max) {
  auto v = ParseUnsigned(s);
  if (!v || *v > max) return std::nullopt;
  return v;
}

namespace {

// Up to N fields of `s` split at `sep` into f[]; the number of fields (N + 1: too many).
template <size_t N>
size_t SplitInto(std::string_view s, char sep, std::string_view (&f)[N]) {
  size_t n = 0;
  for (;;) {
    const size_t cut = s.find(sep);
    if (n == N) return N + 1;
    f[n++] = s.substr(0, cut);
    if (cut == s.npos) return n;
    s.remove_prefix(cut + 1);
  }
}

}  // namespace

std::optional<std::vector<SgeRef>> ParseSgeList(std::string_view s) {
  std::vector<SgeRef> out;
  out.reserve(1 + static_cast<size_t>(std::count(s.begin(), s.end(), ',')));
  for (std::string_view rest = s;;) {  // the items between commas, as Split(s, ',') gives
    const size_t cut = rest.find(',');
    std::string_view f[3];
    if (SplitInto(rest.substr(0, cut), ':', f) != 3 || !IsName(f[0])) return std::nullopt;
    auto off = ParseNumberAtMost(f[1], UINT64_MAX);
    auto len = ParseNumberAtMost(f[2], UINT32_MAX);
    if (!off || !len) return std::nullopt;
    out.push_back(SgeRef{std::string(f[0]), *off, static_cast<uint32_t>(*len)});
    if (cut == rest.npos) break;
    rest.remove_prefix(cut + 1);
  }
  return out;
}

std::optional<RemoteRef> ParseRemote(std::string_view s) {
  std::string_view f[2];
  if (SplitInto(s, ':', f) != 2 || !IsName(f[0])) return std::nullopt;
  auto off = ParseNumberAtMost(f[1], UINT64_MAX);
  if (!off) return std::nullopt;
  return RemoteRef{std::string(f[0]), *off};
}

std::optional<WrOpcode> ParseSendOp(std::string_view s) {
  for (const auto& nv : kSendOps) {
    if (EqualsIgnoreCase(nv.name, s)) return nv.value;
  }
  if (ParseUnsigned(s)) return std::nullopt;  // numbers are not opcodes here
  return ParseWrOpcode(s);
}

std::string SendOpChoices() {
  std::string out;
  for (const auto& nv : kSendOps) {
    if (!out.empty()) out += '|';
    out += nv.name;
  }
  return out;
}

std::string_view SendOpName(WrOpcode op) {
  for (const auto& nv : kSendOps) {
    if (nv.value == op) return nv.name;
  }
  return ToName(op);
}

bool ParseExpect(Verb verb, std::string_view s, Expect* out, std::string* expected) {
  out->text = std::string(s);
  if (EqualsIgnoreCase(s, "ok")) {
    out->kind = Expect::Kind::kOk;
    return true;
  }
  if (auto e = ParseErrno(s)) {
    out->kind = Expect::Kind::kErrno;
    out->err = *e;
    return true;
  }
  if (verb == Verb::kQuery) {
    if (auto st = ParseQpState(s); st && !ParseUnsigned(s)) {
      out->kind = Expect::Kind::kState;
      out->state = *st;
      return true;
    }
    *expected = "ok, an errno name (EINVAL...) or a QP state (" + QpStateChoices() + ")";
    return false;
  }
  bool none = EqualsIgnoreCase(s, "none");
  if (verb == Verb::kPoll) {
    out->kind = Expect::Kind::kStatuses;
    if (none) return true;
    for (std::string_view part : Split(s, ',')) {
      auto st = ParseWcStatus(part);
      if (!st || ParseUnsigned(part)) {
        *expected = "ok, an errno name, none, or completion statuses joined by ',' "
                    "(SUCCESS,WR_FLUSH_ERR...)";
        return false;
      }
      out->statuses.push_back(*st);
    }
    return true;
  }
  if (verb == Verb::kEvents) {
    out->kind = Expect::Kind::kEvents;
    if (none) return true;
    for (std::string_view part : Split(s, ',')) {
      auto ev = ParseEventType(part);
      if (!ev || ParseUnsigned(part)) {
        *expected = "none or async event types joined by ',' (SQ_DRAINED,QP_FATAL...)";
        return false;
      }
      out->events.push_back(*ev);
    }
    return true;
  }
  *expected = "ok or an errno name (EINVAL, ENOMEM, EBUSY, ...)";
  return false;
}

}  // namespace qptwin::scenario
