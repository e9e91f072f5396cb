// SPDX-License-Identifier: Apache-2.0
// The CPU runtime's <assert.h> (and so <cassert>): a failed assert in a kernel stops the launch with
// the expression and its line, as the device's assert traps the kernel, instead of aborting the
// process that runs it. No include guard, as the C library's: each inclusion redefines assert by
// NDEBUG as it then stands.
#include_next <assert.h>

#undef assert
#ifdef NDEBUG
#define assert(expression) (static_cast<void>(0))
#else
#define assert(expression) \
  (static_cast<bool>(expression) ? static_cast<void>(0) : ::leap_cpu::detail::trap("assert(" #expression ") failed"))
#endif
