// A driver's event queue (nic.h CreateEq; command_port.h kCreateEq): the asynchronous events
// of a context written into a ring in queue memory, with an interrupt per arm, as mlx5's
// asynchronous event queue and its MSI-X vector.
#include <cerrno>
#include <cstring>
#include <vector>

#include "model/engine/nic.h"

namespace qptwin::model::engine {

int Nic::CreateEq(uint32_t ctx, EqSpec spec, uint32_t* eqn, uint64_t* addr, uint32_t* slots) {
  if (spec.entries < 1 || spec.entries > kMaxEqEntries || !spec.number) return EINVAL;
  if (eqs_.count(ctx) != 0) return EBUSY;
  if (queue_arena_ == nullptr) return EINVAL;  // command_port.h contract 3: no window
  uint32_t n = 1;
  while (n < spec.entries) n <<= 1;
  QueueBlock ring;
  if (!QueueBlock::Take(queue_arena_, QueueBlockBytes(n, kEqeBytes, false), &ring)) return ENOMEM;
  // Every EQE's owner bit clear before the first is written (as mlx5's driver sets them
  // before CREATE_EQ): a block another queue used shows nothing stale. The driver learns
  // the address only from the answer, so the NIC does it (the provider's CPU path).
  const std::vector<uint8_t> zeros(uint64_t{n} * kEqeBytes, 0);
  if (!Cpu(DmaKind::kEqe, 0).Write(ring.addr(), zeros.data(), zeros.size())) return EIO;
  Eq& eq = eqs_[ctx];
  eq.eqn = next_eqn_++;
  eq.block = std::move(ring);
  eq.slots = n;
  eq.spec = std::move(spec);
  *eqn = eq.eqn;
  *addr = eq.block.addr();
  *slots = n;
  DrainEq(ctx, eq);  // events raised before it, not yet taken, go in first
  return 0;
}

int Nic::DestroyEq(uint32_t ctx, uint32_t eqn) {
  auto it = eqs_.find(ctx);
  if (it == eqs_.end() || it->second.eqn != eqn) return EINVAL;
  eqs_.erase(it);  // events not written stay for TakeEvents
  return 0;
}

void Nic::OnEqArm(uint32_t eqn, uint32_t ci) {
  for (auto& [ctx, eq] : eqs_) {
    if (eq.eqn != eqn) continue;
    // The EQEs not taken, by the 24 bits the arm carries; more than were written is wrong.
    const uint32_t untaken = (eq.produced - ci) & 0xffffffu;
    if (untaken > eq.slots || untaken > eq.produced) break;
    eq.consumer = eq.produced - untaken;
    eq.armed = true;
    DrainEq(ctx, eq);
    return;
  }
  ++ignored_rings_;
}

void Nic::DrainEq(uint32_t ctx, Eq& eq) {
  auto pending = events_.find(ctx);
  size_t written = 0;
  if (pending != events_.end()) {
    std::vector<AsyncEvent>& evs = pending->second;
    while (written < evs.size() && eq.produced - eq.consumer < eq.slots) {
      const AsyncEvent& e = evs[written];
      uint8_t eqe[kEqeBytes] = {};
      const uint32_t type = static_cast<uint32_t>(e.type);
      const uint64_t number = eq.spec.number(e);
      std::memcpy(eqe, &type, 4);
      std::memcpy(eqe + 8, &number, 8);
      std::memcpy(eqe + 16, &e.time_ns, 8);
      eqe[kEqeBytes - 1] = static_cast<uint8_t>(((eq.produced / eq.slots) & 1) ^ 1);
      // A write that fails leaves the event waiting (and the rest behind it): no gap in
      // the ring, nothing lost; the next event or arm tries again, GET_EVENT may take it.
      if (!Dma(DmaKind::kEqe, 0)
               .Write(eq.block.addr() + uint64_t{eq.produced % eq.slots} * kEqeBytes, eqe,
                      kEqeBytes)) {
        break;
      }
      ++eq.produced;
      ++written;
    }
    evs.erase(evs.begin(), evs.begin() + static_cast<std::ptrdiff_t>(written));
  }
  // The interrupt: after the EQE's write on the same bus, once per arm, when EQEs wait.
  if (eq.armed && eq.produced != eq.consumer && eq.spec.has_irq) {
    eq.armed = false;
    uint8_t word[4];
    for (int i = 0; i < 4; ++i) word[i] = static_cast<uint8_t>(eq.spec.irq_value >> (8 * i));
    (void)Dma(DmaKind::kEqEvent, 0).Write(eq.spec.irq_addr, word, sizeof word);
  }
}

}  // namespace qptwin::model::engine
