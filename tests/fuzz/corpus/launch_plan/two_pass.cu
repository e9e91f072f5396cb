// leap-scratch: partials float32 ceil_div(n, 256)
// leap-launch: partial_sums grid=ceil_div(n, 256) block=256 shared=256 * 4 args=(x, partials, n)
// leap-launch: final_sum grid=(1, 1) block = 1024 args=(partials, out, n)
extern "C" __global__ void partial_sums(const float* x, float* partials, int n) {}
