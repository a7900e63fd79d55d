// SPDX-License-Identifier: GPL-2.0-only
#include "cused/request/failures.h"

#include <fmt/format.h>
#include <signal.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <new>
#include <system_error>

#include "core/sync/lock_guard.h"

namespace cused {

namespace {

constexpr std::array<std::string_view, static_cast<std::size_t>(RequestEntry::kCount)> kNames{
    "binderfs", "control", "binder_logs", "cuse", "run", "worker"};

std::size_t index_of(RequestEntry entry) { return static_cast<std::size_t>(entry); }

// The errno a request fails with, and a description of what was thrown.
std::pair<int, std::string> classify(std::exception_ptr error) {
  try {
    std::rethrow_exception(error);
  } catch (const std::bad_alloc& e) {
    return {ENOMEM, e.what()};
  } catch (const std::system_error& e) {
    int code = e.code().category() == std::generic_category() ||
                       e.code().category() == std::system_category()
                   ? e.code().value()
                   : 0;
    return {code > 0 && code < 4096 ? code : EIO, e.what()};
  } catch (const std::exception& e) {
    return {EIO, e.what()};
  } catch (...) {
    return {EIO, "an exception that is not a std::exception"};
  }
}

}  // namespace

std::string_view entry_name(RequestEntry entry) { return kNames.at(index_of(entry)); }

RequestFailures& RequestFailures::global() {
  static RequestFailures failures;
  return failures;
}

int RequestFailures::record(RequestEntry entry, std::string_view op,
                            std::exception_ptr error) noexcept {
  counts_[index_of(entry)].fetch_add(1, std::memory_order_relaxed);
  try {
    auto [err, what] = classify(error);
    fmt::print(stderr, "cused: {} {}: the handler failed ({}); that request fails with {}\n",
               entry_name(entry), op, what, std::strerror(err));
    return err;
  } catch (...) {
    return EIO;
  }
}

std::uint64_t RequestFailures::count(RequestEntry entry) const {
  return counts_[index_of(entry)].load(std::memory_order_relaxed);
}

void RequestFailures::print(std::string& out) const {
  out += "cused requests failed by an exception:";
  for (std::size_t i = 0; i < kNames.size(); ++i)
    out += fmt::format(" {} {}", kNames[i], counts_[i].load(std::memory_order_relaxed));
  out += '\n';
}

void RequestFailures::inject(RequestEntry entry, std::string op, unsigned times, Injected how) {
  sync::LockGuard guard(lock_);
  injections_.push_back({entry, std::move(op), times, how});
  armed_.store(true, std::memory_order_release);
}

void RequestFailures::maybe_inject(RequestEntry entry, std::string_view op) {
  if (!armed_.load(std::memory_order_acquire)) return;
  Injected how;
  {
    sync::LockGuard guard(lock_);
    auto it = std::find_if(injections_.begin(), injections_.end(), [&](const Injection& i) {
      return i.entry == entry && i.op == op && i.times > 0;
    });
    if (it == injections_.end()) return;
    how = it->how;
    --it->times;
  }
  switch (how) {
    case Injected::kThrow:
      throw InjectedFailure();
    case Injected::kCrash:
      raise(SIGSEGV);
      break;
    case Injected::kTerminate:
      std::terminate();
  }
}

bool parse_injections(std::string_view spec, std::string& error) {
  while (!spec.empty()) {
    std::string_view item = spec.substr(0, spec.find(','));
    spec.remove_prefix(std::min(spec.size(), item.size() + 1));
    auto colon = item.find(':');
    if (colon == std::string_view::npos) {
      error = fmt::format("'{}' is not ENTRY:OP[:N|crash|terminate]", item);
      return false;
    }
    std::string_view entry_text = item.substr(0, colon);
    std::string_view rest = item.substr(colon + 1);
    std::string_view op = rest.substr(0, rest.find(':'));
    std::string_view count = rest.size() > op.size() ? rest.substr(op.size() + 1) : "";
    auto entry = std::find(kNames.begin(), kNames.end(), entry_text);
    if (entry == kNames.end() || op.empty()) {
      error = fmt::format("'{}': unknown entry or empty op", item);
      return false;
    }
    unsigned times = 1;
    auto how = RequestFailures::Injected::kThrow;
    if (count == "crash") {
      how = RequestFailures::Injected::kCrash;
    } else if (count == "terminate") {
      how = RequestFailures::Injected::kTerminate;
    } else if (!count.empty()) {
      auto [end, ec] = std::from_chars(count.data(), count.data() + count.size(), times);
      if (ec != std::errc() || end != count.data() + count.size()) {
        error = fmt::format("'{}': '{}' is not a count", item, count);
        return false;
      }
    }
    RequestFailures::global().inject(static_cast<RequestEntry>(entry - kNames.begin()),
                                     std::string(op), times, how);
  }
  return true;
}

}  // namespace cused
