#include "examples/practice/batching.h"

#include <algorithm>
#include <cerrno>

namespace qptwin::practice {
namespace {
constexpr int kPollBatch = 64;
}  // namespace

int BatchPoster::Init() {
  if (dev_ == nullptr || opts_.signal_every == 0) return EINVAL;
  QpAttr attr;
  QpInitAttr init;
  if (int err = dev_->QueryQp(qp_, &attr, &init)) return err;
  if (int err = dev_->QpNum(qp_, &qp_num_)) return err;
  depth_ = attr.cap.max_send_wr;
  if (depth_ == 0) return EINVAL;
  cq_ = init.send_cq;
  sig_all_ = init.sq_sig_all;
  return 0;
}

int BatchPoster::Post(const std::vector<SendWr>& wrs, size_t* posted) {
  if (posted == nullptr || depth_ == 0) return EINVAL;
  *posted = 0;
  std::vector<SendWr> chunk;
  while (*posted < wrs.size()) {
    if (outstanding() >= depth_) {
      if (int err = Poll()) return err;
      if (outstanding() >= depth_) {
        ++stats_.reclaim_waits;
        if (int err = WaitOne(opts_.reclaim_timeout_ns)) return err;
        continue;
      }
    }
    size_t room = depth_ - outstanding();
    size_t n = std::min(room, wrs.size() - *posted);
    if (opts_.max_per_call > 0) n = std::min<size_t>(n, opts_.max_per_call);
    chunk.clear();
    std::vector<Slot> slots;
    for (size_t i = 0; i < n; ++i) {
      const SendWr& in = wrs[*posted + i];
      Slot s;
      s.seq = next_seq_ + i;
      s.user_wr_id = in.wr_id;
      s.user_signaled = sig_all_ || (in.send_flags & send_flag::kSignaled) != 0;
      bool last_of_call = *posted + i + 1 == wrs.size();
      bool fills_sq = outstanding() + i + 1 == depth_;
      bool nth = since_signal_ + 1 >= opts_.signal_every;
      bool signaled = s.user_signaled || nth || last_of_call || fills_sq;
      since_signal_ = signaled ? 0 : since_signal_ + 1;
      SendWr wr = in;
      wr.wr_id = s.seq;
      wr.send_flags = signaled ? (in.send_flags | send_flag::kSignaled)
                               : (in.send_flags & ~send_flag::kSignaled);
      if (signaled) ++stats_.signaled;
      chunk.push_back(std::move(wr));
      slots.push_back(s);
    }
    size_t bad = chunk.size();
    int err = dev_->PostSend(qp_, chunk, &bad);
    ++stats_.post_calls;
    size_t ok = err ? std::min(bad, chunk.size()) : chunk.size();
    for (size_t i = 0; i < ok; ++i) window_.push_back(slots[i]);
    for (size_t i = ok; i < chunk.size(); ++i) {
      if (chunk[i].send_flags & send_flag::kSignaled) --stats_.signaled;
    }
    next_seq_ += ok;
    stats_.posted += ok;
    *posted += ok;
    if (err) return err;
  }
  return 0;
}

int BatchPoster::Poll() {
  for (;;) {
    WorkCompletion wc[kPollBatch];
    int n = dev_->PollCq(cq_, kPollBatch, wc);
    if (n < 0) return -n;
    for (int i = 0; i < n; ++i) OnCqe(wc[i]);
    if (n < kPollBatch) return 0;
  }
}

int BatchPoster::WaitOne(uint64_t timeout_ns) {
  std::vector<WorkCompletion> got;
  int err = dev_->WaitForCompletions(cq_, 1, timeout_ns, &got);
  for (const WorkCompletion& wc : got) OnCqe(wc);
  if (err) return err;
  return Poll();
}

int BatchPoster::WaitIdle(uint64_t timeout_ns) {
  if (int err = Poll()) return err;
  while (!window_.empty()) {
    if (int err = WaitOne(timeout_ns)) return err;
  }
  return 0;
}

void BatchPoster::Absorb(const std::vector<WorkCompletion>& wcs) {
  for (const WorkCompletion& wc : wcs) OnCqe(wc);
}

void BatchPoster::OnCqe(const WorkCompletion& wc) {
  if (wc.qp_num != qp_num_) {
    others_.push_back(wc);
    return;
  }
  ++stats_.cqes;
  if (window_.empty() || wc.wr_id < window_.front().seq || wc.wr_id > window_.back().seq) {
    others_.push_back(wc);  // not one of ours (cannot happen with a dedicated send CQ)
    return;
  }
  // IBTA in-order completion: a CQE for WR k means every earlier WR of this SQ is done,
  // and those without a CQE of their own completed successfully.
  while (window_.front().seq < wc.wr_id) {
    window_.pop_front();
    ++stats_.silent;
  }
  Slot s = window_.front();
  window_.pop_front();
  if (s.user_signaled || wc.status != WcStatus::kSuccess) {
    WorkCompletion out = wc;
    out.wr_id = s.user_wr_id;
    completions_.push_back(out);
    ++stats_.delivered;
  } else {
    ++stats_.silent;
  }
}

std::vector<WorkCompletion> BatchPoster::TakeCompletions() {
  std::vector<WorkCompletion> out;
  out.swap(completions_);
  return out;
}

std::vector<WorkCompletion> BatchPoster::TakeOthers() {
  std::vector<WorkCompletion> out;
  out.swap(others_);
  return out;
}

Outstanding BatchPoster::DrainTarget() const {
  Outstanding o;
  if (!window_.empty()) o.last_send_wr_id = window_.back().seq;
  return o;
}

}  // namespace qptwin::practice
