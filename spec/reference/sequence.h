// Random command sequences for one connected RC pair, their reference model, and their
// rendering as a .qps scenario (tools/scenario grammar) so that a shrunk failure replays.
//
// The reference model is plain C++: per QP the state and the WRs outstanding on its send and
// receive queues. It predicts every return code (the legality oracle, the posting rules R2, R4,
// R5, the SQD drain rule R12) and checks every completion against the queues: each WR completes
// at most once, in posting order per queue, and after the final move to ERR every WR posted has
// completed exactly once (all WRs are signaled: sq_sig_all = 1). Where rxe and IBTA differ
// (refused sends that stay queued, receives in ERR that wait) it predicts the device's
// Behaviour (spec/device_description.h; probed by device_behaviour.h when not given).
#pragma once

#include <cstdint>
#include <deque>
#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

#include "spec/backend.h"
#include "spec/reference/device_behaviour.h"

namespace qptwin::reference {

struct SeqCommand {
  enum class Kind : uint8_t { kModify, kPostSend, kPostRecv, kSettle, kBringUp };
  // kBringUp: the main path to RTS with the minimum masks (through RESET when in ERR).
  Kind kind = Kind::kSettle;
  int qp = 0;                         // 0 = "a", 1 = "b"
  QpState target = QpState::kInit;    // kModify
  bool with_state = true;             // kModify: IBV_QP_STATE in the mask
  AttrMask add = 0;                   // kModify: bits added to the minimum mask
  AttrMask drop = 0;                  // kModify: bits removed from the minimum mask
  bool bad_port = false;              // kModify: port_num out of range (when PORT is in the mask)
  int count = 1;                      // kPostSend/kPostRecv: WRs in the list
  int sges_last = 1;                  // SGEs of the last WR (the others have 1)
  bool write = false;                 // kPostSend: RDMA WRITE instead of SEND
  uint8_t rnr_retry = 7;              // used when the modify sets RNR_RETRY
};

void showValue(const SeqCommand& c, std::ostream& os);  // one .qps line (RapidCheck's printer)

// The outcome of running a sequence: empty `failure` when every check held.
struct SeqResult {
  std::string failure;
  // The run as a .qps scenario, command by command as the device saw it (the exact masks,
  // values and post lists; a poll after each step; the final moves to ERR): a shrunk failure
  // replays with `qptwin run`.
  std::string replay;
  int commands = 0;
  int completions = 0;
};

// Runs `cmds` on a fresh device of `backend` with the reference model alongside, which
// predicts `behaviour` (the device description's, spec/device_description.h). `settle_ns`: how
// long each command's Settle polls for completions.
SeqResult RunSequence(Backend& backend, const std::vector<SeqCommand>& cmds, uint64_t settle_ns,
                      const Behaviour& behaviour);
// The same, with the behaviour probed on the device first (ProbeDeviceBehaviour): for tools
// that hold only a Backend.
SeqResult RunSequence(Backend& backend, const std::vector<SeqCommand>& cmds, uint64_t settle_ns);

// The .qps preamble that creates the objects RunSequence uses (for replaying a failure).
std::string SequencePreamble();
// One exact `modify` line: every attribute in `mask` with its value in `a`; `peer` names the
// QP that AV / DEST_QPN point to.
std::string ModifyLine(const char* qp, const char* peer, const QpAttr& a, AttrMask mask);

}  // namespace qptwin::reference
