// The whole-surface sequence generator of the differential fuzzer (`qptwin fuzz
// --differential`): seeded random .qps scenarios (spec/scenario/FORMAT.md) over several QPs of
// every type (RC, UC, UD) on one or two devices, SRQs, shared and separate CQs, every opcode
// (zero-length, inline, multi-SGE, atomics, immediate), signaled/unsignaled mixes,
// legal/illegal/out-of-range modifies, queries, destroys in any order (also while in use),
// dereg while a WR is queued, bad keys of every kind, RNR, CQ overrun, SQD with queued WRs,
// RESET and reuse, and memory windows (generator_mw.cc, 12.3% of the random steps: alloc and
// dealloc of type 1 and 2, sometimes in another PD; ibv_bind_mw and BIND_MW with random
// rights and ranges, length 0, past the region, a region without MW_BIND; READ, WRITE and
// atomics through a window's rkey, valid, stale or from the wrong QP; LOCAL_INV and
// SEND_WITH_INV of window, region and dead keys; dereg of a region with windows bound).
//
// Contract:
//  1. GenerateScenario(seed, options) is a pure function of its arguments (std::mt19937_64,
//     whose output the C++ standard fixes): a seed replays its scenario exactly, whatever the
//     compiler (one random draw per statement: no operand order the language leaves open).
//  2. Every scenario parses (ParseScenario): every name is declared before use, no name is
//     reused, no expect= (the differential compares transcripts, not expectations).
//  3. Every scenario is bounded: at most options.actions random steps plus a fixed epilogue,
//     every poll/events wait has a timeout of at most options.poll_ms, and no outcome needs
//     more time than that on real rxe: RC timeout=11 (4.096 us * 2^11 = 8.4 ms; rxe: 3
//     jiffies, 12 ms) with
//     retry_cnt 0 or 1, rnr_retry 0 (no retry) or 7 (until a receive arrives),
//     min_rnr_timer=17 (3.84 ms) — no outcome depends on how many retries fit into a poll.
//     Before a command whose outcome depends on how far posted work got (query, modify,
//     destroy, fill/check, events), the scenario lets it finish (`advance us=2000`, 60000
//     after an RC send to a peer that may not answer, also before the next poll): the model runs only inside waits,
//     rxe runs the requester inside ibv_post_send and the rest right after.
//  4. XRC is not generated (rxe has no XRC; the differential's device is rxe).
//  5. The epilogue moves every live QP to ERR and drains every CQ, so every WR posted ends
//     in the transcript (flushed if nothing else).
//  6. No scenario can crash rxe 6.1: no LOCAL_INV / SEND_WITH_INV names the rkey of a type 2
//     window that may be FREE with that rkey (rxe_do_invalidate_mw: a NULL dereference),
//     no bind names a deregistered region (hw would pass a freed ibv_mr), and every window
//     step follows a settle.
#pragma once

#include <cstdint>
#include <string>

namespace qptwin::differential {

struct GeneratorOptions {
  int actions = 24;        // random steps after the set-up (1..actions of them)
  // Timeout of every poll and events wait (real time on hw): at least the (retry_cnt + 1)
  // * 12 ms in which rxe gives up on a silent peer -- also while it waits out an RNR NAK, as
  // its retransmit timer keeps running (ends with RETRY_EXC_ERR, tests/differential/found).
  uint64_t poll_ms = 30;
  bool two_devices = true; // may put a pair's QPs on two devices
};

std::string GenerateScenario(uint64_t seed, const GeneratorOptions& options = {});

// The seed of sequence `n` of a campaign seeded `run_seed` (SplitMix64 of both): one
// sequence replays without the ones before it, and shards need no coordination.
uint64_t SequenceSeed(uint64_t run_seed, uint64_t n);

}  // namespace qptwin::differential
