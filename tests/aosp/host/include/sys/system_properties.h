// SPDX-License-Identifier: GPL-2.0-only
// bionic's system-property API, as far as Debian's <cutils/properties.h> needs it (it includes
// this header for PROP_VALUE_MAX). A Debian host has no property service; property_get is
// host/properties.cc.
#pragma once

#define PROP_NAME_MAX 32
#define PROP_VALUE_MAX 92
