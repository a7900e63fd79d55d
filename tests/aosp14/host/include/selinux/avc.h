// SPDX-License-Identifier: GPL-2.0-only
// See android.h beside this file.
#pragma once
