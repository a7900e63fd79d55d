#include "tests/diff/event_source.h"

#include <fcntl.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
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
}

void TracefsEvents::start() {
  write_text(tracefs_ + "/trace", "");  // opening it for writing with O_TRUNC clears the buffer
  write_text(tracefs_ + "/events/binder/enable", "1");
}

std::vector<std::string> TracefsEvents::stop() {
  write_text(tracefs_ + "/events/binder/enable", "0");
  return read_lines(tracefs_ + "/trace");
}

CusedEvents::CusedEvents(const std::string& control, std::string file)
    : fd_(::open(control.c_str(), O_RDWR | O_CLOEXEC)), file_(std::move(file)) {
  if (fd_ < 0) throw std::system_error(errno, std::generic_category(), "open " + control);
  if (file_.size() >= sizeof(uapi::cused_trace::path) || file_.empty() || file_[0] != '/')
    throw std::runtime_error("the trace file must be an absolute path: " + file_);
}

CusedEvents::~CusedEvents() { ::close(fd_); }

void CusedEvents::trace(bool start) const {
  uapi::cused_trace argument{};
  argument.start = start;
  if (start) std::memcpy(argument.path, file_.c_str(), file_.size() + 1);
  if (::ioctl(fd_, uapi::CUSED_CTL_TRACE, &argument) != 0)
    throw std::system_error(errno, std::generic_category(), start ? "trace start" : "trace stop");
}

void CusedEvents::start() { trace(true); }

std::vector<std::string> CusedEvents::stop() {
  trace(false);  // the daemon has written what it held when this returns
  return read_lines(file_);
}

}  // namespace cused::diff
