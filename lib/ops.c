/* SPDX-License-Identifier: MIT */
/* Operations beneath a root: owned by the operations issue. */
#include "internal.h"
