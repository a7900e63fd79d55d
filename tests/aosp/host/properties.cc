// SPDX-License-Identifier: GPL-2.0-only
// Android system properties on a Debian host: there is no property service, so every property is
// unset and property_get answers the caller's default, as libcutils does on Android for a
// property nobody set. Debian's libcutils leaves property_get out for that reason. libbinder asks
// one property: sys.boot_completed (IServiceManager::getService's retry interval: unset means
// "still booting", 100 ms between checks instead of 1 s).
#include <cutils/properties.h>

#include <algorithm>
#include <cstring>

extern "C" int property_get(const char* /*key*/, char* value, const char* default_value) {
  std::size_t length = 0;
  if (default_value != nullptr)
    length = std::min(std::strlen(default_value), std::size_t{PROPERTY_VALUE_MAX - 1});
  std::memcpy(value, default_value, length);
  value[length] = '\0';
  return static_cast<int>(length);
}
