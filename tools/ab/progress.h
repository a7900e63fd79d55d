// SPDX-License-Identifier: GPL-2.0-only
// binder-ab's progress while one row is measured: on a terminal, one line redrawn in place (pairs
// done, elapsed / budget, the current B/A and its interval); elsewhere (a log, CI) a plain line
// every `interval`, so that a 60-second row is never silent. Written to stderr, beside the table
// on stdout, so scripts that read the table are not disturbed.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "tools/ab/statistics.h"

namespace cused::tools::ab {

enum class ProgressMode { none, live, plain };

// "auto" (live on a terminal, plain otherwise), "live", "plain" or "none"; nullopt otherwise.
std::optional<ProgressMode> parse_progress_mode(const std::string& text, bool terminal);

// What one progress line tells.
struct ProgressState {
  std::string name{};  // the row
  int warmup_done = 0, warmup_total = 0;
  std::vector<double> a{}, b{};  // the measured pairs so far
  int planned_pairs = 0;         // --runs; 0 = as many as the budget allows
  std::chrono::duration<double> elapsed{}, budget{};
  double confidence = 0.95;
};

// The interval on a progress line comes from this many resamples (the table's uses
// --resamples): cheap enough to recompute while the next run is measured.
inline constexpr int kProgressResamples = 1000;

// The interval of the pairs so far (kProgressResamples), from three pairs on; nullopt before.
std::optional<RatioInterval> progress_interval(const ProgressState& state);

// "payload 0: 37 pairs, 21 s / 60 s, B/A 1.004, 95 % CI [0.981, 1.027]" (with --runs "37/50
// pairs, 21 s"); before three pairs "(CI from 3 pairs)"; during the warm-up "warm-up 1/1".
std::string progress_line(const ProgressState& state, const std::optional<RatioInterval>& interval);

class Progress {
 public:
  // Starts the clock; a thread prints a line every `interval` (plain) or redraws every second
  // (live) until finish(), which prints the final line.
  Progress(std::FILE* out, ProgressMode mode, ProgressState initial,
           std::chrono::duration<double> interval);
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  void warmup_done(int count);
  void pairs_measured(const std::vector<double>& a, const std::vector<double>& b);
  // The row is measured: the last line, with "(done)" when plain.
  void finish();

 private:
  void run();
  void stop();
  void print(bool final) noexcept;
  void print_line(bool final);

  std::FILE* out_;
  ProgressMode mode_;
  std::chrono::duration<double> interval_;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  ProgressState state_;
  // Only the printing thread uses these: the interval is recomputed when a pair was added.
  std::optional<RatioInterval> interval_of_pairs_;
  std::size_t interval_pairs_ = 0;
  std::thread thread_;  // last: started once everything above exists
};

}  // namespace cused::tools::ab
