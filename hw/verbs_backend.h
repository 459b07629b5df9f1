// The hardware backend: spec/backend.h over real libibverbs (Soft-RoCE rxe, ConnectX, ...).
//
// Contract:
//  1. Every Device method returns exactly what libibverbs returned (errno after a NULL
//     return, ibv_post_*'s return value with bad_wr mapped to an index); no exceptions,
//     no asserts.
//  2. Handles are checked against a per-Device table: null, foreign or destroyed handles
//     give EINVAL and never reach libibverbs.
//  3. libibverbs types never leave hw/; this header includes none of them.
//  4. Threading: as spec/backend.h (one Device from one thread at a time).
#pragma once

#include <memory>
#include <string>

#include "spec/backend.h"

namespace qptwin::hw {

struct VerbsOptions {
  std::string device;  // "" = $QPTWIN_DEVICE, else the first device
  int gid_index = -1;  // -1 = auto: the RoCE v2 IPv4-mapped GID if present
};

// Never returns null; OpenDevice reports ENODEV when no device matches.
std::unique_ptr<Backend> MakeVerbsBackend(const VerbsOptions& opts);

}  // namespace qptwin::hw
