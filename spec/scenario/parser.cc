#include "spec/scenario/parser.h"

#include <cstdio>
#include <vector>

#include "spec/scenario/line_parser.h"
#include "spec/scenario/parse_values.h"
#include "spec/scenario/verb_table.h"

namespace qptwin::scenario {
namespace {

std::string_view Trim(std::string_view s) {
  size_t b = s.find_first_not_of(" \t\r");
  if (b == s.npos) return {};
  size_t e = s.find_last_not_of(" \t\r");
  return s.substr(b, e - b + 1);
}

void ParseModify(LineParser& p, Command* c) {
  QpAttr& a = c->attr;
  // Every key modify takes, looked up in one pass; then handled in this order (which
  // decides the error a line with several bad values gets).
  enum Key {
    kState, kCurState, kPkeyIndex, kPort, kQkey, kRqPsn, kSqPsn, kTimeout, kRetryCnt,
    kRnrRetry, kMinRnrTimer, kMaxRdAtomic, kMaxDestRdAtomic, kEnSqd, kAccess, kPathMtu,
    kDest, kAv, kDestQpn, kCapKey, kKeys
  };
  static constexpr std::string_view kNames[kKeys] = {
      "state", "cur_state", "pkey_index", "port", "qkey", "rq_psn", "sq_psn", "timeout",
      "retry_cnt", "rnr_retry", "min_rnr_timer", "max_rd_atomic", "max_dest_rd_atomic",
      "en_sqd_async_notify", "access", "path_mtu", "dest", "av", "dest_qpn", "cap"};
  std::string_view values[kKeys];
  const uint64_t present = p.Lookup(kNames, kKeys, values);
  auto has = [present](Key k) { return (present >> k) & 1; };
  auto state = [&](Key k, AttrMask bit, QpState* out) {
    if (!has(k)) return;
    auto s = ParseQpState(values[k]);
    if (!s) return p.Fail("bad " + std::string(kNames[k]) + ": expected one of " + QpStateChoices());
    *out = *s;
    c->mask |= bit;
  };
  state(kState, attr::kState, &a.qp_state);
  state(kCurState, attr::kCurState, &a.cur_qp_state);
  struct NumAttr {
    Key key;
    AttrMask bit;
    uint64_t max;
    uint32_t* out32;
    uint16_t* out16;
    uint8_t* out8;
  };
  const NumAttr nums[] = {
      {kPkeyIndex, attr::kPkeyIndex, 0xffff, nullptr, &a.pkey_index, nullptr},
      {kPort, attr::kPort, 0xff, nullptr, nullptr, &a.port_num},
      {kQkey, attr::kQkey, 0xffffffff, &a.qkey, nullptr, nullptr},
      {kRqPsn, attr::kRqPsn, 0xffffffff, &a.rq_psn, nullptr, nullptr},
      {kSqPsn, attr::kSqPsn, 0xffffffff, &a.sq_psn, nullptr, nullptr},
      {kTimeout, attr::kTimeout, 0xff, nullptr, nullptr, &a.timeout},
      {kRetryCnt, attr::kRetryCnt, 0xff, nullptr, nullptr, &a.retry_cnt},
      {kRnrRetry, attr::kRnrRetry, 0xff, nullptr, nullptr, &a.rnr_retry},
      {kMinRnrTimer, attr::kMinRnrTimer, 0xff, nullptr, nullptr, &a.min_rnr_timer},
      {kMaxRdAtomic, attr::kMaxQpRdAtomic, 0xff, nullptr, nullptr, &a.max_rd_atomic},
      {kMaxDestRdAtomic, attr::kMaxDestRdAtomic, 0xff, nullptr, nullptr, &a.max_dest_rd_atomic},
  };
  for (const NumAttr& n : nums) {
    if (!has(n.key)) continue;
    c->mask |= n.bit;
    if (n.out32) p.NumberText(kNames[n.key], values[n.key], n.max, n.out32);
    if (n.out16) p.NumberText(kNames[n.key], values[n.key], n.max, n.out16);
    if (n.out8) p.NumberText(kNames[n.key], values[n.key], n.max, n.out8);
  }
  if (has(kEnSqd)) {
    c->mask |= attr::kEnSqdAsyncNotify;
    p.NumberText(kNames[kEnSqd], values[kEnSqd], 1, &a.en_sqd_async_notify);
  }
  if (has(kAccess)) {
    auto f = ParseAccessFlags(values[kAccess]);
    if (!f) return p.Fail("bad access: expected LOCAL_WRITE|REMOTE_WRITE|REMOTE_READ|REMOTE_ATOMIC or 0");
    a.qp_access_flags = *f;
    c->mask |= attr::kAccessFlags;
  }
  if (has(kPathMtu)) {
    auto m = ParseMtu(values[kPathMtu]);
    if (!m) return p.Fail("bad path_mtu: expected 256, 512, 1024, 2048, 4096 or IBV_MTU_*");
    a.path_mtu = *m;
    c->mask |= attr::kPathMtu;
  }
  if (has(kDest)) {
    p.Ref(values[kDest], {ObjectKind::kQp}, &c->dest);
    c->mask |= attr::kAv | attr::kDestQpn;
  }
  // One of the two bits alone (a replayed fuzz sequence may drop the other).
  if (has(kAv)) {
    p.Ref(values[kAv], {ObjectKind::kQp}, &c->dest);
    c->mask |= attr::kAv;
  }
  if (has(kDestQpn)) {
    p.Ref(values[kDestQpn], {ObjectKind::kQp}, &c->dest);
    c->mask |= attr::kDestQpn;
  }
  if (has(kCapKey)) {  // cap=SEND_WR,RECV_WR,SEND_SGE,RECV_SGE,INLINE (IBV_QP_CAP)
    unsigned long long v[5];
    char extra;
    const std::string text(values[kCapKey]);
    if (std::sscanf(text.c_str(), "%llu,%llu,%llu,%llu,%llu%c", &v[0], &v[1], &v[2], &v[3], &v[4],
                    &extra) != 5) {
      return p.Fail("bad cap: expected SEND_WR,RECV_WR,SEND_SGE,RECV_SGE,INLINE");
    }
    a.cap = QpCap{static_cast<uint32_t>(v[0]), static_cast<uint32_t>(v[1]),
                  static_cast<uint32_t>(v[2]), static_cast<uint32_t>(v[3]),
                  static_cast<uint32_t>(v[4])};
    c->mask |= attr::kCap;
  }
}

// mw=MW bind=MR:OFF:LEN access=FLAGS: a bind (bind_mw, post_send op=BIND_MW).
void ParseWindowArgs(LineParser& p, Command* c) {
  p.RefKey("mw", {ObjectKind::kMw}, &c->mw);
  if (p.Has("bind")) {
    auto list = ParseSgeList(p.Value("bind"));
    if (!list || list->size() != 1) return p.Fail("bad bind: expected MR:OFF:LEN");
    p.Ref((*list)[0].mr, {ObjectKind::kMr}, &(*list)[0].mr);
    c->bind = (*list)[0];
  }
  if (p.Has("access")) {
    auto f = ParseAccessFlags(p.Value("access"));
    if (!f) {
      return p.Fail("bad access: expected REMOTE_WRITE|REMOTE_READ|REMOTE_ATOMIC|ZERO_BASED or 0");
    }
    c->access = *f;
  }
}

void ParsePostSend(LineParser& p, Command* c) {
  // The keys below looked up in one pass (as ParseModify), handled in this order.
  enum Key { kWrId, kOp, kFlags, kImm, kCompare, kAdd, kSwap, kQkey, kRemote, kAh, kKeys };
  static constexpr std::string_view kNames[kKeys] = {
      "wr_id", "op", "flags", "imm", "compare", "add", "swap", "qkey", "remote", "ah"};
  std::string_view values[kKeys];
  const uint64_t present = p.Lookup(kNames, kKeys, values);
  auto has = [present](Key k) { return (present >> k) & 1; };
  auto number = [&](Key k, uint64_t max, auto* out) {
    if (has(k)) p.NumberText(kNames[k], values[k], max, out);
  };
  SendWr& wr = c->send;
  number(kWrId, UINT64_MAX, &wr.wr_id);
  c->wr_id = wr.wr_id;
  const std::string_view op_text = has(kOp) ? values[kOp] : std::string_view();
  auto op = ParseSendOp(op_text);
  if (!op) return p.Fail("bad op '" + std::string(op_text) + "': expected " + SendOpChoices());
  wr.opcode = *op;
  if (has(kFlags)) {
    auto f = ParseSendFlags(values[kFlags]);
    if (!f) return p.Fail("bad flags: expected SIGNALED|FENCE|INLINE|SOLICITED or 0");
    wr.send_flags = *f;
  }
  number(kImm, UINT32_MAX, &wr.imm_data);
  if (has(kCompare) && has(kAdd)) {
    return p.Fail("compare= and add= both set compare_add: give one (CMP_SWP: compare, "
                  "FETCH_ADD: add)");
  }
  number(kCompare, UINT64_MAX, &wr.compare_add);
  number(kAdd, UINT64_MAX, &wr.compare_add);
  number(kSwap, UINT64_MAX, &wr.swap);
  if (has(kQkey)) {
    number(kQkey, UINT32_MAX, &wr.remote_qkey);
    c->remote_qkey_given = true;
  }
  if (has(kRemote)) {
    auto r = ParseRemote(values[kRemote]);
    if (!r) return p.Fail("bad remote: expected MR:OFF or MW:OFF");
    p.Ref(r->mr, {ObjectKind::kMr, ObjectKind::kMw}, &r->mr);
    c->remote = *r;
  }
  if (has(kAh)) p.Ref(values[kAh], {ObjectKind::kQp}, &c->ah);
  ParseWindowArgs(p, c);
  p.RefKey("inv", {ObjectKind::kMw, ObjectKind::kMr}, &c->inv);  // a region's rkey: refused
}

void ParseSges(LineParser& p, Command* c) {
  if (!p.Has("sge")) return;
  auto list = ParseSgeList(p.Value("sge"));
  if (!list) return p.Fail("bad sge: expected MR:OFF:LEN[,MR:OFF:LEN...]");
  for (SgeRef& s : *list) p.Ref(s.mr, {ObjectKind::kMr}, &s.mr);
  c->sges = std::move(*list);
  if (!p.Has("last_sge")) return;
  auto last = ParseSgeList(p.Value("last_sge"));
  if (!last) return p.Fail("bad last_sge: expected MR:OFF:LEN[,MR:OFF:LEN...]");
  for (SgeRef& s : *last) p.Ref(s.mr, {ObjectKind::kMr}, &s.mr);
  c->last_sges = std::move(*last);
}

void ParseQp(LineParser& p, Command* c) {
  // Every key qp takes, looked up in one pass (as ParseModify), handled in this order.
  enum Key {
    kType, kPd, kSendCq, kRecvCq, kSrq, kMaxSendWr, kMaxRecvWr, kMaxSendSge, kMaxRecvSge,
    kMaxInline, kSqSigAll, kKeys
  };
  static constexpr std::string_view kNames[kKeys] = {
      "type", "pd", "send_cq", "recv_cq", "srq", "max_send_wr", "max_recv_wr", "max_send_sge",
      "max_recv_sge", "max_inline", "sq_sig_all"};
  std::string_view values[kKeys];
  const uint64_t present = p.Lookup(kNames, kKeys, values);
  auto has = [present](Key k) { return (present >> k) & 1; };
  const std::string_view type_text = has(kType) ? values[kType] : std::string_view();
  auto type = ParseQpType(type_text);
  if (!type || ParseUnsigned(type_text)) {
    return p.Fail("bad type '" + std::string(type_text) + "': expected RC, UC or UD (or " +
                  QpTypeChoices() + ")");
  }
  c->init.qp_type = *type;
  if (has(kPd)) p.Ref(values[kPd], {ObjectKind::kPd}, &c->pd);
  if (has(kSendCq)) p.Ref(values[kSendCq], {ObjectKind::kCq}, &c->send_cq);
  if (has(kRecvCq)) p.Ref(values[kRecvCq], {ObjectKind::kCq}, &c->recv_cq);
  if (has(kSrq)) p.Ref(values[kSrq], {ObjectKind::kSrq}, &c->srq);
  QpCap& cap = c->init.cap;
  cap.max_send_wr = cap.max_recv_wr = 16;
  cap.max_send_sge = cap.max_recv_sge = 1;
  auto number = [&](Key k, uint64_t max, auto* out) {
    if (has(k)) p.NumberText(kNames[k], values[k], max, out);
  };
  number(kMaxSendWr, UINT32_MAX, &cap.max_send_wr);
  number(kMaxRecvWr, UINT32_MAX, &cap.max_recv_wr);
  number(kMaxSendSge, UINT32_MAX, &cap.max_send_sge);
  number(kMaxRecvSge, UINT32_MAX, &cap.max_recv_sge);
  number(kMaxInline, UINT32_MAX, &cap.max_inline_data);
  number(kSqSigAll, 1, &c->init.sq_sig_all);
}

// The verb-specific part of one line.
void ParseBody(LineParser& p, Command* c, Scenario* sc, std::string* current_device) {
  switch (c->verb) {
    case Verb::kDevice:
      p.Declare(c->name, ObjectKind::kDevice);
      c->profile = std::string(p.Value("profile"));
      if (sc->device_lines++ == 0) sc->first_profile = c->profile;
      *current_device = c->name;
      return;
    case Verb::kPd:
    case Verb::kCq:
      p.Declare(c->name, c->verb == Verb::kPd ? ObjectKind::kPd : ObjectKind::kCq);
      if (p.Has("dev")) {
        p.RefKey("dev", {ObjectKind::kDevice}, &c->device);
      } else if (current_device->empty()) {
        p.Fail("no device yet: start the scenario with 'device NAME'");
      } else {
        c->device = *current_device;
      }
      c->cqe = 16;
      p.Number("cqe", INT32_MAX, &c->cqe);
      p.RefKey("channel", {ObjectKind::kChannel}, &c->channel);
      return;
    case Verb::kMr:
      p.Declare(c->name, ObjectKind::kMr);
      p.RefKey("pd", {ObjectKind::kPd}, &c->pd);
      p.Number("len", UINT32_MAX, &c->length);
      if (p.Has("access")) {
        auto f = ParseAccessFlags(p.Value("access"));
        if (!f) return p.Fail("bad access: expected LOCAL_WRITE|REMOTE_WRITE|REMOTE_READ|REMOTE_ATOMIC or 0");
        c->access = *f;
      }
      return;
    case Verb::kSrq:
      p.Declare(c->name, ObjectKind::kSrq);
      p.RefKey("pd", {ObjectKind::kPd}, &c->pd);
      c->max_wr = 16;
      c->max_sge = 1;
      p.Number("max_wr", UINT32_MAX, &c->max_wr);
      p.Number("max_sge", UINT32_MAX, &c->max_sge);
      return;
    case Verb::kQp:
      p.Declare(c->name, ObjectKind::kQp);
      return ParseQp(p, c);
    case Verb::kModify:
      p.Ref(c->name, {ObjectKind::kQp}, &c->name);
      return ParseModify(p, c);
    case Verb::kQuery:
      return p.Ref(c->name, {ObjectKind::kQp}, &c->name);
    case Verb::kPostSend:
      p.Ref(c->name, {ObjectKind::kQp}, &c->name);
      p.Number("count", 4096, &c->count);
      ParseSges(p, c);
      return ParsePostSend(p, c);
    case Verb::kPostRecv:
      p.Ref(c->name, {ObjectKind::kQp, ObjectKind::kSrq}, &c->name);
      p.Number("wr_id", UINT64_MAX, &c->wr_id);
      p.Number("count", 4096, &c->count);
      return ParseSges(p, c);
    case Verb::kPoll:
      p.Ref(c->name, {ObjectKind::kCq}, &c->name);
      p.Number("n", 65536, &c->n);
      p.Number("timeout_ms", 3600 * 1000, &c->timeout_ms);
      return;
    case Verb::kEvents:
      if (p.Has("wait")) {
        auto ev = ParseEventType(p.Value("wait"));
        if (!ev) return p.Fail("bad wait: expected an async event type (SQ_DRAINED, ...)");
        c->wait_for = *ev;
      }
      p.Number("timeout_ms", 3600 * 1000, &c->timeout_ms);
      return;
    case Verb::kFill:
    case Verb::kCheck:
      c->name = std::string(p.Positional(0));
      p.Ref(c->name, {ObjectKind::kMr}, &c->name);
      p.NumberText("OFF", p.Positional(1), UINT32_MAX, &c->offset);
      p.NumberText("LEN", p.Positional(2), UINT32_MAX, &c->length);
      p.NumberText("BYTE", p.Positional(3), 255, &c->byte);
      return;
    case Verb::kDestroy:
      return p.Ref(c->name,
                   {ObjectKind::kDevice, ObjectKind::kPd, ObjectKind::kMr, ObjectKind::kCq,
                    ObjectKind::kSrq, ObjectKind::kQp, ObjectKind::kChannel, ObjectKind::kMw},
                   &c->name);
    case Verb::kAllocMw: {
      p.Declare(c->name, ObjectKind::kMw);
      p.RefKey("pd", {ObjectKind::kPd}, &c->pd);
      uint32_t type = 1;
      p.Number("type", 255, &type);  // any number: the device judges (EINVAL beyond 2)
      c->mw_type = static_cast<MwType>(type);
      return;
    }
    case Verb::kBindMw:
      p.Ref(c->name, {ObjectKind::kQp}, &c->name);
      p.Number("wr_id", UINT64_MAX, &c->send.wr_id);
      c->wr_id = c->send.wr_id;
      c->send.opcode = WrOpcode::kBindMw;
      if (p.Has("flags")) {
        auto f = ParseSendFlags(p.Value("flags"));
        if (!f) return p.Fail("bad flags: expected SIGNALED|FENCE or 0");
        c->send.send_flags = *f;
      }
      return ParseWindowArgs(p, c);
    case Verb::kDeallocMw:
      return p.Ref(c->name, {ObjectKind::kMw}, &c->name);
    case Verb::kQueryDevice:
    case Verb::kQueryPort:
      if (p.Has("dev")) {
        p.RefKey("dev", {ObjectKind::kDevice}, &c->device);
      } else if (current_device->empty()) {
        p.Fail("no device yet: start the scenario with 'device NAME'");
      } else {
        c->device = *current_device;
      }
      p.Number("port", 255, &c->port);
      return;
    case Verb::kQuerySrq:
      return p.Ref(c->name, {ObjectKind::kSrq}, &c->name);
    case Verb::kModifySrq:
      p.Ref(c->name, {ObjectKind::kSrq}, &c->name);
      if (p.Has("max_wr")) c->srq_mask |= srq_attr::kMaxWr;
      if (p.Has("srq_limit")) c->srq_mask |= srq_attr::kLimit;
      p.Number("max_wr", UINT32_MAX, &c->srq_attr.max_wr);
      p.Number("srq_limit", UINT32_MAX, &c->srq_attr.srq_limit);
      return;
    case Verb::kResizeCq:
      p.Ref(c->name, {ObjectKind::kCq}, &c->name);
      p.Number("cqe", INT32_MAX, &c->cqe);
      return;
    case Verb::kChannel:
      p.Declare(c->name, ObjectKind::kChannel);
      if (p.Has("dev")) {
        p.RefKey("dev", {ObjectKind::kDevice}, &c->device);
      } else if (current_device->empty()) {
        p.Fail("no device yet: start the scenario with 'device NAME'");
      } else {
        c->device = *current_device;
      }
      return;
    case Verb::kReqNotify:
      p.Ref(c->name, {ObjectKind::kCq}, &c->name);
      p.Number("solicited", 1, &c->solicited);
      return;
    case Verb::kGetCqEvent:
      p.Ref(c->name, {ObjectKind::kChannel}, &c->name);
      p.Number("timeout_ms", 3600 * 1000, &c->timeout_ms);
      return;
    case Verb::kReregMr:
      p.Ref(c->name, {ObjectKind::kMr}, &c->name);
      if (p.Has("pd")) c->rereg_flags |= rereg_flag::kChangePd;
      if (p.Has("len")) c->rereg_flags |= rereg_flag::kChangeTranslation;
      p.RefKey("pd", {ObjectKind::kPd}, &c->pd);
      p.Number("len", UINT32_MAX, &c->length);
      if (p.Has("access")) {
        auto f = ParseAccessFlags(p.Value("access"));
        if (!f) return p.Fail("bad access: expected LOCAL_WRITE|REMOTE_WRITE|REMOTE_READ|REMOTE_ATOMIC or 0");
        c->access = *f;
        c->rereg_flags |= rereg_flag::kChangeAccess;
      }
      return;
    case Verb::kAckCqEvents:
      p.Ref(c->name, {ObjectKind::kCq}, &c->name);
      c->n = 1;
      p.Number("n", 65536, &c->n);
      return;
    case Verb::kAdvance: {
      uint64_t us = 0;
      p.Number("us", 3600ull * 1000 * 1000, &us);
      c->advance_ns = us * 1000;
      return;
    }
  }
}

}  // namespace

std::string ParseError::ToString() const {
  return "line " + std::to_string(line) + ": " + message;
}

ScenarioParser::ScenarioParser() = default;
ScenarioParser::~ScenarioParser() = default;

bool ScenarioParser::Line(std::string_view raw, Command* out, bool* got, ParseError* error) {
  Command c;
  if (!LineInto(raw, &c, got, error)) return false;
  if (*got) *out = std::move(c);
  return true;
}

bool ScenarioParser::LineInto(std::string_view raw, Command* fresh, bool* got,
                              ParseError* error) {
  *got = false;
  const int line_no = ++line_;
  std::string_view body = Trim(raw.substr(0, raw.find('#')));
  std::vector<std::string_view>& words = words_;
  WordsInto(body, &words);
  if (words.empty()) return true;
  auto fail = [&](std::string message) {
    *error = ParseError{line_no, std::move(message)};
    return false;
  };
  auto verb = ParseVerb(words[0]);
  if (!verb) return fail("unknown command '" + std::string(words[0]) + "': expected one of " + VerbChoices());
  Command& c = *fresh;
  c.line = line_no;
  c.verb = *verb;
  if (keep_text_) c.text = std::string(body);
  LineParser& p = line_parser_;
  p.Reset(line_no);
  const VerbSpec& spec = SpecOf(*verb);
  p.Bind(spec, words);
  if (p.failed()) return fail(p.error());
  if (spec.positionals > 0 && c.verb != Verb::kFill && c.verb != Verb::kCheck) {
    c.name = std::string(p.Positional(0));
  }
  ParseBody(p, &c, &header_, &current_device_);
  if (!p.failed() && p.Has("expect")) {
    std::string expected;
    if (!ParseExpect(c.verb, p.Value("expect"), &c.expect, &expected)) {
      p.Fail("bad expect '" + std::string(p.Value("expect")) + "': expected " + expected);
    }
  }
  if (p.failed()) return fail(p.error());
  if (names_.size() > kMaxObjects) {
    return fail("more than " + std::to_string(kMaxObjects) + " objects declared (the limit of "
                "one scenario)");
  }
  *got = true;
  return true;
}

bool ParseScenario(std::string_view text, Scenario* out, ParseError* error) {
  return ParseScenario(text, out, error, ParseOptions{});
}

bool ParseScenario(std::string_view text, Scenario* out, ParseError* error,
                   const ParseOptions& options) {
  // A fresh Scenario that keeps the old one's command buffer: a caller that parses into
  // the same Scenario again (the differential fuzzer's helper) reuses ~100 KB, not
  // reallocates it.
  std::vector<Command> buffer = std::move(out->commands);
  buffer.clear();
  *out = Scenario{};
  out->commands = std::move(buffer);
  ScenarioParser parser;
  parser.set_keep_text(options.keep_text);
  // At most one command a line: reserved, so no command is moved while the vector grows.
  size_t lines = 1;
  for (size_t at = text.find('\n'); at != text.npos; at = text.find('\n', at + 1)) ++lines;
  out->commands.reserve(lines);
  for (std::string_view rest = text; !rest.empty();) {
    size_t nl = rest.find('\n');
    std::string_view raw = rest.substr(0, nl);
    rest = nl == rest.npos ? std::string_view() : rest.substr(nl + 1);
    bool got = false;
    // Parsed in place (a Command is large: moving it costs more than parsing a short line).
    Command* c = &out->commands.emplace_back();
    const bool ok = parser.LineInto(raw, c, &got, error);
    if (!got) out->commands.pop_back();
    if (!ok) return false;
  }
  out->device_lines = parser.header().device_lines;
  out->first_profile = parser.header().first_profile;
  return true;
}

bool ScanHeader(std::string_view text, Scenario* header, ParseError* error) {
  ScenarioStream stream(text);
  Command c;
  while (stream.Next(&c, error)) {
  }
  *header = stream.header();
  return !stream.failed();
}

ScenarioStream::ScenarioStream(std::istream* in) : in_(in) {}
ScenarioStream::ScenarioStream(std::string_view text) : text_(text) {}

bool ScenarioStream::ReadLine(std::string* raw, bool* newline, bool* too_long) {
  raw->clear();
  *newline = *too_long = false;
  if (!in_) {
    const size_t nl = text_.find('\n');
    std::string_view line = text_.substr(0, nl);
    if (line.size() > kMaxLineBytes) return *too_long = true;
    raw->assign(line);
    *newline = nl != text_.npos;
    text_ = *newline ? text_.substr(nl + 1) : std::string_view();
    return *newline || !raw->empty();
  }
  for (int ch; (ch = in_->get()) != std::char_traits<char>::eof();) {
    if (ch == '\n') return *newline = true;
    if (raw->size() >= kMaxLineBytes) return *too_long = true;
    raw->push_back(static_cast<char>(ch));
  }
  return !raw->empty();
}

bool ScenarioStream::Next(Command* out, ParseError* error) {
  std::string raw;
  bool newline = false, too_long = false;
  while (ReadLine(&raw, &newline, &too_long)) {
    if (too_long) {
      *error = ParseError{parser_.lines() + 1, "line longer than " +
                                                   std::to_string(kMaxLineBytes) +
                                                   " bytes (the limit of one scenario line)"};
      failed_ = true;
      return false;
    }
    bool got = false;
    if (!parser_.Line(raw, out, &got, error)) {
      failed_ = true;
      return false;
    }
    if (got) return true;
  }
  return false;
}

}  // namespace qptwin::scenario
