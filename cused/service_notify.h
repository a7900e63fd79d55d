// SPDX-License-Identifier: GPL-2.0-only
// Telling a service manager that the daemon is up, the way systemd's Type=notify expects
// (sd_notify(3)): one datagram such as "READY=1" to the AF_UNIX socket that $NOTIFY_SOCKET names
// ("@name" is the abstract namespace). The protocol is that one datagram, so it is written here
// instead of linking libsystemd.
#pragma once

#include <string>

namespace cused {

// Sends `state` ("READY=1", "STOPPING=1", "STATUS=...", newline-separated) when $NOTIFY_SOCKET is
// set; does nothing when it is not (not started by a service manager). Returns false, after
// saying why on stderr, when the variable is set but the datagram could not be sent.
bool notify_service_manager(const std::string& state);

}  // namespace cused
