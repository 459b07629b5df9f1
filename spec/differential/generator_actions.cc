// The random steps of the differential generator (generator.h): bring-ups, posts, polls,
// modifies (legal, illegal, out of range), queries, destroys, SQD cycles, RESET and reuse.
#include <string>
#include <vector>

#include "spec/differential/generator_state.h"

namespace qptwin::differential::internal {
namespace {

std::string N(uint64_t v) { return std::to_string(v); }

GenQp* Find(Writer& w, const std::string& name) {
  for (GenQp& q : w.qps) {
    if (q.name == name) return &q;
  }
  return nullptr;
}

int IndexOf(const Writer& w, const GenQp& q) { return static_cast<int>(&q - w.qps.data()); }

// Each QP receives into, and is written/read/atomically updated in, its own 8 KiB region of
// its device's MR m<d> (the SRQ's region is 7 * 8 KiB): concurrent QPs never race on bytes.
uint64_t Region(int qp_index) { return static_cast<uint64_t>(qp_index % 7) * 8192; }

void MarkDirty(Writer& w, const GenQp& q) {
  for (GenCq& c : w.cqs) {
    if (c.name == q.send_cq || c.name == q.recv_cq) c.dirty = true;
  }
}

std::string Mr(int dev) { return "m" + std::to_string(dev); }

// A local SGE list for `len` bytes in region `base` of device `dev`, or a bad one.
std::string SgeList(Writer& w, int dev, uint64_t base, uint64_t len, bool allow_bad) {
  if (allow_bad && w.Chance(12)) {
    switch (w.Below(4)) {
      case 0: return "sge=n" + N(dev) + ":200:100";        // past the end of a valid MR
      case 1: return "sge=x0:0:32";                         // an MR destroyed (or live) now
      case 2: return "sge=f0:0:" + N(len);                  // an MR of another PD
      default: return "sge=n" + N(dev) + ":0:" + N(len);    // valid key, maybe too short
    }
  }
  const uint64_t off = base + (w.Chance(80) ? 8 * w.Below(64) : w.Below(512));
  if (len >= 2 && w.Chance(25)) {  // two SGEs
    const uint64_t first = len / 2;
    return "sge=" + Mr(dev) + ":" + N(off) + ":" + N(first) + "," + Mr(dev) + ":" +
           N(off + first + 8) + ":" + N(len - first);
  }
  return "sge=" + Mr(dev) + ":" + N(off) + ":" + N(len);
}

uint64_t Length(Writer& w) {
  static const std::vector<uint64_t> kLens = {0, 1, 7, 8, 64, 64, 200, 1000, 1024, 2048, 3001};
  return w.Pick(kLens);
}

}  // namespace

void Settle(Writer& w) {
  if (!w.unsettled && !w.slow) return;
  w.Line(w.slow ? "advance us=60000" : "advance us=2000");
  w.unsettled = w.slow = false;
}

void BringUp(Writer& w, GenQp& q) {
  if (!q.alive) return;
  Settle(w);
  if (q.state != Believed::kReset) {
    w.Line("modify ", q.name, " state=RESET");
    q.rnr_prone = false;  // RESET discards the send queue (not so a first bring-up: rxe
                          // keeps what a refused post queued in RESET)
    q.mw_err = q.unanswered = false;
  }
  const std::string m = "modify " + q.name;
  if (q.type == "UD") {
    w.Line(m, " state=INIT pkey_index=0 port=1 qkey=0x11111111");
  } else {
    const std::string acc = w.Chance(80) ? "LOCAL_WRITE|REMOTE_WRITE|REMOTE_READ|REMOTE_ATOMIC"
                            : w.Chance(50) ? "REMOTE_WRITE" : "0";
    w.Line(m, " state=INIT pkey_index=0 port=1 access=", acc);
  }
  q.state = Believed::kInit;
  const GenQp* peer = Find(w, q.peer);
  if (q.type != "UD" && (peer == nullptr || !peer->alive)) return;  // nothing to connect to
  if (q.type == "RC") {
    static const std::vector<int> kRd = {0, 1, 4, 4};
    w.Line(m + " state=RTR path_mtu=1024 dest=" + q.peer + " rq_psn=0 max_dest_rd_atomic=" +
           N(w.Pick(kRd)) + " min_rnr_timer=17");
    // min_rnr_timer 17 (3.84 ms; rxe: one jiffy, 4 ms at HZ=250): few retries per poll.
    // rnr_retry 0 (fail at the first RNR NAK) or 7 (retry until a receive is there): no
    // count of retries that races a poll window. timeout 11 (4.096 us * 2^11 = 8.4 ms, rxe:
    // 3 jiffies): a QP that does not answer is given up on within 2 tries (~24 ms, inside one
    // 30 ms poll window), and an
    // emulated rxe that is slow to ACK (QEMU TCG) is not mistaken for one.
    // One draw per statement (contract 1: an operand order the language leaves open would
    // make the scenario depend on the compiler); the order is the one g++ took before.
    const int max_rd = w.Pick(kRd);
    const char* rnr = w.Chance(50) ? "0" : "7";
    const uint64_t retry = w.Below(2);
    w.Line(m + " state=RTS sq_psn=0 timeout=11 retry_cnt=" + N(retry) + " rnr_retry=" + rnr +
           " max_rd_atomic=" + N(max_rd));
  } else if (q.type == "UC") {
    w.Line(m, " state=RTR path_mtu=1024 dest=", q.peer, " rq_psn=0");
    w.Line(m, " state=RTS sq_psn=0");
  } else {
    w.Line(m, " state=RTR");
    w.Line(m, " state=RTS sq_psn=0");
  }
  q.state = Believed::kRts;
}

void PostRecv(Writer& w, const std::string& target, const GenQp* owner) {
  const int dev = owner ? owner->dev : 0;
  const uint64_t base = owner ? Region(IndexOf(w, *owner)) : 7 * 8192;
  static const std::vector<uint64_t> kLens = {0, 16, 64, 240, 1064, 2048, 4096};
  const uint64_t len = w.Pick(kLens);
  std::string line = "post_recv " + target + " wr_id=" + N(w.next_recv_id);
  uint64_t count = w.Chance(10) ? 2 + w.Below(17) : 1;  // up to 18: past a 15-deep queue
  if (count > 1) line += " count=" + N(count);
  w.next_recv_id += count;
  w.Line(line + " " + SgeList(w, dev, base, len, true));
  if (owner) MarkDirty(w, *owner);
  w.unsettled = true;
  // A peer in an RNR loop resends when rxe's RNR timer fires (a jiffy or more, at a phase the
  // scenario does not see): whether this receive is taken before the next command is the
  // timer's luck unless the scenario waits it out (differential seed 20261203 sequence 12).
  for (const GenQp& q : w.qps) {
    const bool receives_here = &q == owner || (!owner && q.srq == target);
    if (!receives_here || !q.alive || q.type != "RC") continue;
    const GenQp* peer = Find(w, q.peer);
    if (peer && peer->rnr_prone) w.slow = true;
  }
}

void PostSend(Writer& w, GenQp& q, const SendChoice* forced) {
  GenQp* peer = Find(w, q.peer);
  static const std::vector<std::string> kRc = {"SEND", "SEND", "SEND_IMM", "WRITE", "WRITE_IMM",
                                               "READ", "CMP_SWP", "FETCH_ADD"};
  static const std::vector<std::string> kUc = {"SEND", "SEND_IMM", "WRITE", "WRITE_IMM"};
  static const std::vector<std::string> kUd = {"SEND", "SEND_IMM"};
  std::string op;
  if (forced) {
    op = forced->op;
  } else {
    op = q.type == "RC" ? w.Pick(kRc) : q.type == "UC" ? w.Pick(kUc) : w.Pick(kUd);
    if (w.Chance(4)) op = w.Pick(kRc);  // an opcode the QP type may not have (EINVAL)
  }
  const bool atomic = op == "CMP_SWP" || op == "FETCH_ADD";
  const bool remote = atomic || op == "READ" || op.rfind("WRITE", 0) == 0;
  const uint64_t len = atomic ? (w.Chance(90) ? 8 : 4) : Length(w);
  const uint64_t base = Region(IndexOf(w, q));
  std::string line = "post_send " + q.name + " wr_id=" + N(w.next_send_id) + " op=" + op;
  uint64_t count = !forced && w.Chance(8) ? 2 + w.Below(17) : 1;
  if (count > 1) line += " count=" + N(count);
  w.next_send_id += count;
  std::string sges;
  if (len > 0 || w.Chance(50)) sges = SgeList(w, q.dev, base, len, true);
  if (!sges.empty()) line += " " + sges;
  if (remote && forced && !forced->remote.empty()) {
    line += " remote=" + forced->remote;
  } else if (remote) {
    const int pdev = peer ? peer->dev : 0;
    const uint64_t pbase = peer ? Region(IndexOf(w, *peer)) + 4096 : 4096;
    std::string mr = Mr(pdev);
    uint64_t off = pbase + (atomic ? 8 * w.Below(32) : 8 * w.Below(256));
    if (w.Chance(12)) {
      switch (w.Below(4)) {
        case 0: mr = "n" + N(pdev); break;   // no remote access rights
        case 1: mr = "f0"; off = 0; break;   // another PD's MR
        case 2: mr = "x0"; off = 0; break;   // a short-lived MR
        default: off = 65536 - 4; break;     // past the end
      }
    }
    if (atomic && w.Chance(8)) off += 4;  // misaligned atomic
    line += " remote=" + mr + ":" + N(off);
  }
  if (op == "CMP_SWP") {  // one draw per statement (contract 1), in g++'s former order
    const uint64_t swap = w.Below(1000);
    const uint64_t compare = w.Chance(50) ? 0x5a5a5a5a5a5a5a5aull : 0;
    line += " compare=" + N(compare) + " swap=" + N(swap);
  }
  if (op == "FETCH_ADD") line += " add=" + N(1 + w.Below(1000));
  if (op.find("IMM") != std::string::npos) line += " imm=" + N(w.Below(1u << 31));
  if (forced && !forced->extra.empty()) line += " " + forced->extra;
  if (q.type == "UD") line += " ah=" + q.peer;
  std::string flags;
  auto add = [&flags](const char* f) { flags += (flags.empty() ? "" : "|") + std::string(f); };
  if (!q.sig_all && w.Chance(70)) add("SIGNALED");
  if ((op == "SEND" || op == "SEND_IMM") && w.Chance(15)) add("SOLICITED");
  if (w.Chance(5)) add("FENCE");
  // No INLINE from a destroyed MR's buffer: the runner gives it address 0, and a real
  // provider copies inline data from that address inside ibv_post_send (a SIGSEGV on rxe, found
  // by the CI's differential, seed 748177376976 sequence 611): undefined on a device, not a
  // difference to compare.
  const bool reads_freed = !w.x_alive && sges.find("x0:") != std::string::npos;
  if (!atomic && op != "READ" && q.max_inline > 0 && !reads_freed && w.Chance(40) &&
      (len <= static_cast<uint64_t>(q.max_inline) || w.Chance(20))) {
    add("INLINE");
  }
  if (!flags.empty()) line += " flags=" + flags;
  w.Line(line);
  MarkDirty(w, q);
  if (peer) MarkDirty(w, *peer);
  w.unsettled = true;
  // GenQp::MayHaveFailed: seed 20261203 sequence 696, seed 3303 sequence 1012.
  const bool answers = peer && peer->alive && !peer->MayHaveFailed() &&
                       (peer->state == Believed::kRtr || peer->state == Believed::kRts ||
                        peer->state == Believed::kSqd);
  // An RC message that needs a receive may meet an RNR NAK; rxe's retransmit timer keeps
  // running meanwhile and ends it with RETRY_EXC_ERR after (retry_cnt + 1) timeouts, 24 ms on
  // paper but up to ~55 ms in the emulated VM (docs/differences.md rows 26, 32). Until the
  // QP is brought up again, a later post to it may be what starts it (rts_waits_for_doorbell).
  const bool needs_receive =
      op == "SEND" || op == "SEND_IMM" || op == "WRITE_IMM" || op == "SEND_WITH_INV";
  if (q.type == "RC" && needs_receive) q.rnr_prone = true;
  if (q.type == "RC" && !answers) q.unanswered = true;
  if (q.type == "RC" && (!answers || q.rnr_prone)) w.slow = true;
  // Receives of an SRQ shared by QPs go to whichever message arrives first: let this one
  // land before anything else is posted (the race would be the wire's, not the device's).
  if (peer && !peer->srq.empty()) w.Line("advance us=3000");
}

void PollAll(Writer& w) {
  if (w.slow) Settle(w);  // a retrying send ends after the poll's window
  std::vector<GenCq*> dirty;
  for (GenCq& c : w.cqs) {
    if (c.alive && c.dirty) dirty.push_back(&c);
  }
  if (dirty.empty()) return;
  // One window for all of them (a poll of n=64 waits its whole timeout anyway), then each
  // CQ takes what arrived: the same outcome as a window per CQ, in a fraction of the time.
  if (dirty.size() > 1) w.Line("advance us=" + N(w.opts().poll_ms * 1000));
  for (GenCq* c : dirty) {
    w.Line("poll " + c->name + " n=64 timeout_ms=" +
           (dirty.size() > 1 ? std::string("0") : N(w.opts().poll_ms)));
    c->dirty = false;
  }
  w.unsettled = false;  // the window has passed
}

namespace {

void PollOne(Writer& w) {
  std::vector<GenCq*> dirty;
  for (GenCq& c : w.cqs) {
    if (c.alive && c.dirty) dirty.push_back(&c);
  }
  if (dirty.empty()) return;
  if (w.slow) Settle(w);
  GenCq* c = w.Pick(dirty);
  w.Line("poll " + c->name + " n=64 timeout_ms=" + N(w.opts().poll_ms));
  c->dirty = false;
  w.unsettled = false;
}

// A modify the table or the value checks may refuse: a wrong target state, a missing or an
// extra attribute, a value out of range (or one rxe accepts without checking).
void OddModify(Writer& w, GenQp& q) {
  static const std::vector<std::string> kOdd = {
      "state=RTR",                       // missing attributes (or from a wrong state)
      "state=RTS sq_psn=0",              // RTS from INIT/RESET: illegal
      "state=INIT pkey_index=0 port=2",  // no such port
      "state=INIT pkey_index=9 port=1 access=0",  // pkey_index rxe does not check
      "state=SQD",                       // legal only from RTS
      "retry_cnt=8",                     // out of range (3 bits)
      "rnr_retry=9",                     // out of range (3 bits)
      "min_rnr_timer=40",                // out of range (5 bits); not in RTS's mask
      "max_dest_rd_atomic=200",          // beyond the device's limit
      "timeout=31",                      // in range, RTS/SQD optional attribute
      "qkey=0x22",                       // UD: legal in RTS; RC/UC: not in their mask
      "path_mtu=4096",                   // not optional in RTS
      "state=RTS cur_state=RTS",
      "access=REMOTE_WRITE",
      "state=ERR",
      "state=RESET",
  };
  const std::string& what = w.Pick(kOdd);
  Settle(w);
  w.Line("modify " + q.name + " " + what);
  if (what == "state=SQD") w.unsettled = true;  // the drain ends in rxe's task (SqdCycle)
  if (what == "state=ERR") q.state = Believed::kErr;
  if (what == "state=RESET") q.state = Believed::kReset;
  MarkDirty(w, q);
}

void SqdCycle(Writer& w, GenQp& q) {
  const bool notify = w.Chance(60);
  Settle(w);
  w.Line("modify " + q.name + " state=SQD" + (notify ? " en_sqd_async_notify=1" : ""));
  if (notify) {
    w.Line("events wait=SQ_DRAINED timeout_ms=" + N(w.opts().poll_ms));
  } else {
    // rxe drains in its requester task, after the modify returns: a query at once reads
    // sq_draining 1 or 0 as the task is late or not (sequences 1326, 1798 of the CI seed).
    w.unsettled = true;
    Settle(w);
  }
  w.Line("query " + q.name);
  const int posts = static_cast<int>(w.Below(3));
  for (int i = 0; i < posts; ++i) PostSend(w, q);  // queued while in SQD
  PollOne(w);
  w.Line("modify " + q.name + " state=RTS");
  q.state = Believed::kRts;
  MarkDirty(w, q);
}

// Destroys something, maybe while it is in use (EBUSY for a CQ/SRQ with QPs on it).
void DestroySomething(Writer& w) {
  Settle(w);
  switch (w.Below(5)) {
    case 0: {  // dereg while a WR that names the MR is queued (a receive waits for a send)
      if (!w.x_alive) return;
      GenQp& q = w.qps[w.Below(w.qps.size())];
      if (q.alive && q.srq.empty()) {
        w.Line("post_recv " + q.name + " wr_id=" + N(w.next_recv_id++) + " sge=x0:0:64");
      }
      w.Line("destroy x0");
      w.x_alive = false;
      MarkDirty(w, q);
      return;
    }
    case 1: {  // a QP, with whatever it has outstanding
      GenQp& q = w.qps[w.Below(w.qps.size())];
      if (!q.alive) return;
      w.Line("destroy " + q.name);
      q.alive = false;
      MarkDirty(w, q);
      return;
    }
    case 2: {  // a CQ: EBUSY while a QP uses it
      GenCq& c = w.cqs[w.Below(w.cqs.size())];
      if (!c.alive) return;
      bool used = false;
      for (const GenQp& q : w.qps) used |= q.alive && (q.send_cq == c.name || q.recv_cq == c.name);
      w.Line("destroy " + c.name);
      if (!used) c.alive = false;
      return;
    }
    case 3: {  // a PD: EBUSY while its MRs and QPs live
      const std::string pd = "p" + N(w.Below(w.devices));
      w.Line("destroy " + pd);
      return;
    }
    default:
      if (!w.srqs.empty() && w.srq_alive[0]) {
        bool used = false;
        for (const GenQp& q : w.qps) used |= q.alive && q.srq == "s0";
        w.Line("destroy s0");
        if (!used) w.srq_alive[0] = false;
      }
      return;
  }
}

// Completion channels, CQ resizes and SRQ modifies, each after a settle (what is in a CQ
// when it is armed or resized must not depend on how far a real device got).
void CqOrSrqVerb(Writer& w) {
  Settle(w);
  GenCq& c = w.cqs[w.Below(w.cqs.size())];
  switch (w.Below(4)) {
    case 0:
      if (!c.alive || c.channel.empty()) return;
      w.Line("req_notify " + c.name + (w.Chance(30) ? " solicited=1" : ""));
      c.armed = true;
      return;
    case 1:
      if (!c.alive || c.channel.empty() || !c.armed) return;
      if (c.dirty) w.Line("advance us=" + N(w.opts().poll_ms * 1000));
      w.Line("get_cq_event " + c.channel + " timeout_ms=" + N(w.opts().poll_ms));
      w.Line("ack_cq_events " + c.name + " n=1");  // more than received: nothing (hw clamps)
      c.armed = false;
      return;
    case 2: {
      if (!c.alive) return;
      static const std::vector<int> kCqe = {1, 7, 31, 200, 5000000};  // the last: too many
      w.Line("resize_cq " + c.name + " cqe=" + N(w.Pick(kCqe)));
      return;
    }
    default:
      if (w.srqs.empty() || !w.srq_alive[0]) return;
      if (w.Chance(70)) {
        static const std::vector<int> kLimit = {1, 2, 4, 8, 16};  // 16: past max_wr
        w.Line("modify_srq s0 srq_limit=" + N(w.Pick(kLimit)));
      } else {
        w.Line("modify_srq s0 max_wr=" + N(w.Chance(50) ? 31 : 3));
      }
      return;
  }
}

}  // namespace

void RandomAction(Writer& w) {
  GenQp& q = w.qps[w.Below(w.qps.size())];
  // 0..99 as before; 100..113 a memory-window step (14 of 114: 12.3% of the steps).
  const uint64_t r = w.Below(114);
  if (r >= 100) {
    MwAction(w, q);
  } else if (r < 24) {
    if (!q.alive) return;
    if (q.state != Believed::kRts && w.Chance(70)) BringUp(w, q);
    PostSend(w, q);
  } else if (r < 42) {
    GenQp* peer = Find(w, q.peer);
    if (!q.srq.empty() && w.srq_alive[0] && w.Chance(80)) {
      PostRecv(w, q.srq, nullptr);
      for (const GenQp& o : w.qps) {
        if (o.srq == q.srq) MarkDirty(w, o);
      }
    } else if (q.alive) {
      PostRecv(w, q.name, &q);
    }
    (void)peer;
  } else if (r < 58) {
    if (w.Chance(30)) {
      PollAll(w);
    } else {
      PollOne(w);
    }
  } else if (r < 63) {
    if (q.alive) OddModify(w, q);
  } else if (r < 67) {
    if (q.alive && q.state == Believed::kRts) SqdCycle(w, q);
  } else if (r < 70) {
    if (!q.alive) return;
    Settle(w);
    w.Line("modify " + q.name + " state=ERR");
    q.state = Believed::kErr;
    MarkDirty(w, q);
  } else if (r < 75) {  // RESET and reuse (with its peer, most of the time: PSNs restart)
    if (!q.alive) return;
    BringUp(w, q);
    GenQp* peer = Find(w, q.peer);
    if (peer && peer->alive && w.Chance(70)) BringUp(w, *peer);
    MarkDirty(w, q);
  } else if (r < 81) {
    Settle(w);
    const uint64_t k = w.Below(10);
    const std::string dev = "d" + N(w.Below(w.devices));
    if (k == 0) {
      w.Line("query_device dev=" + dev);
    } else if (k == 1) {
      w.Line("query_port dev=" + dev + " port=" + (w.Chance(80) ? "1" : "2"));  // 2: none
    } else if (k == 2 && !w.srqs.empty()) {
      w.Line("query_srq s0");
    } else {
      w.Line("query " + q.name);
    }
  } else if (r < 85) {
    DestroySomething(w);
  } else if (r < 90) {
    const int dev = q.dev;
    Settle(w);
    const uint64_t off = Region(IndexOf(w, q)) + 8 * w.Below(512);
    // One draw per statement (contract 1), in the order g++ took before.
    const char* byte = w.Chance(50) ? "5a" : "00";
    const uint64_t n = 1 + w.Below(256);
    const char* verb = w.Chance(50) ? "check m" : "fill m";
    w.Line(verb + N(dev) + " " + N(off) + " " + N(n) + " 0x" + byte);
  } else if (r < 93) {
    Settle(w);
    w.Line("advance us=" + N(1000 + w.Below(4000)));
    w.Line("events");
  } else if (r < 95) {
    if (q.alive && q.state != Believed::kRts) BringUp(w, q);
  } else if (r < 99) {
    CqOrSrqVerb(w);
  } else if (w.Chance(50)) {  // a pair created while the others are in use, then brought up
    const size_t first = w.qps.size();
    if (!DeclarePair(w)) return;
    for (size_t i = first; i < w.qps.size(); ++i) {
      if (w.Chance(85)) BringUp(w, w.qps[i]);
    }
  }
}

}  // namespace qptwin::differential::internal
