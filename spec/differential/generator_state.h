// What the differential generator (generator.h) believes about the scenario it is writing:
// the objects declared, each QP's type, peer, CQs and the state the generator last asked for.
// The belief steers the choices (most posts go to QPs in RTS); it never has to be right,
// because the device's answers are what the transcripts compare. Internal to generator*.cc.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "spec/differential/generator.h"

namespace qptwin::differential::internal {

enum class Believed : uint8_t { kReset, kInit, kRtr, kRts, kSqd, kErr };

struct GenQp {
  std::string name, peer, type;  // type: "RC", "UC", "UD"
  int dev = 0;
  std::string send_cq, recv_cq, srq;
  Believed state = Believed::kReset;
  bool alive = true;
  bool sig_all = false;
  int max_inline = 0;
  // An RC message needing a receive was posted since the last bring-up: its RNR loop may end
  // by the retransmit timer, so what follows waits for it (`slow`).
  bool rnr_prone = false;
  // A window step may have moved it to ERR (a failed bind or LOCAL_INV, a remote access or
  // SEND_WITH_INV refused): an RC message to it may meet silence (`slow`) until RESET.
  bool mw_err = false;
  // An RC message of its own went to a peer that could not answer (not in RTR/RTS/SQD, gone,
  // or itself possibly failed): RETRY_EXC_ERR moves it to ERR when rxe's timer says (seed
  // 20261205 sequence 195), until RESET.
  bool unanswered = false;
  // It may have gone to ERR on its own, unseen by the generator: its own RC message in an RNR
  // loop (RNR_RETRY_EXC_ERR, RETRY_EXC_ERR), unanswered, or a window step. A message to it may
  // meet silence and end by rxe's timer, whose jiffies a scenario cannot time.
  bool MayHaveFailed() const { return rnr_prone || mw_err || unanswered; }
};

struct GenCq {
  std::string name;
  int dev = 0;
  bool alive = true;
  std::string channel;  // its own completion channel ("" = none): no race between CQs
  bool armed = false;   // req_notify given since the last get_cq_event
  bool dirty = false;  // may hold completions not polled yet
};

// A memory window the generator allocated (generator_mw.cc).
struct GenMw {
  std::string name;
  int dev = 0;
  int type = 1;
  bool alive = true;
  // Type 2: an invalidation of its current rkey cannot meet a FREE window holding that rkey
  // (rxe 6.1 rxe_do_invalidate_mw dereferences a FREE window's NULL QP and region: an oops).
  // Set by a BIND_MW posted where the post cannot fail (it moves the program's rkey on),
  // cleared by every LOCAL_INV / SEND_WITH_INV naming it.
  bool inv_safe = false;
  std::string bind_qp;  // type 2: the QP of the last bind posted (it answers only there)
  uint64_t length = 0;  // of the last bind posted (0: none)
};

// An opcode, remote address and extra fields PostSend takes instead of drawing them.
struct SendChoice {
  std::string op, remote, extra;
};

class Writer {
 public:
  Writer(uint64_t seed, const GeneratorOptions& o) : rng_(seed), opts_(o) {
    text_.reserve(8192);  // a scenario is a few KiB
  }

  // Random helpers: Below(n) in [0, n); Chance(p) with probability p/100.
  uint64_t Below(uint64_t n) { return n == 0 ? 0 : rng_() % n; }
  bool Chance(int percent) { return static_cast<int>(Below(100)) < percent; }
  template <typename T>
  const T& Pick(const std::vector<T>& v) { return v[Below(v.size())]; }

  // A line of these parts (no temporary string for the whole line). Its arguments are
  // evaluated in an unspecified order: none may draw a random number.
  template <typename... Parts>
  void Line(std::string_view first, const Parts&... rest) {
    text_ += first;
    ((text_ += std::string_view(rest)), ...);
    text_ += '\n';
  }
  const std::string& text() const { return text_; }
  std::string TakeText() { return std::move(text_); }
  const GeneratorOptions& opts() const { return opts_; }

  std::vector<GenQp> qps;
  std::vector<GenCq> cqs;
  std::vector<std::string> srqs;     // SRQ names (all on device 0, PD p0)
  std::vector<bool> srq_alive;
  int devices = 1;
  bool x_alive = true;              // the short-lived MR x0 (destroyed while in use)
  std::vector<GenMw> mws;
  std::string bind_mr[2];           // per device: the live MW_BIND region ("" = none yet;
                                    // windows live on d0 only, generator_mw.cc OnDevice0)
  int bind_mrs = 0;                 // MW_BIND regions declared (names b<d>_<k>)
  uint64_t next_send_id = 1;        // send wr_ids: 1..9999
  uint64_t next_recv_id = 10000;    // receive wr_ids: 10000 and up (canonical.h relies on it)
  // Work may still be running on a real device (posted since the last poll or settle);
  // `slow`: an RC send may be retrying against a peer that does not answer (rxe: up to
  // (retry_cnt + 1) * 12 ms, timeout 11).
  bool unsettled = false;
  bool slow = false;

 private:
  std::mt19937_64 rng_;
  GeneratorOptions opts_;
  std::string text_;
};

// At most this many pairs: each QP has its own 8 KiB region of its device's MR (7 of them,
// the 8th is the SRQ's), so no two QPs race on the same bytes.
inline constexpr int kMaxPairs = 3;

// generator.cc: declares the next pair of QPs (with CQs and SRQ still alive); false when
// there are kMaxPairs already or no CQ is left.
bool DeclarePair(Writer& w);

// generator_actions.cc
void BringUp(Writer& w, GenQp& q);
void RandomAction(Writer& w);
void PostRecv(Writer& w, const std::string& target, const GenQp* owner);
void PostSend(Writer& w, GenQp& q, const SendChoice* forced = nullptr);
void PollAll(Writer& w);
// generator_mw.cc: one memory-window step acting on (or from) `q`.
void MwAction(Writer& w, GenQp& q);
// Lets posted work finish before a command whose outcome would otherwise depend on how far
// a real device got meanwhile (a query, a modify, a destroy, a check): on the model no time
// passes between two commands, on rxe the requester runs inside ibv_post_send and the
// responder and completer right after. `advance us=2000`, 60000 when `slow` (also before a
// poll: a QP retrying against a silent peer gives up after ~24 ms).
void Settle(Writer& w);

}  // namespace qptwin::differential::internal
