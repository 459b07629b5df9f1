#include "spec/differential/generator.h"

#include <string>

#include "spec/differential/generator_state.h"

namespace qptwin::differential {
namespace {

using internal::Believed;
using internal::GenCq;
using internal::GenQp;
using internal::Writer;

std::string D(int dev) { return std::to_string(dev); }

// Devices, PDs, MRs, CQs and SRQs. Per device d: PD p<d>; MR m<d> (64 KiB, every
// access), n<d> (256 bytes, LOCAL_WRITE only: a valid key without remote rights); on d0 also
// f0 (in a second PD pf0: a key of another PD) and x0 (64 bytes, destroyed while in use).
void DeclareResources(Writer& w) {
  w.devices = w.opts().two_devices && w.Chance(30) ? 2 : 1;
  for (int d = 0; d < w.devices; ++d) w.Line("device d", D(d), " profile=rxe");
  for (int d = 0; d < w.devices; ++d) {
    const std::string dev = D(d);
    w.Line("pd p", dev, " dev=d", dev);
    w.Line("mr m", dev, " pd=p", dev,
           " len=65536 access=LOCAL_WRITE|REMOTE_WRITE|REMOTE_READ|REMOTE_ATOMIC");
    w.Line("fill m", dev, " 0 65536 0x5a");
    w.Line("mr n", dev, " pd=p", dev, " len=256 access=LOCAL_WRITE");
    const int cqs = 1 + static_cast<int>(w.Below(3));
    for (int k = 0; k < cqs; ++k) {
      // Mostly roomy CQs; now and then a 3-entry CQ that a burst overruns (rxe: CQ_ERR).
      const int cqe = w.Chance(8) ? 3 : 63;
      const std::string name = "c" + D(d) + "_" + D(k);
      GenCq cq{name, d, true, "", false};
      if (w.Chance(40)) {  // a completion channel of its own
        cq.channel = "h" + D(d) + "_" + D(k);
        w.Line("channel ", cq.channel, " dev=d", dev);
      }
      w.Line("cq ", name, " cqe=", std::to_string(cqe), " dev=d", dev,
             cq.channel.empty() ? "" : " channel=", cq.channel);
      w.cqs.push_back(cq);
    }
  }
  w.Line("pd pf0 dev=d0");
  w.Line("mr f0 pd=pf0 len=4096 access=LOCAL_WRITE|REMOTE_WRITE|REMOTE_READ|REMOTE_ATOMIC");
  w.Line("mr x0 pd=p0 len=64 access=LOCAL_WRITE|REMOTE_WRITE|REMOTE_READ");
  if (w.Chance(40)) {
    const std::string sge = w.Chance(50) ? "1" : "2";
    w.Line("srq s0 pd=p0 max_wr=15 max_sge=", sge);
    w.srqs.push_back("s0");
    w.srq_alive.push_back(true);
  }
}

std::string CqOf(Writer& w, int dev) {
  std::vector<std::string> names;
  for (const GenCq& c : w.cqs) {
    if (c.dev == dev && c.alive) names.push_back(c.name);
  }
  return names.empty() ? std::string() : w.Pick(names);
}

// 1..3 pairs of QPs; each pair of one type, its two QPs connected to each other (UD: each
// sends to the other by an AH), possibly on two devices.
void DeclareQps(Writer& w) {
  const int pairs = 1 + static_cast<int>(w.Below(3));
  for (int p = 0; p < pairs; ++p) internal::DeclarePair(w);
}

// Every live QP to ERR, then every CQ drained, then the async events: every WR posted ends.
void Epilogue(Writer& w) {
  w.Line("# epilogue: every QP to ERR, every CQ drained");
  internal::Settle(w);
  for (GenQp& q : w.qps) {
    if (!q.alive) continue;
    w.Line("modify ", q.name, " state=ERR");
    q.state = Believed::kErr;
    // The move flushes into both CQs (also a receive posted in ERR that waited for it).
    for (GenCq& c : w.cqs) {
      if (c.name == q.send_cq || c.name == q.recv_cq) c.dirty = true;
    }
  }
  internal::PollAll(w);
  w.Line("events");
}

}  // namespace

namespace internal {

bool DeclarePair(Writer& w) {
  static const std::vector<std::string> kTypes = {"RC", "RC", "UC", "UD"};
  const int p = static_cast<int>(w.qps.size() / 2);
  if (p >= kMaxPairs) return false;
  std::vector<GenQp> pair(2);
  const std::string type = w.Pick(kTypes);
  for (int side = 0; side < 2; ++side) {
    GenQp& q = pair[side];
    q.name = "q" + D(2 * p + side);
    q.peer = "q" + D(2 * p + (1 - side));
    q.type = type;
    q.dev = side == 1 && w.devices == 2 && w.Chance(70) ? 1 : 0;
    q.send_cq = CqOf(w, q.dev);
    q.recv_cq = w.Chance(50) ? q.send_cq : CqOf(w, q.dev);
    if (q.send_cq.empty()) return false;  // every CQ of the device destroyed
    if (q.dev == 0 && !w.srqs.empty() && w.srq_alive[0] && w.Chance(50)) q.srq = "s0";
    q.sig_all = w.Chance(40);
    static const std::vector<int> kInline = {0, 0, 0, 16, 64};
    q.max_inline = w.Pick(kInline);
  }
  for (GenQp& q : pair) {
    std::string line = "qp " + q.name + " type=" + type + " pd=p" + D(q.dev) +
                       " send_cq=" + q.send_cq + " recv_cq=" + q.recv_cq;
    if (!q.srq.empty()) line += " srq=" + q.srq;
    line += " max_send_wr=15 max_recv_wr=15 max_send_sge=2 max_recv_sge=2";
    if (q.max_inline) line += " max_inline=" + std::to_string(q.max_inline);
    if (q.sig_all) line += " sq_sig_all=1";
    w.Line(line);
    w.qps.push_back(q);
  }
  return true;
}

}  // namespace internal

uint64_t SequenceSeed(uint64_t run_seed, uint64_t n) {
  uint64_t z = run_seed + 0x9e3779b97f4a7c15ull * (n + 1);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

std::string GenerateScenario(uint64_t seed, const GeneratorOptions& options) {
  Writer w(seed, options);
  w.Line("# qptwin differential sequence (spec/differential/generator.h), seed " +
         std::to_string(seed));
  DeclareResources(w);
  DeclareQps(w);
  // Most QPs are brought up at once (the data path is where most differences are); the rest
  // wait for a random action to bring them up (a post to a QP in RESET/INIT/RTR first).
  for (GenQp& q : w.qps) {
    if (w.Chance(85)) internal::BringUp(w, q);
  }
  const int actions = 1 + static_cast<int>(w.Below(options.actions));
  for (int i = 0; i < actions; ++i) internal::RandomAction(w);
  Epilogue(w);
  return w.TakeText();
}

}  // namespace qptwin::differential
