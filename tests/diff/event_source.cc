// SPDX-License-Identifier: GPL-2.0-only
#include "tests/diff/event_source.h"

#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <system_error>

#include "uapi/cused.h"

namespace cused::diff {

namespace {

void write_text(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::trunc);
  out << text;
  out.flush();
  if (!out) throw std::runtime_error("cannot write '" + text + "' to " + path);
}

std::vector<std::string> read_lines(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

}  // namespace

TracefsEvents::TracefsEvents(std::string tracefs) : tracefs_(std::move(tracefs)) {
  // Per CPU; a script's events are a few hundred KB at most, the default 1.4 MB could overrun
  // and lose the oldest (a lost event reads as a difference).
  write_text(tracefs_ + "/buffer_size_kb", "8192");
  write_text(tracefs_ + "/tracing_on", "0");
  write_text(tracefs_ + "/events/binder/enable", "1");
}

TracefsEvents::~TracefsEvents() {
  try {
    write_text(tracefs_ + "/events/binder/enable", "0");
    write_text(tracefs_ + "/tracing_on", "1");  // tracefs's default
  } catch (const std::exception&) {
    // Left enabled: the guest that ran the scripts ends with this program.
  }
}

void TracefsEvents::start() {
  write_text(tracefs_ + "/trace", "");  // opening it for writing with O_TRUNC clears the buffer
  write_text(tracefs_ + "/tracing_on", "1");
}

std::vector<std::string> TracefsEvents::stop() {
  write_text(tracefs_ + "/tracing_on", "0");
  return read_lines(tracefs_ + "/trace");
}

CusedEvents::CusedEvents(const std::string& control, std::string file)
    : control_(std::filesystem::path(control).parent_path().string()), file_(std::move(file)) {
  if (!control_.ok())
    throw std::system_error(control_.failure().err, std::generic_category(),
                            control_.failure().what);
  if (file_.size() >= sizeof(uapi::cused_trace::path) || file_.empty() || file_[0] != '/')
    throw std::runtime_error("the trace file must be an absolute path: " + file_);
}

void CusedEvents::trace(const std::string& path) const {
  auto result = control_.trace(path);
  if (auto* failure = std::get_if<binderctl::Failure>(&result))
    throw std::system_error(failure->err, std::generic_category(), failure->what);
}

void CusedEvents::start() { trace(file_); }

std::vector<std::string> CusedEvents::stop() {
  trace("");  // the daemon has written what it held when this returns
  return read_lines(file_);
}

}  // namespace cused::diff
