// Kernels for the CPU runtime's atomics test (test_atomics.cpp): every thread of every block adds its
// share; the totals are known in closed form.
extern "C" __global__ void atomics(int* i, unsigned* u, unsigned long long* ull, float* f, double* d, long long* ll) {
  const unsigned g = blockIdx.x * blockDim.x + threadIdx.x;
  atomicAdd(&i[0], 1);
  atomicSub(&i[1], 2);
  atomicMax(&i[2], static_cast<int>(g));
  atomicMin(&i[3], -static_cast<int>(g));
  atomicOr(&i[4], 1 << (g % 31));
  atomicXor(&i[5], static_cast<int>(g));
  atomicAnd(&i[6], ~(1 << (g % 31)));
  atomicAdd(&u[0], g);
  atomicInc(&u[1], 9u);  // wraps to 0 after 9
  atomicDec(&u[2], 9u);
  atomicMax(&u[3], g * 3u);
  if (atomicCAS(&u[4], 0u, g + 1) == 0u) atomicAdd(&u[5], 1u);  // exactly one thread wins
  atomicExch(&u[6], 7u);
  atomicAdd(&ull[0], 1ull << 33);
  atomicMax(&ull[1], static_cast<unsigned long long>(g) << 40);
  atomicCAS(&ull[2], 0ull, 5ull);
  atomicAdd(&f[0], 0.5f);
  atomicExch(&f[1], 2.5f);
  atomicAdd(&d[0], 0.25);
  atomicMin(&ll[0], -static_cast<long long>(g) * 1000000000000LL);
  __threadfence();
}
