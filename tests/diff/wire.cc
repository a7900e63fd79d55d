// SPDX-License-Identifier: GPL-2.0-only
#include "tests/diff/wire.h"

#include <sys/socket.h>

#include <cerrno>
#include <cstring>

namespace cused::diff {

namespace {

constexpr std::size_t kMaxMessage = 64 * 1024;

bool send_all(int fd, std::uint32_t step, std::uint8_t thread, std::span<const std::uint8_t> body) {
  std::vector<std::uint8_t> packet(sizeof step + sizeof thread + body.size());
  std::memcpy(packet.data(), &step, sizeof step);
  packet[sizeof step] = thread;
  std::memcpy(packet.data() + sizeof step + sizeof thread, body.data(), body.size());
  ssize_t n;
  do n = ::send(fd, packet.data(), packet.size(), MSG_NOSIGNAL);
  while (n < 0 && errno == EINTR);
  return n == static_cast<ssize_t>(packet.size());
}

bool receive_packet(int fd, std::uint32_t& step, std::uint8_t& thread,
                    std::vector<std::uint8_t>& body) {
  std::vector<std::uint8_t> packet(kMaxMessage);
  ssize_t n;
  do n = ::recv(fd, packet.data(), packet.size(), 0);
  while (n < 0 && errno == EINTR);
  if (n < static_cast<ssize_t>(sizeof step + sizeof thread)) return false;
  std::memcpy(&step, packet.data(), sizeof step);
  thread = packet[sizeof step];
  body.assign(packet.begin() + sizeof step + sizeof thread, packet.begin() + n);
  return true;
}

}  // namespace

bool send_step(int fd, const StepMessage& message) {
  return send_all(fd, message.step, 0, message.bytes);
}

std::optional<StepMessage> receive_step(int fd) {
  StepMessage message;
  std::uint8_t unused;
  if (!receive_packet(fd, message.step, unused, message.bytes)) return std::nullopt;
  return message;
}

bool send_result(int fd, const ResultMessage& message) {
  return send_all(
      fd, message.step, message.thread,
      std::span(reinterpret_cast<const std::uint8_t*>(message.line.data()), message.line.size()));
}

std::optional<ResultMessage> receive_result(int fd) {
  ResultMessage message;
  std::vector<std::uint8_t> body;
  if (!receive_packet(fd, message.step, message.thread, body)) return std::nullopt;
  message.line.assign(body.begin(), body.end());
  return message;
}

}  // namespace cused::diff
