// The other end of a pooled or recovered connection.
//
// A QP pool or a recovery needs "the peer, please (re)connect to this QP": on hw this is an
// out-of-band exchange with another host, in tests and the bench it is a device in the same
// process. PeerLink is that seam; LocalPeer is the in-process implementation.
//
// Contract:
//  1. Connect(local, params) leaves a peer QP in RTS towards `local` whose PSNs mirror
//     `params` (peer sq_psn = params.rq_psn, peer rq_psn = params.sq_psn) and returns its
//     address in *remote. Calling it again for the same local QP number re-establishes the
//     same peer QP (RESET and reconnect: its queued WRs are discarded, R9).
//  2. Disconnect(local_qp_num) releases the peer QP of that local QP (no-op when unknown).
//  3. Errors are errno values from the peer's verbs.
#pragma once

#include <cstdint>
#include <functional>
#include <map>

#include "spec/backend.h"
#include "examples/practice/qp_connect.h"

namespace qptwin::practice {

class PeerLink {
 public:
  virtual ~PeerLink() = default;
  [[nodiscard]] virtual int Connect(const ConnectionInfo& local, const ConnectParams& params,
                                    ConnectionInfo* remote) = 0;
  virtual void Disconnect(uint32_t local_qp_num) = 0;
};

// Peer QPs on a Device of this process (same or another device of the Backend).
class LocalPeer : public PeerLink {
 public:
  // `init` is the template for peer QPs (its PD and CQs belong to `dev`). `on_ready` (may be
  // empty) runs after each peer QP reaches RTS, e.g. to post receives.
  LocalPeer(Device* dev, const QpInitAttr& init,
            std::function<void(Device&, QpHandle)> on_ready = {});
  ~LocalPeer() override;

  int Connect(const ConnectionInfo& local, const ConnectParams& params,
              ConnectionInfo* remote) override;
  void Disconnect(uint32_t local_qp_num) override;

  // The peer QP serving `local_qp_num`, or a null handle.
  QpHandle PeerOf(uint32_t local_qp_num) const;
  size_t size() const { return peers_.size(); }
  int connects() const { return connects_; }

 private:
  Device* dev_;
  QpInitAttr init_;
  std::function<void(Device&, QpHandle)> on_ready_;
  std::map<uint32_t, QpHandle> peers_;  // local qp_num -> peer QP
  int connects_ = 0;
};

}  // namespace qptwin::practice
