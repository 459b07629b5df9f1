// The model's DMA counters of one platform slot (model_backend.h ModelDmaCounters; counted by
// model/sim/platform.h). Plain C++: no SystemC here.
#pragma once

#include <cstdint>

namespace qptwin::model {

struct DmaCounters {
  uint64_t reads = 0;
  uint64_t writes = 0;
  uint64_t bytes_read = 0;
  uint64_t bytes_written = 0;
  uint64_t errors = 0;  // transactions the host memory answered with an error
  uint64_t doorbells = 0;  // MMIO doorbell writes the slot received (platform.h contract 8)
  uint64_t messages_out = 0;  // messages that left through the slot's net_out (contract 9)
  uint64_t messages_in = 0;   // messages that reached the slot's net_in (contract 9)
};

}  // namespace qptwin::model
