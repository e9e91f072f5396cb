// Subtly wrong: the penalty is applied in place once per occurrence, so an id generated twice is penalised twice.
extern "C" __global__ void repetition_penalty(const float* logits, const int* prev_ids, float* out, int rows, int seq,
                                              float penalty) {
  const int row = blockIdx.x;
  if (row >= rows) return;
  const float* p = logits + static_cast<long long>(row) * 32000;
  float* q = out + static_cast<long long>(row) * 32000;
  const int* ids = prev_ids + static_cast<long long>(row) * seq;
  for (int c = threadIdx.x; c < 32000; c += blockDim.x) q[c] = p[c];
  __syncthreads();
  if (threadIdx.x == 0) {
    for (int j = 0; j < seq; ++j) {
      const int id = ids[j];
      const float v = q[id];
      q[id] = v < 0.0f ? v * penalty : v / penalty;
    }
  }
}
