// Does not compile: the ternary's branches are a float and a pointer.
extern "C" __global__ void repetition_penalty(const float* logits, const int* prev_ids, float* out, int rows, int seq,
                                              float penalty) {
  const int row = blockIdx.x;
  if (row >= rows) return;
  const float* p = logits + static_cast<long long>(row) * 32000;
  float* q = out + static_cast<long long>(row) * 32000;
  const int* ids = prev_ids + static_cast<long long>(row) * seq;
  for (int c = threadIdx.x; c < 32000; c += blockDim.x) q[c] = p[c];
  __syncthreads();
  for (int j = threadIdx.x; j < seq; j += blockDim.x) q[ids[j]] = p[ids[j]] < 0.0f ? p[ids[j]] * penalty : p / penalty;
}
