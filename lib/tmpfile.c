/* SPDX-License-Identifier: MIT */
/* safe_tmpfile_*(): owned by the tmpfile issue. */
#include "internal.h"
