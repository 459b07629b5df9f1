// ibv_post_send / ibv_post_recv on the model: the rules are spec/posting_rules.h's (R2-R5);
// this file adds the host and doorbell time and puts the WQEs on the queues.
#include <algorithm>
#include <cerrno>
#include <cstring>

#include "spec/posting_rules.h"
#include "model/engine/image_bytes.h"
#include "model/engine/nic.h"
#include "model/engine/send_wqe_image.h"
#include "model/engine/world.h"

namespace qptwin::model::engine {

bool Nic::InlineSourceReadable(const std::vector<Sge>& sges) const {
  for (const Sge& s : sges) {
    if (s.length == 0) continue;
    bool found = false;
    for (int i = 0; i < world_->nic_count() && !found; ++i) {
      found = world_->nic(i)->mrs_.AnyContains(SgeSpan(&s, 1));
    }
    if (!found) return false;
  }
  return true;
}

bool Nic::InlineFromBusAddress(const std::vector<Sge>& sges) const {
  for (int i = 0; i < world_->nic_count(); ++i) {
    if (world_->nic(i)->mrs_.AnyAtBusAddress(SgeSpan(sges))) return true;
  }
  return false;
}

size_t Nic::FirstUnfetched(const Qp& qp) const {
  size_t first = qp.sq.size();
  while (first > 0 && !qp.sq[first - 1].fetched && !qp.sq[first - 1].ghost) --first;
  return first;
}

namespace {
// The inline data a WQE's image carries (send_wqe_image.h).
uint32_t InlineLen(const SendWqe& w) {
  return w.is_inline && w.inline_data ? static_cast<uint32_t>(w.length) : 0u;
}
}  // namespace

uint64_t Nic::SqStride(const QpCap& cap) {
  return (SendWqeImage::SlotBytes(cap.max_send_sge, cap.max_inline_data) + 15) & ~size_t{15};
}

bool Nic::SqSlot(Qp& qp, uint32_t slot, size_t image_bytes, uint64_t* at) {
  // send_wqe_image.h contract 3. The storage grows by doubling up to the ring's slots, as
  // the posts reach them (a deep queue that holds a few WQEs costs a few slots' memory). The
  // posting rules keep every image within the slot the granted limits size; should one not
  // fit, the slots are laid out again larger (the images kept), never written past. A ring
  // in queue memory holds all its slots from the start and never grows: 0 for an image too
  // large (false: the WQE is then malformed, never written past: host_bus.h contract 7).
  if (qp.sq_block) {
    *at = qp.sq_block.addr() + size_t{slot} * qp.sq_stride;
    return image_bytes <= qp.sq_stride;
  }
  const size_t want = std::max(
      SendWqeImage::SlotBytes(qp.cap.max_send_sge, qp.cap.max_inline_data), image_bytes);
  if (slot < qp.sq_slots_held && want <= qp.sq_stride) {
    *at = Addr(&qp.sq_buf[slot * qp.sq_stride]);
    return true;
  }
  const size_t stride = (std::max(want, qp.sq_stride) + 15) & ~size_t{15};
  size_t held = std::max<size_t>(qp.sq_slots_held, 4);
  while (held <= slot) held *= 2;
  held = std::min(held, qp.send_ring_slots());
  std::unique_ptr<uint8_t[]> grown(new uint8_t[held * stride]);
  for (size_t i = 0; i < qp.sq_slots_held; ++i) {
    std::memcpy(&grown[i * stride], &qp.sq_buf[i * qp.sq_stride], qp.sq_stride);
  }
  qp.sq_buf = std::move(grown);
  qp.sq_stride = stride;
  qp.sq_slots_held = held;
  *at = Addr(&qp.sq_buf[slot * stride]);
  return true;
}

void Nic::WriteWqeImages(Qp& qp, size_t first) {
  if (first >= qp.sq.size()) return;
  HostBus& cpu = Cpu(DmaKind::kSendWqe, qp.qpn);  // the provider's writes (host_bus.h 7)
  std::vector<uint8_t> scratch;
  for (size_t i = first; i < qp.sq.size(); ++i) {
    SendWqe& w = qp.sq[i];
    const uint32_t inline_len = InlineLen(w);
    const size_t bytes = SendWqeImage::Bytes(w.wr, inline_len);
    uint64_t at = 0;
    if (!SqSlot(qp, w.slot, bytes, &at)) {
      w.image_lost = true;  // not written: malformed (host_bus.h contract 7)
      continue;
    }
    if (!cpu.Direct(at, bytes) && scratch.size() < bytes) scratch.resize(bytes);
    w.image_lost = !CpuPut(cpu, at, bytes, scratch.data(), [&](uint8_t* image) {
      SendWqeImage::Encode(w.wr, w.inline_data.get(), inline_len, image);
      SendWqeImage::PutIndex(image, w.post_index);
    });
  }
}

void Nic::RingDoorbell(Qp& qp, uint64_t host_ns) {
  // The post wrote every image (WriteWqeImages: each WR at its post, so all the NIC has not
  // fetched; doorbell_port.h contract 1).
  const size_t first = FirstUnfetched(qp);
  DoorbellWrite db;
  db.qpn = qp.qpn;
  db.now_ns = world_->events().Now();
  db.host_ns = host_ns;
  db.producer = static_cast<uint32_t>(qp.sq_posts);  // contract 2
  // BlueFlame (timing.h wqe_by_mmio) pushes a single inline WQE with the doorbell.
  if (profile().timing.nic.wqe_by_mmio && qp.sq.size() - first == 1 &&
      (qp.sq[first].wr.send_flags & send_flag::kInline) != 0) {
    const SendWqe& w = qp.sq[first];
    const size_t bytes = SendWqeImage::Bytes(w.wr, InlineLen(w));
    uint64_t at = 0;
    (void)SqSlot(qp, w.slot, 0, &at);  // 0 bytes: always a slot
    if (!qp.sq_block) {
      db.images = reinterpret_cast<const uint8_t*>(at);
    } else if (!w.image_lost) {
      // The CPU copies the image it wrote to queue memory into the MMIO write.
      bf_image_.resize(bytes);
      HostBus& cpu = Cpu(DmaKind::kSendWqe, qp.qpn);
      if (const uint8_t* p = cpu.Direct(at, bytes)) {
        std::memcpy(bf_image_.data(), p, bytes);
        db.images = bf_image_.data();
      } else if (cpu.Read(at, bf_image_.data(), bytes)) {
        db.images = bf_image_.data();
      }
    }
    if (db.images) db.image_bytes = bytes;
  }
  doorbell_->Ring(*this, db);  // doorbell_port.h contract 1: OnDoorbell, maybe elsewhere
}

void DirectDoorbell::Ring(Nic& nic, const DoorbellWrite& db) {
  nic.OnDoorbell(db, db.host_lag_ns());  // doorbell_port.h contract 3: no path of its own
}

void Nic::OnDoorbell(const DoorbellWrite& db, uint64_t extra_ns) {
  auto it = by_qpn_.find(db.qpn);
  if (it == by_qpn_.end()) return;  // no such QP: a stray write, ignored
  Qp& qp = *it->second;
  // doorbell_port.h contract 2: the WQEs before the producer the NIC has not fetched (the
  // latest posts: FirstUnfetched stops at a fetched WQE or a ghost; the provider rings its
  // own producer). A driver of the program's own names WQEs past the provider's (6).
  if (db.from_driver) {
    OnDriverDoorbell(qp, db.producer - static_cast<uint32_t>(qp.sq_posts), db, extra_ns);
    return;
  }
  FetchWqes(qp, FirstUnfetched(qp), db, extra_ns);
  Doorbell(qp);
}

void Nic::OnDriverDoorbell(Qp& qp, uint32_t count, const DoorbellWrite& db,
                           uint64_t extra_ns) {
  // doorbell_port.h contract 6.
  if (count == 0) return;  // nothing new: a ring again
  const bool runs = qp.state == QpState::kRts || qp.state == QpState::kSqd;
  const bool flushes = qp.state == QpState::kErr || qp.state == QpState::kSqe;
  const size_t slots = qp.send_ring_slots();
  // The queue's room is the posting rules' (max_send_wr outstanding), as a provider's.
  if ((!runs && !flushes) || !qp.sq_block || qp.type == QpType::kXrcRecv ||
      count > qp.cap.max_send_wr - std::min<size_t>(qp.cap.max_send_wr, qp.posted_wqes())) {
    ++ignored_rings_;
    return;
  }
  QueuesNote note(*this, qp);
  const Behaviour& b = profile().behaviour;
  const size_t first = qp.sq.size();
  for (uint32_t i = 0; i < count; ++i) {
    SendWqe w;
    w.serial = qp.next_serial++;
    w.post_index = static_cast<uint32_t>(qp.sq_posts);
    w.slot = static_cast<uint32_t>(qp.sq_posts++ % slots);
    w.from_ring = true;
    if (b.send_slot_keeps_status) TakeSlotCredit(qp, w);
    qp.sq.push_back(std::move(w));
  }
  if (runs && b.requester_walks_one_wqe_in_error) OverwriteStaleSlots(qp, first);
  FetchWqes(qp, FirstUnfetched(qp), db, extra_ns);
  if (flushes) {
    FlushPostedInError(qp, first);
    return;
  }
  // The driver's WQEs are the last `count` (OverwriteStaleSlots drops ghosts before them).
  for (size_t i = qp.sq.size() - count; i < qp.sq.size(); ++i) PrefetchWqe(qp, qp.sq[i]);
  Doorbell(qp);
}

bool Nic::AdoptRingWqe(const Qp& qp, SendWqe& w) {
  // doorbell_port.h contract 6: the posting rules a provider would have applied (the shape
  // of the WR; the queue's room was checked by the ring), judged as in RTS.
  SendWrFacts f;
  f.opcode = w.wr.opcode;
  f.num_sge = w.wr.sg_list.size();
  f.length = w.length;
  f.is_inline = w.is_inline;
  f.remote_addr = w.wr.remote_addr;
  const Ah* ah = qp.type == QpType::kUd ? FindAh(qp.ctx, w.wr.ah.id) : nullptr;
  f.ah_valid = ah != nullptr;
  // A BIND_MW's window is named by its rkey (WqeWr::mw_rkey): the requester's check of it
  // (MW_BIND_ERR) stands in for the post's.
  const PostQueue q{qp.type, QpState::kRts, qp.srq != nullptr, 0, qp.cap.max_send_wr,
                    qp.cap.max_send_sge, qp.cap.max_inline_data};
  if (CheckSendWr(q, f, profile().behaviour) != PostRule::kOk) return false;
  if (ah) w.ah_at_post = *ah;
  return true;
}

size_t Nic::SlotBytesRead(const Qp& qp, const SendWqe& w) const {
  // A driver's WQE (doorbell_port.h contract 6): its size is known only once it is read.
  return w.from_ring ? qp.sq_stride : SendWqeImage::Bytes(w.wr, InlineLen(w));
}

bool Nic::ReadSqSlots(Qp& qp, size_t first, size_t n, uint8_t* out) {
  // send_wqe_image.h contract 3: sq[first..first+n) lie in consecutive slots; one read from
  // the first slot to the end of the last image or, where the run wraps the ring, two.
  const size_t slots = qp.send_ring_slots();
  const size_t stride = qp.sq_stride;
  const uint32_t slot = qp.sq[first].slot;
  const size_t head = std::min(n, slots - slot);
  auto span = [&](size_t from, size_t count) {  // slots, the last one up to its image's end
    return (count - 1) * stride + SlotBytesRead(qp, qp.sq[first + from + count - 1]);
  };
  HostBus& bus = Dma(DmaKind::kSendWqe, qp.qpn);
  const uint64_t base = qp.sq_block ? qp.sq_block.addr() : Addr(qp.sq_buf.get());
  bool ok = bus.Read(base + size_t{slot} * stride, out, span(0, head));
  if (ok && head < n) ok = bus.Read(base, out + head * stride, span(head, n - head));
  return ok;
}

void Nic::FetchWqes(Qp& qp, size_t first, const DoorbellWrite& db, uint64_t extra_ns) {
  if (first >= qp.sq.size()) return;
  const size_t n = qp.sq.size() - first;
  const bool by_mmio = db.images && n == 1 &&
                       db.image_bytes >= SendWqeImage::Bytes(qp.sq[first].wr,
                                                             InlineLen(qp.sq[first]));
  const size_t stride = by_mmio ? db.image_bytes : qp.sq_stride;
  // timing.h contract 2: the NIC sees the ring doorbell_ns after it arrived, then fetches
  // the WQEs (a PCIe read round trip and their bytes), unless they came with it.
  const NicTiming& t = profile().timing.nic;
  uint64_t ready = world_->events().Now() + extra_ns + t.doorbell_ns;
  if (!by_mmio && t.pcie_gbps > 0) {
    ready += t.pcie_read_ns + (wqe_fetch_ps_.Ps(t.pcie_gbps, n * uint64_t{t.wqe_bytes}) + 999) / 1000;
  }
  if (wqe_fetch_.size() < n * stride) wqe_fetch_.resize(n * stride);
  bool failed = false;
  if (by_mmio) {
    std::memcpy(wqe_fetch_.data(), db.images, db.image_bytes);  // in the doorbell's MMIO write
  } else {
    // The WQEs a ring makes known are the latest posts (FirstUnfetched stops at a ghost) and
    // each post takes the next slot, so they are one run (two reads where it wraps).
    const uint64_t before = bus_->delay_total();
    failed = !ReadSqSlots(qp, first, n, wqe_fetch_.data());
    ready += bus_->delay_total() - before;  // host_bus.h contract 3
  }
  // ReadSqSlots' first read ends at the ring's end when the run wraps it.
  const size_t wrap = n > 1 ? std::min(n, qp.send_ring_slots() - qp.sq[first].slot) : n;
  for (size_t i = 0; i < n; ++i) {
    SendWqe& w = qp.sq[first + i];
    w.ready_ns = ready;
    w.fetched = true;
    // send_wqe_image.h contract 4: an image of another post (its slot was not written) is
    // malformed, as a failed fetch.
    const uint8_t* image = &wqe_fetch_[i * stride];
    // What was read of it: a whole slot, but for the run's last provider WQE its image's
    // size (ReadSqSlots), or the doorbell's bytes.
    const bool ends_a_read = i + 1 == n || i + 1 == wrap;
    const size_t read = by_mmio || !ends_a_read ? stride : SlotBytesRead(qp, w);
    if (failed || !SendWqeImage::IsPost(image, w.post_index) || !TakeImage(qp, w, image, read)) {
      // Its completion takes wr_id and opcode from the WQE as it stands: the provider's
      // fields, or what an image that did not hold together held.
      w.fetch_failed = true;
      // A driver's WQE has no provider's: the wr_id its header names (doorbell_port.h 6).
      if (w.from_ring && !failed) w.wr.wr_id = image::Get<uint64_t>(image, 0);
    }
  }
}

bool Nic::TakeImage(const Qp& qp, SendWqe& w, const uint8_t* image, size_t bytes) {
  // An image in host memory may hold anything (a program's module may write it): never
  // read past what was fetched, and a WQE that does not hold together is malformed.
  if (SendWqeImage::DeclaredBytes(image) > bytes) return false;
  SendWqeImage::Decode(image, &w.wr, &w.inline_data,
                       w.is_inline && w.inline_data ? w.length : 0);
  TakeFactsFromImage(qp, w);
  if (!OpcodeModelled(w.wr.opcode) ||
      (w.is_inline && SendWqeImage::InlineBytes(image) != w.length)) {
    // Its inline bytes are not its length: none kept (GhostOf and the requester copy
    // `length` bytes of an inline WQE's buffer).
    w.is_inline = false;
    w.inline_data.reset();
    if (!OpcodeModelled(w.wr.opcode)) w.wr.opcode = WrOpcode::kSend;  // for its CQE
    return false;
  }
  return !w.from_ring || AdoptRingWqe(qp, w);
}

void Nic::TakeFactsFromImage(const Qp& qp, SendWqe& w) {
  // Step (b) of model/systemc/README.md: what the NIC knows of a WQE comes from the image it
  // fetched, as a NIC's does. They equal what the post recorded (spec FactsOf): checked
  // with a probe over the 510 transcripts, 40 s of generated sequences and every suite.
  uint64_t length = 0;
  for (const Sge& s : w.wr.sg_list) length += s.length;
  const bool is_inline = (w.wr.send_flags & send_flag::kInline) != 0;
  const bool signaled = qp.init.sq_sig_all || (w.wr.send_flags & send_flag::kSignaled) != 0;
  w.length = length;
  w.is_inline = is_inline;
  w.signaled = signaled;
}

uint64_t Nic::UnfetchedWrId(Qp& qp, const SendWqe& w) {
  uint64_t at = 0;
  if (qp.sq_block) {
    at = qp.sq_block.addr() + size_t{w.slot} * qp.sq_stride;
  } else if (w.slot < qp.sq_slots_held) {
    at = Addr(&qp.sq_buf[w.slot * qp.sq_stride]);
  } else {
    return w.wr.wr_id;  // never written: no slot holds it
  }
  uint8_t header[SendWqeImage::kHeaderBytes];
  if (!Dma(DmaKind::kSendWqe, qp.qpn).Read(at, header, sizeof header) ||
      !SendWqeImage::IsPost(header, w.post_index)) {
    return w.wr.wr_id;
  }
  return image::Get<uint64_t>(header, 0);  // send_wqe_image.h contract 1: header byte 0
}

bool Nic::RereadWqe(Qp& qp, size_t index) {
  // send_wqe_image.h contract 3: a resent WQE comes from its slot again.
  // Never written: nothing to read (the caller checks fetched).
  if (!qp.sq_buf && !qp.sq_block) return true;
  if (wqe_fetch_.size() < qp.sq_stride) wqe_fetch_.resize(qp.sq_stride);
  if (!ReadSqSlots(qp, index, 1, wqe_fetch_.data())) return false;
  SendWqe& w = qp.sq[index];
  // send_wqe_image.h contract 4: its slot holds another post's image (host_bus.h 7).
  if (!SendWqeImage::IsPost(wqe_fetch_.data(), w.post_index)) return false;
  return TakeImage(qp, w, wqe_fetch_.data(), SlotBytesRead(qp, w));
}

int Nic::PostSend(uint32_t ctx, uint32_t h, const std::vector<SendWr>& wrs, size_t* bad) {
  Qp* qp = FindQp(ctx, h);
  // An XRC_RECV QP has no send queue (ibv_create_qp_ex(3): it only receives through XRC
  // SRQs); mlx5 creates it without a SQ, so ibv_post_send has nothing to post to.
  if (!qp || qp->type == QpType::kXrcRecv) {
    if (bad) *bad = 0;
    return EINVAL;
  }
  QueuesNote note(*this, *qp);
  // Host: one call builds every WQE and rings one doorbell when its work is done (timing.h
  // contract 2); the NIC's share, from the doorbell on, is FetchWqes'.
  const HostTiming& host = profile().timing.host;
  const uint64_t host_done = ChargeHost(host.post_call_ns + wrs.size() * host.post_wr_ns);
  const size_t first_posted = qp->sq.size();  // this call's WQEs
  bool posted = false;
  bool flush_after = false;  // WRs posted in ERR, flushed once the list is in (below)
  // R2: a QP below RTS refuses the post. With post_send_below_rts_queues (rxe) the WRs are
  // queued first and the doorbell refuses afterwards (spec/posting_rules.h, contract 3).
  const Behaviour& b = profile().behaviour;
  const bool queue_anyway = SendBelowRts(qp->state) && b.post_send_below_rts_queues;
  PostQueue q{qp->type, qp->state, qp->srq != nullptr, qp->posted_wqes(),
              qp->cap.max_send_wr,
              qp->cap.max_send_sge, qp->cap.max_inline_data};
  for (size_t i = 0; i < wrs.size(); ++i) {
    const SendWr& wr = wrs[i];
    SendWrFacts f = FactsOf(wr);
    if (qp->type == QpType::kUd) f.ah_valid = FindAh(ctx, wr.ah.id) != nullptr;
    // Inline data is read from the program's memory without an lkey (rxe copies it in
    // rxe_post_send): any region registered on any device of the world is readable.
    if (f.is_inline) f.inline_source_registered = InlineSourceReadable(wr.sg_list);
    if (wr.opcode == WrOpcode::kBindMw) {
      const Mw* mw = mws_.ByHandle(wr.mw.id);
      const Mr* mr = mrs_.ByHandle(wr.bind_info.mr.id);
      f.bind_resolved = mw && mw->ctx == ctx && mr && mr->ctx == ctx;
    }
    q.outstanding = qp->posted_wqes();
    int err = PostRuleErrno(CheckSendWr(q, f, b, queue_anyway));
    const uint64_t len = f.length;
    const bool is_inline = f.is_inline;
    SendWqe w;
    // Inline data is copied now (the buffer may be reused at once); the model reads only
    // registered memory (kInlineUnregistered).
    if (!err && is_inline && len > 0) {
      w.inline_data.reset(new uint8_t[len]);
      // The provider's CPU copy, not the NIC's DMA (host_bus.h contract 4). From a region
      // at a bus address (memory.h contract 4) the CPU reads through its bus (host_bus.h
      // 7), labelled INLINE_READ; an error answer refuses the WR with EFAULT.
      if (InlineFromBusAddress(wr.sg_list)) {
        if (!mrs_.GatherTo(Cpu(DmaKind::kInlineRead, qp->qpn), wr.sg_list,
                           w.inline_data.get())) {
          err = EFAULT;
        }
      } else {
        (void)mrs_.GatherTo(DirectBus::Instance(), wr.sg_list, w.inline_data.get());
      }
    }
    if (err) {
      if (bad) *bad = i;
      WriteWqeImages(*qp, first_posted);  // the WRs accepted before this one
      // providers/rxe rxe_post_send rings the doorbell after its loop even when a WR was
      // refused: the WRs queued before (this call's or, after SQD/RTR -> RTS, earlier ones)
      // start (Behaviour::rts_waits_for_doorbell; measured: sequence 838, a refused post
      // started 15 WRs queued in SQD).
      if (posted && b.requester_walks_one_wqe_in_error) OverwriteStaleSlots(*qp, first_posted);
      if (posted || b.rts_waits_for_doorbell) RingDoorbell(*qp, host_done);
      if (flush_after) {
        FlushPostedInError(*qp, first_posted);
      } else if (!posted && qp->state == QpState::kErr && b.rts_waits_for_doorbell) {
        // None of this call's WRs is queued, yet the doorbell runs the requester in ERR:
        // it takes the WQE at req.wqe_index, if any, and has the completer drain the ring
        // (rxe_req.c req_next_wqe; measured: seed 20261243 sequence 15523, an atomic with a
        // 4-byte SGE refused in ERR moved the index on, so 12 WRs posted later brought the
        // producer round to it and none of them was flushed). Not when this call queued WRs:
        // its doorbell already ran the requester, whose walk in ERR the flush took (seed
        // 20261276 sequence 2852, docs/differences.md row 151).
        RequesterRunsInError(*qp);
      }
      return queue_anyway ? EINVAL : err;  // rxe: the doorbell's EINVAL wins
    }
    w.serial = qp->next_serial++;
    w.wr = wr;
    w.post_index = static_cast<uint32_t>(qp->sq_posts);
    w.slot = static_cast<uint32_t>(qp->sq_posts++ % qp->send_ring_slots());
    if (b.send_slot_keeps_status) TakeSlotCredit(*qp, w);
    if (qp->type == QpType::kUd) {
      if (const Ah* ah = FindAh(ctx, wr.ah.id)) w.ah_at_post = *ah;
    }
    if (wr.opcode == WrOpcode::kBindMw) NoteBindPosted(ctx, wr, &w);
    w.is_inline = is_inline;
    w.length = len;
    w.signaled = qp->init.sq_sig_all || (wr.send_flags & send_flag::kSignaled);
    w.ready_ns = host_done;  // the NIC's time for it: FetchWqes
    if (FlushedAtPost(true, qp->state, b)) {
      // In ERR the WRs of one call fill the ring before any is flushed (rxe: the completer
      // flushes them after ibv_post_send returns): a list longer than the queue is ENOMEM
      // at the first WR that does not fit, as the posting oracle judges a list.
      qp->sq.push_back(std::move(w));
      flush_after = true;
      continue;
    }
    PrefetchWqe(*qp, w);
    qp->sq.push_back(std::move(w));
    posted = true;
  }
  // The provider writes every accepted WR's image into its slot, rung or not (ERR, below
  // RTS): a flush reads them (UnfetchedWrId).
  WriteWqeImages(*qp, first_posted);
  if (flush_after) FlushPostedInError(*qp, first_posted);
  if (queue_anyway) {
    // Queued, not started: the requester starts them once the QP is in RTS (the NIC
    // fetches them at the ring that does).
    if (bad) *bad = wrs.size();
    return EINVAL;
  }
  if (posted && b.requester_walks_one_wqe_in_error) OverwriteStaleSlots(*qp, first_posted);
  if (posted) RingDoorbell(*qp, host_done);
  return 0;
}

int Nic::PostRecv(uint32_t ctx, uint32_t h, const std::vector<RecvWr>& wrs, size_t* bad) {
  Qp* qp = FindQp(ctx, h);
  // XRC QPs have no receive queue: XRC_SEND only sends, XRC_RECV receives into XRC SRQs.
  if (!qp || qp->type == QpType::kXrcSend || qp->type == QpType::kXrcRecv) {
    if (bad) *bad = 0;
    return EINVAL;
  }
  QueuesNote note(*this, *qp);
  const HostTiming& host = profile().timing.host;
  ChargeHost(host.post_call_ns + wrs.size() * host.post_wr_ns);
  PostQueue q{qp->type, qp->state, qp->srq != nullptr, qp->rq.size(), qp->cap.max_recv_wr,
              qp->cap.max_recv_sge, 0};
  for (size_t i = 0; i < wrs.size(); ++i) {
    q.outstanding = qp->rq.size();
    const int err = PostRuleErrno(CheckRecvWr(q, wrs[i].sg_list.size(), profile().behaviour));
    if (err) {
      if (bad) *bad = i;
      return err;
    }
    if (!qp->rq.push_back(wrs[i], Cpu(DmaKind::kRecvWqe, qp->qpn))) {  // recv_queue.h 6
      if (bad) *bad = i;
      return ENOMEM;
    }
    // R4: flushed at once in ERR; rxe: queued until the responder runs (recv_in_err_waits).
    if (FlushedAtPost(false, qp->state, profile().behaviour)) FlushRq(*qp);
  }
  return 0;
}

}  // namespace qptwin::model::engine
