// See android.h beside this file.
#pragma once
