// SPDX-License-Identifier: GPL-2.0-only
// cused/service_notify: the datagram systemd's Type=notify waits for (sd_notify(3)'s protocol),
// received on sockets bound the way systemd binds them: a path and an abstract name.
#include "cused/service_notify.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstddef>
#include <cstring>
#include <filesystem>
#include <string>

namespace cused {
namespace {

// A datagram socket bound to `name` ("/path" or "@abstract"), as a service manager listens.
class Listener {
 public:
  explicit Listener(const std::string& name) : fd_(socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0)) {
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    std::memcpy(address.sun_path, name.data(), name.size());
    if (name[0] == '@') address.sun_path[0] = '\0';
    auto length = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + name.size());
    bound_ = bind(fd_, reinterpret_cast<sockaddr*>(&address), length) == 0;
    timeval timeout{2, 0};
    setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  }
  ~Listener() { close(fd_); }
  bool bound() const { return bound_; }
  std::string receive() {
    char buffer[256];
    ssize_t got = recv(fd_, buffer, sizeof buffer, 0);
    return got < 0 ? std::string("(nothing)") : std::string(buffer, static_cast<std::size_t>(got));
  }

 private:
  int fd_;
  bool bound_ = false;
};

class ServiceNotify : public ::testing::Test {
 protected:
  void TearDown() override { unsetenv("NOTIFY_SOCKET"); }
};

TEST_F(ServiceNotify, SendsTheStateToASocketPath) {
  auto path =
      (std::filesystem::temp_directory_path() / ("cused-notify-test-" + std::to_string(getpid())))
          .string();
  Listener listener(path);
  ASSERT_TRUE(listener.bound());
  setenv("NOTIFY_SOCKET", path.c_str(), 1);
  EXPECT_TRUE(notify_service_manager("READY=1"));
  EXPECT_EQ(listener.receive(), "READY=1");
  std::filesystem::remove(path);
}

TEST_F(ServiceNotify, SendsToAnAbstractSocket) {
  std::string name = "@cused-notify-test-" + std::to_string(getpid());
  Listener listener(name);
  ASSERT_TRUE(listener.bound());
  setenv("NOTIFY_SOCKET", name.c_str(), 1);
  EXPECT_TRUE(notify_service_manager("STOPPING=1"));
  EXPECT_EQ(listener.receive(), "STOPPING=1");
}

TEST_F(ServiceNotify, WithoutAServiceManagerNothingIsSent) {
  unsetenv("NOTIFY_SOCKET");
  EXPECT_TRUE(notify_service_manager("READY=1"));
}

TEST_F(ServiceNotify, AnAddressThatIsNoSocketIsAnError) {
  setenv("NOTIFY_SOCKET", "vsock:2:1234", 1);  // systemd's VM form: not served here
  EXPECT_FALSE(notify_service_manager("READY=1"));
  setenv("NOTIFY_SOCKET", "/nonexistent/cused-notify", 1);
  EXPECT_FALSE(notify_service_manager("READY=1"));
}

}  // namespace
}  // namespace cused
