// SPDX-License-Identifier: GPL-2.0-only
#include "tools/ab/progress.h"

#include <fmt/format.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <stdexcept>

namespace cused::tools::ab {

namespace {

// The terminal's width, so that a live line never wraps (a wrapped line cannot be redrawn with
// a carriage return); 80 when it cannot be read.
std::size_t terminal_columns(std::FILE* out) {
  winsize size{};
  if (ioctl(fileno(out), TIOCGWINSZ, &size) == 0 && size.ws_col > 0) return size.ws_col;
  return 80;
}

}  // namespace

std::optional<ProgressMode> parse_progress_mode(const std::string& text, bool terminal) {
  if (text == "auto") return terminal ? ProgressMode::live : ProgressMode::plain;
  if (text == "live") return ProgressMode::live;
  if (text == "plain") return ProgressMode::plain;
  if (text == "none") return ProgressMode::none;
  return std::nullopt;
}

std::optional<RatioInterval> progress_interval(const ProgressState& state) {
  if (state.a.size() < 3) return std::nullopt;
  BootstrapOptions options;
  options.resamples = kProgressResamples;
  options.confidence = state.confidence;
  try {
    return bootstrap_ratio_of_medians(state.a, state.b, options);
  } catch (const std::invalid_argument&) {
    return std::nullopt;  // a median of A of 0: no ratio (the table says why at the end)
  }
}

std::string progress_line(const ProgressState& state,
                          const std::optional<RatioInterval>& interval) {
  std::string line = state.name + ": ";
  std::size_t pairs = state.a.size();
  if (pairs == 0 && state.warmup_done < state.warmup_total)
    line += fmt::format("warm-up {}/{}", state.warmup_done + 1, state.warmup_total);
  else if (state.planned_pairs > 0)
    line += fmt::format("{}/{} pairs", pairs, state.planned_pairs);
  else
    line += fmt::format("{} pair{}", pairs, pairs == 1 ? "" : "s");
  line += fmt::format(", {:.0f} s", state.elapsed.count());
  if (state.planned_pairs == 0) line += fmt::format(" / {:.0f} s", state.budget.count());
  if (pairs == 0) return line;
  double median_a = median(state.a);
  if (median_a == 0) return line + ", B/A - (median of A is 0)";
  line += fmt::format(", B/A {:.3f}", median(state.b) / median_a);
  if (!interval) return line + (pairs < 3 ? " (CI from 3 pairs)" : "");
  return line + fmt::format(", {:.3g} % CI [{:.3f}, {:.3f}]", interval->confidence * 100,
                            interval->low, interval->high);
}

Progress::Progress(std::FILE* out, ProgressMode mode, ProgressState initial,
                   std::chrono::duration<double> interval)
    : out_(out), mode_(mode), interval_(interval), state_(std::move(initial)) {
  if (mode_ != ProgressMode::none) thread_ = std::thread([this] { run(); });
}

Progress::~Progress() {
  bool interrupted = thread_.joinable();
  stop();
  // A measurement that failed leaves the live line unfinished: end it before the error.
  if (interrupted && mode_ == ProgressMode::live) fmt::print(out_, "\n");
}

void Progress::finish() {
  if (!thread_.joinable()) return;
  stop();
  print(true);
}

void Progress::stop() {
  if (!thread_.joinable()) return;
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

void Progress::warmup_done(int count) {
  std::lock_guard lock(mutex_);
  state_.warmup_done = count;
}

void Progress::pairs_measured(const std::vector<double>& a, const std::vector<double>& b) {
  std::lock_guard lock(mutex_);
  state_.a = a;
  state_.b = b;
}

void Progress::run() {
  // Live: drawn at once and redrawn every second, so that the elapsed time moves during a long
  // run. Plain: the first line after one interval.
  bool live = mode_ == ProgressMode::live;
  auto period = std::chrono::duration_cast<std::chrono::steady_clock::duration>(
      live ? std::chrono::duration<double>(1) : interval_);
  auto next = live ? start_ : start_ + period;
  std::unique_lock lock(mutex_);
  for (;;) {
    if (wake_.wait_until(lock, next, [this] { return stopping_; })) return;
    lock.unlock();
    print(false);
    lock.lock();
    next += period;
  }
}

void Progress::print(bool final) noexcept {
  try {
    print_line(final);
  } catch (const std::exception&) {
    // Progress is a courtesy: a line that cannot be made or written must not end the run.
  }
}

void Progress::print_line(bool final) {
  ProgressState state;
  {
    std::lock_guard lock(mutex_);
    state_.elapsed = std::chrono::steady_clock::now() - start_;
    state = state_;
  }
  // The bootstrap outside the lock: the measuring thread is never held up by it.
  if (state.a.size() != interval_pairs_ || !interval_of_pairs_) {
    interval_of_pairs_ = progress_interval(state);
    interval_pairs_ = state.a.size();
  }
  std::string text = progress_line(state, interval_of_pairs_);
  if (mode_ == ProgressMode::live) {
    std::size_t columns = terminal_columns(out_);
    if (text.size() >= columns) text.resize(columns - 1);
    fmt::print(out_, "\r{}\x1b[K{}", text, final ? "\n" : "");
  } else {
    fmt::print(out_, "binder-ab: {}{}\n", text, final ? " (done)" : "");
  }
  std::fflush(out_);
}

}  // namespace cused::tools::ab
