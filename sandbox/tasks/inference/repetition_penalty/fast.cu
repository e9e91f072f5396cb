// Faster: the row's previous ids become a 32000-bit mask in shared memory, then one coalesced float4 pass
// applies it; no scattered writes to global memory.
extern "C" __global__ void repetition_penalty(const float* logits, const int* prev_ids, float* out, int rows, int seq,
                                              float penalty) {
  __shared__ unsigned int mask[1000];  // 32000 bits
  const int row = blockIdx.x;
  if (row >= rows) return;
  const float4* p = reinterpret_cast<const float4*>(logits + static_cast<long long>(row) * 32000);
  float4* q = reinterpret_cast<float4*>(out + static_cast<long long>(row) * 32000);
  const int* ids = prev_ids + static_cast<long long>(row) * seq;
  for (int w = threadIdx.x; w < 1000; w += blockDim.x) mask[w] = 0u;
  __syncthreads();
  for (int j = threadIdx.x; j < seq; j += blockDim.x) {
    const int id = ids[j];
    atomicOr(&mask[id / 32], 1u << (id % 32));
  }
  __syncthreads();
  const float inv = 1.0f / penalty;
  for (int c = threadIdx.x; c < 8000; c += blockDim.x) {
    float4 v = p[c];
    const unsigned int bits = (mask[c / 8] >> ((c % 8) * 4)) & 0xfu;
    if (bits) {
      if (bits & 1u) v.x = v.x < 0.0f ? v.x * penalty : v.x * inv;
      if (bits & 2u) v.y = v.y < 0.0f ? v.y * penalty : v.y * inv;
      if (bits & 4u) v.z = v.z < 0.0f ? v.z * penalty : v.z * inv;
      if (bits & 8u) v.w = v.w < 0.0f ? v.w * penalty : v.w * inv;
    }
    q[c] = v;
  }
}
