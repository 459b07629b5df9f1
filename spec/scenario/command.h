// One parsed line of a .qps scenario (FORMAT.md). The parser fills it; the runner executes it.
//
// Invariants (established by the parser):
//  1. Every object name a Command refers to was declared earlier in the scenario with the
//     kind the argument asks for (an MR for sge=, a QP for dest=, ...).
//  2. `mask` of a modify holds exactly the attribute bits the line named.
//  3. Handles inside `init`, `send` and `attr` are left null; the runner resolves names.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "spec/backend.h"
#include "spec/vocabulary.h"

namespace qptwin::scenario {

enum class Verb : uint8_t {
  kDevice,
  kPd,
  kMr,
  kCq,
  kSrq,
  kQp,
  kModify,
  kQuery,
  kPostSend,
  kPostRecv,
  kPoll,
  kEvents,
  kFill,
  kCheck,
  kDestroy,
  kAdvance,
  kQueryDevice,
  kQueryPort,
  kQuerySrq,
  kModifySrq,
  kResizeCq,
  kChannel,
  kReqNotify,
  kGetCqEvent,
  kAckCqEvents,
  kReregMr,
  kAllocMw,
  kBindMw,
  kDeallocMw,
};
inline constexpr int kNumVerbs = 29;

enum class ObjectKind : uint8_t { kDevice, kPd, kMr, kCq, kSrq, kQp, kChannel, kMw };

std::string_view ToName(Verb v);
std::optional<Verb> ParseVerb(std::string_view s);
std::string_view ToName(ObjectKind k);

// What a line expects (`expect=...`). kNone: the result is recorded, not checked.
struct Expect {
  enum class Kind : uint8_t { kNone, kOk, kErrno, kState, kStatuses, kEvents };
  Kind kind = Kind::kNone;
  int err = 0;                     // kErrno
  QpState state = QpState::kReset;  // kState (query)
  std::vector<WcStatus> statuses;  // kStatuses (poll): exactly these, in this order
  std::vector<EventType> events;   // kEvents (events): exactly these types, in this order
  std::string text;                // as written, for messages
};

struct SgeRef {  // sge=MR:OFF:LEN
  std::string mr;
  uint64_t offset = 0;
  uint32_t length = 0;
};

struct RemoteRef {  // remote=MR:OFF or MW:OFF (through the window: OFF from its start)
  std::string mr;
  uint64_t offset = 0;
};

struct Command {
  int line = 0;
  Verb verb = Verb::kDevice;
  std::string name;  // the object created or acted on (empty for events/advance)
  std::string text;  // the line without its comment, for narration

  std::string profile;  // device
  std::string device;   // pd, cq: the device (default: the latest device line)
  std::string pd;       // mr, srq, qp

  uint64_t length = 0;     // mr len; fill/check LEN
  AccessFlags access = 0;  // mr
  int cqe = 0;             // cq
  uint32_t max_wr = 0;     // srq
  uint32_t max_sge = 0;    // srq

  QpInitAttr init;  // qp: qp_type, cap, sq_sig_all
  std::string send_cq, recv_cq, srq;

  QpAttr attr;        // modify
  AttrMask mask = 0;  // modify
  std::string dest;   // modify dest=QP (also av=QP, dest_qpn=QP: one of the two bits)

  SendWr send;  // post_send: wr_id, opcode, flags, imm, compare_add, swap, remote_qkey
  uint64_t wr_id = 0;                 // post_recv (and post_send's first wr_id)
  uint32_t count = 1;                 // post_*: WRs in one post list (wr_id, wr_id+1, ...)
  std::vector<SgeRef> sges;           // post_*
  std::optional<std::vector<SgeRef>> last_sges;  // post_* last_sge=: the list's last WR
  std::optional<RemoteRef> remote;    // post_send
  std::string ah;                     // post_send (UD): the target QP
  bool remote_qkey_given = false;     // post_send qkey=N overrides the target's qkey

  int n = 1;                 // poll
  uint64_t timeout_ms = 1000;  // poll, events wait=
  std::optional<EventType> wait_for;  // events wait=TYPE

  uint64_t offset = 0;  // fill/check OFF
  uint8_t byte = 0;     // fill/check BYTE
  uint64_t advance_ns = 0;  // advance us=N
  uint8_t port = 1;         // query_port port=N
  std::string channel;      // cq channel=CH
  SrqAttr srq_attr;         // modify_srq max_wr= srq_limit=
  uint32_t srq_mask = 0;    // modify_srq: srq_attr:: bits named
  bool solicited = false;   // req_notify solicited=1
  int rereg_flags = 0;      // rereg_mr: rereg_flag:: bits of the keys named (pd, len, access)
  // Memory windows: alloc_mw type=; bind_mw / post_send op=BIND_MW mw=MW bind=MR:OFF:LEN
  // access=FLAGS (the window's rights); post_send op=LOCAL_INV|SEND_WITH_INV inv=MW.
  MwType mw_type = MwType::kType1;
  std::string mw;
  std::optional<SgeRef> bind;
  std::string inv;

  Expect expect;
};

// The order of std::less<std::string> (bytes as unsigned char, then length), inline: the
// parser's and the runner's name tables are looked up several times per line with short
// names, where a call to memcmp per comparison cost more than the comparison.
struct NameLess {
  using is_transparent = void;
  static bool Less(std::string_view a, std::string_view b) {
    const size_t n = a.size() < b.size() ? a.size() : b.size();
    for (size_t i = 0; i < n; ++i) {
      if (a[i] != b[i]) return static_cast<unsigned char>(a[i]) < static_cast<unsigned char>(b[i]);
    }
    return a.size() < b.size();
  }
  bool operator()(std::string_view a, std::string_view b) const { return Less(a, b); }
};

struct Scenario {
  std::vector<Command> commands;
  int device_lines = 0;       // how many `device` lines (the model needs that many devices)
  std::string first_profile;  // profile= of the first device line ("" when none)
};

}  // namespace qptwin::scenario
