// The NIC's context caches on the data path (timing.h contract 5): which contexts a step
// looks up, and when the ones that missed are back from host memory.
#include <algorithm>

#include "model/engine/nic.h"
#include "model/engine/world.h"

namespace qptwin::model::engine {
namespace {

uint64_t WqeKey(const Qp& qp, const SendWqe& w) { return (uint64_t{qp.qpn} << 40) ^ w.serial; }

// The opcodes whose payload the send engine reads from host memory through the lkeys.
bool ReadsPayload(const SendWqe& w) {
  switch (w.wr.opcode) {
    case WrOpcode::kSend:
    case WrOpcode::kSendWithImm:
    case WrOpcode::kSendWithInv:
    case WrOpcode::kRdmaWrite:
    case WrOpcode::kRdmaWriteWithImm: return !w.is_inline;
    default: return false;
  }
}

}  // namespace

uint64_t Nic::FetchMisses(uint64_t ready_ns, uint32_t misses, uint64_t bytes, uint32_t overlap,
                          uint64_t* unit_free_ns) {
  if (misses == 0) return ready_ns;
  const Timing& t = profile().timing;
  const uint64_t round_trip = t.cache.miss_ns ? t.cache.miss_ns : t.nic.pcie_read_ns;
  const uint64_t issue = round_trip / std::max<uint32_t>(1, overlap);
  // The fetch unit issues one context read every `issue` ns; the last of the batch is back
  // a round trip after it left; the bytes also queue on the PCIe read channel.
  const uint64_t begin = std::max({ready_ns, world_->events().Now(), *unit_free_ns});
  *unit_free_ns = begin + misses * issue;
  const uint64_t back = begin + (misses - 1) * issue + round_trip;
  return std::max(back, world_->OccupyDmaRead(index_, begin, bytes));
}

void Nic::PrefetchWqe(const Qp& qp, const SendWqe& w) {
  if (cache_.enabled()) cache_.Insert(CacheKind::kWqe, WqeKey(qp, w));
}

uint64_t Nic::RetireWqeReady(const Qp& qp, const SendWqe& w, bool look_up) {
  const uint64_t now = world_->events().Now();
  if (!cache_.enabled() || !look_up) return now;
  uint64_t ready = now;
  if (!cache_.Lookup(CacheKind::kWqe, WqeKey(qp, w))) {
    const Timing& t = profile().timing;
    const bool own_wqe_unit = t.cache.wqe_miss_overlap != 0;
    ready = FetchMisses(now, 1, t.nic.wqe_bytes,
                        own_wqe_unit ? t.cache.wqe_miss_overlap : t.cache.miss_overlap,
                        own_wqe_unit ? &wqe_fetch_free_ns_ : &fetch_free_ns_);
  }
  // The entry stays until the LRU evicts it (a cache does not invalidate a line because its
  // WQE retired): retired WQEs share the capacity with the ones still outstanding.
  return ready;
}

void Nic::InstallQpContext(const Qp& qp) {
  if (cache_.enabled()) cache_.Insert(CacheKind::kQpc, qp.qpn);
}

void Nic::InstallMrContexts(const Mr& mr) {
  if (!cache_.enabled()) return;
  cache_.Insert(CacheKind::kMpt, mr.lkey);  // lkey == rkey (memory.h contract 2)
  cache_.SetRegionBase(mr.lkey >> 8, reinterpret_cast<uint64_t>(mr.buf));
  const uint64_t page = std::max<uint32_t>(1, profile().timing.cache.page_bytes);
  const uint64_t base = reinterpret_cast<uint64_t>(mr.buf);
  const uint64_t pages = (mr.length + page - 1) / page;
  // Only the last `entries` of a larger region can stay: insert no more than those.
  const uint64_t keep = std::min<uint64_t>(pages, cache_.capacity(CacheKind::kMtt));
  for (uint64_t i = pages - keep; i < pages; ++i) {
    cache_.InsertPages(mr.lkey >> 8, base + i * page, 1);
  }
}

uint64_t Nic::SendContextsReady(const Qp& qp, const SendWqe& w, uint64_t ready_ns) {
  if (!cache_.enabled()) return ready_ns;
  const Timing& t = profile().timing;
  uint32_t misses = 0;
  uint64_t bytes = 0;
  if (!cache_.Lookup(CacheKind::kQpc, qp.qpn)) {
    ++misses;
    bytes += t.cache.qpc_bytes;
  }
  // Evicted since the doorbell's fetch (more WQEs posted since than the cache holds, or a
  // retransmission long after): read again, on the WQE unit when it has its own.
  const bool own_wqe_unit = t.cache.wqe_miss_overlap != 0;
  uint32_t wqe_misses = 0;
  if (!cache_.Lookup(CacheKind::kWqe, WqeKey(qp, w))) {
    ++(own_wqe_unit ? wqe_misses : misses);
    bytes += t.nic.wqe_bytes;
  }
  if (ReadsPayload(w)) {
    for (const Sge& s : w.wr.sg_list) {
      if (s.length == 0) continue;
      if (!cache_.Lookup(CacheKind::kMpt, s.lkey)) {
        ++misses;
        bytes += t.cache.mpt_bytes;
      }
      const uint32_t pages = cache_.LookupPages(s.lkey >> 8, s.addr, s.length);
      misses += pages;
      bytes += uint64_t{pages} * t.cache.mtt_bytes;
    }
  }
  if (wqe_misses == 0) {
    return FetchMisses(ready_ns, misses, bytes, t.cache.miss_overlap, &fetch_free_ns_);
  }
  // Both units start on the step's misses at once; the WQE read's bytes share the DMA read
  // channel with the contexts'.
  const uint64_t wqe_bytes = uint64_t{wqe_misses} * t.nic.wqe_bytes;
  const uint64_t contexts =
      FetchMisses(ready_ns, misses, bytes - wqe_bytes, t.cache.miss_overlap, &fetch_free_ns_);
  const uint64_t wqes =
      FetchMisses(ready_ns, wqe_misses, wqe_bytes, t.cache.wqe_miss_overlap, &wqe_fetch_free_ns_);
  return std::max(contexts, wqes);
}

uint64_t Nic::RequestContextsReady(const Qp& qp, const Packet& pkt) {
  const uint64_t now = world_->events().Now();
  if (!cache_.enabled()) return now;
  const CacheTiming& c = profile().timing.cache;
  uint32_t misses = 0;
  uint64_t bytes = 0;
  if (!cache_.Lookup(CacheKind::kQpc, qp.qpn)) {
    ++misses;
    bytes += c.qpc_bytes;
  }
  uint64_t len = 0;
  if (pkt.kind == PacketKind::kWrite) len = pkt.data.size();
  if (pkt.kind == PacketKind::kReadReq) len = pkt.length;
  if (pkt.kind == PacketKind::kAtomic) len = 8;
  if (pkt.kind == PacketKind::kWrite || pkt.kind == PacketKind::kReadReq ||
      pkt.kind == PacketKind::kAtomic) {
    if (!cache_.Lookup(CacheKind::kMpt, pkt.rkey)) {
      ++misses;
      bytes += c.mpt_bytes;
    }
    const uint32_t pages = cache_.LookupPages(pkt.rkey >> 8, pkt.remote_addr, len);
    misses += pages;
    bytes += uint64_t{pages} * c.mtt_bytes;
  }
  return FetchMisses(now, misses, bytes, c.miss_overlap, &fetch_free_ns_);
}

}  // namespace qptwin::model::engine
