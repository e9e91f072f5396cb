// Kernels for the CPU runtime's half, bfloat16 and intrinsic tests (test_numbers.cpp): one thread,
// each result a bit pattern the test holds to a hand-computed one.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <math_constants.h>

extern "C" __global__ void half_ops(const unsigned short* a, const unsigned short* b, unsigned short* out) {
  const __half x = __ushort_as_half(a[0]), y = __ushort_as_half(b[0]);
  out[0] = __half_as_ushort(__hadd(x, y));
  out[1] = __half_as_ushort(__hmul(x, y));
  out[2] = __half_as_ushort(__hfma(x, y, x));
  out[3] = __half_as_ushort(x - y);
  out[4] = __half_as_ushort(__float2half(65520.0f));    // rounds up to infinity
  out[5] = __half_as_ushort(__float2half(65519.99f));   // rounds down to 65504
  out[6] = __half_as_ushort(__float2half(5.9604645e-08f));  // 2^-24, the smallest subnormal
  out[7] = __half_as_ushort(__float2half(2.9802322e-08f));  // 2^-25: a tie, to even: zero
  out[8] = __half_as_ushort(__float2half(CUDART_NAN_F));    // the canonical NaN
  out[9] = __half_as_ushort(__float2half_rz(1.0009f));     // toward zero: 1.0 (nearest would be 1 + 2^-10)
  out[10] = __half_as_ushort(__float2half_ru(1.0000001f));  // up: 1 + 2^-10
  out[11] = __half_as_ushort(__hmax(x, __ushort_as_half(0x7FFF)));  // a NaN operand yields the other
  const __half2 p = __floats2half2_rn(1.5f, -2.0f);
  const __half2 q = __hmul2(p, p);
  out[12] = __half_as_ushort(q.x);
  out[13] = __half_as_ushort(q.y);
  out[14] = static_cast<unsigned short>(__half2int_rn(__float2half(2.5f)));  // ties to even: 2
  out[15] = static_cast<unsigned short>(__hlt(x, y) ? 1 : 0);
}

extern "C" __global__ void bfloat16_ops(const unsigned short* a, const unsigned short* b, unsigned short* out) {
  const __nv_bfloat16 x = __ushort_as_bfloat16(a[0]), y = __ushort_as_bfloat16(b[0]);
  out[0] = __bfloat16_as_ushort(__hadd(x, y));
  out[1] = __bfloat16_as_ushort(__hmul(x, y));
  out[2] = __bfloat16_as_ushort(__hfma(x, y, x));
  out[3] = __bfloat16_as_ushort(__float2bfloat16(1.00390625f));  // 1 + 2^-8: a tie, to even: 1.0
  out[4] = __bfloat16_as_ushort(__float2bfloat16(1.01171875f));  // 1 + 3*2^-8: a tie, to even: 1 + 2^-6
  out[5] = __bfloat16_as_ushort(__float2bfloat16(CUDART_NAN_F));
  const float2 f = __bfloat1622float2(__floats2bfloat162_rn(3.0f, -0.5f));
  out[6] = static_cast<unsigned short>(f.x == 3.0f && f.y == -0.5f);
  out[7] = __bfloat16_as_ushort(__float2bfloat16_rd(-1.00001f));  // down: -(1 + 2^-7)
}

// Float and integer intrinsics: 32-bit results.
extern "C" __global__ void intrinsics(const float* a, unsigned* out) {
  const float x = a[0], y = a[1];
  out[0] = __float_as_uint(__fmul_rn(x, y));
  out[1] = __float_as_uint(__fadd_rz(1.0f, 1e-8f));  // 1.0: toward zero
  out[2] = __float_as_uint(__fadd_ru(1.0f, 1e-8f));  // 1 + 2^-23: up
  out[3] = __float_as_uint(__fdiv_rd(1.0f, 3.0f));
  out[4] = __float_as_uint(__fdiv_ru(1.0f, 3.0f));
  out[5] = __float_as_uint(__fsqrt_rn(2.0f));
  out[6] = static_cast<unsigned>(__float2int_rn(-2.5f));   // ties to even: -2
  out[7] = static_cast<unsigned>(__float2int_rz(3.99f));
  out[8] = static_cast<unsigned>(__float2int_rn(1e20f));   // saturates
  out[9] = static_cast<unsigned>(__popc(0xF0F0u) + 100 * __clz(1) + 10000 * __ffs(0x80));
  out[10] = __brev(1u);
  out[11] = __byte_perm(0x33221100u, 0x77665544u, 0x5140u);
  out[12] = __umulhi(0x80000000u, 6u);
  out[13] = static_cast<unsigned>(__mul24(0x00FFFFFF, 2));  // -1 * 2 in 24 bits
  out[14] = __funnelshift_l(0x80000000u, 0x1u, 1);
  out[15] = static_cast<unsigned>(min(3, -4) + 10 * max(2u, 7u));
  out[16] = __float_as_uint(__saturatef(1.5f));
  out[17] = __float_as_uint(__int2float_rz(16777217));  // 2^24 + 1: toward zero 2^24
  out[18] = __float_as_uint(__double2float_ru(1.0 + 1e-12));
  out[19] = static_cast<unsigned>(__dp4a(0x01020304, 0x01010101, 10));
}
