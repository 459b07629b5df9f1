// Simulated time in nanoseconds: the engine's only notion of time, and who runs the engine's
// sources (event_source.h) when they are due. The engine sees only this interface (no
// SystemC here); its one implementation is SystemC's scheduler, model/sim/sc_clock.h: each
// source a SystemC process woken by sc_event::notify(delay), time passing only in sc_start.
//
// Contract (every clock):
//  1. Sources run in (time, scheduling order) = Key order: same inputs, same order, every
//     run. A wake-up's Key comes from Reserve() at the moment the work was scheduled, so the
//     order is the one a heap of every pending Key would give (the engine's former clock,
//     whose transcripts this one reproduces byte for byte).
//  2. Time never goes backwards; Reserve() of a time in the past gives Now().
//  3. A source may wake itself or others (also at Now(): they run in the same step, after
//     the keys reserved before them).
//  4. RunUntil(done, deadline) runs due sources in order and checks done() after each one;
//     it returns true as soon as done() holds (time stays where it was, the sources still
//     due then run at the next AdvanceBy/RunUntil), else runs everything due at or before
//     deadline, moves Now() to deadline and returns done(). AdvanceBy(d) is RunUntil(never,
//     Now() + d) (saturating).
//  5. A Source (event_source.h: a block's FIFO of messages, its timers) keeps its own items
//     and holds one wake-up here for the earliest, as an sc_module holds one sc_event: the
//     clock holds a few wake-ups per block, never one per QP or per WR in flight. A source
//     calls Wake() only for a key not later than the one it has pending (or with none
//     pending); RunDue() may get a key the source no longer holds: it then runs nothing.
//  6. A Source is Add()ed before its first Wake() and Remove()d before it dies; a clock
//     outlives its sources (the World owns the clock and destroys it last).
//  7. Single-threaded: one thread uses a clock and its sources (sim::ScClock: the SystemC
//     kernel's thread, model/sim/kernel.h contract 4).
//  8. A source may say which block of which NIC it is (Where: the device's index in its
//     World and the Block). The order is contract 1's whatever a source says; a clock may
//     use it to give each block a process of its own (sim::ScClock contract 9: a NIC
//     module's named SystemC processes).
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

namespace qptwin::model::engine {

class EventQueue {
 public:
  // A wake-up's place in the order: its time, then when it was scheduled.
  struct Key {
    uint64_t time = 0;
    uint64_t seq = 0;
    bool operator==(const Key& o) const { return time == o.time && seq == o.seq; }
    bool operator<(const Key& o) const { return time != o.time ? time < o.time : seq < o.seq; }
  };
  // Contract 8: the blocks that keep sources (event_source.h): a NIC's, then the World's own.
  enum class Block : uint8_t {
    kNone,
    kPort,            // the port's link: messages on their way to the far NIC (World)
    kSendEngine,      // the send engine's ready list: QPs with WQEs to send (Nic)
    kCompleter,       // sends that wait for no answer, completed as their last byte leaves
    kTransportTimer,  // one transport (ACK) timer per QP
    kRnrTimer,        // RNR NAK waits
    kRetryLoop,       // the requester's retry skip loops
    kAnswerWait,      // the requester's wait for an answer before it goes on
    kRoceOut,         // messages to a RoCE peer outside the World
    // The World's own (Where::device -1):
    kCqeVisible,  // the times CQEs become visible (a wait for completions looks then)
    kRoceIn,      // datagrams from RoCE peers outside the World, on their way in
  };
  static constexpr int kBlocks = 11;
  static constexpr bool IsWorldBlock(Block b) { return b >= Block::kCqeVisible; }
  // A SystemC process's name for the block ("send_engine", ...); "" for kNone.
  static const char* BlockName(Block b) {
    static constexpr const char* kNames[kBlocks] = {
        "",          "port",       "send_engine", "completer",   "transport_timer", "rnr_timer",
        "retry_loop", "answer_wait", "roce_out", "cqe_visible", "roce_in"};
    return kNames[static_cast<int>(b)];
  }
  struct Where {
    int device = -1;  // the NIC's index in its World; -1: the World's own
    Block block = Block::kNone;
  };

  // Something that keeps items of its own (contract 5).
  class Source {
   public:
    Source() = default;
    explicit Source(Where where) : where_(where) {}
    virtual ~Source() = default;
    // The wake-up for `key` is due: run the item that has it (if it is still there).
    virtual void RunDue(const Key& key) = 0;
    const Where& where() const { return where_; }  // contract 8

   private:
    friend class EventQueue;
    int clock_index_ = -1;  // the clock's own bookkeeping (ScClock: its table of sources)
    Where where_;
  };

  virtual ~EventQueue() = default;

  uint64_t Now() const { return now_; }
  // The key of work scheduled now for time_ns (a past time becomes Now()).
  Key Reserve(uint64_t time_ns) { return Key{time_ns < now_ ? now_ : time_ns, seq_++}; }

  virtual void Add(Source* source) { (void)source; }
  virtual void Remove(Source* source) { (void)source; }
  // Calls source->RunDue(key) in key's place of the order (contract 5: replaces the pending
  // wake-up of `source`, which was not earlier).
  virtual void Wake(Source* source, const Key& key) = 0;

  // Contract 4.
  virtual void AdvanceBy(uint64_t delta_ns) = 0;
  virtual bool RunUntil(const std::function<bool()>& done, uint64_t deadline_ns) = 0;

 protected:
  static int& IndexOf(Source* s) { return s->clock_index_; }
  uint64_t now_ = 0;
  uint64_t seq_ = 0;
};

}  // namespace qptwin::model::engine
