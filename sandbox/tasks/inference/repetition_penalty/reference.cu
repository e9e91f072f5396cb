// Reference: copy the row, wait, then every thread penalises some of the row's previous ids from the original
// logits (a repeated id is written twice with the same value, so it is penalised once).
extern "C" __global__ void repetition_penalty(const float* logits, const int* prev_ids, float* out, int rows, int seq,
                                              float penalty) {
  const int row = blockIdx.x;
  if (row >= rows) return;
  const float* p = logits + static_cast<long long>(row) * 32000;
  float* q = out + static_cast<long long>(row) * 32000;
  const int* ids = prev_ids + static_cast<long long>(row) * seq;
  for (int c = threadIdx.x; c < 32000; c += blockDim.x) q[c] = p[c];
  __syncthreads();
  for (int j = threadIdx.x; j < seq; j += blockDim.x) {
    const int id = ids[j];
    const float v = p[id];
    q[id] = v < 0.0f ? v * penalty : v / penalty;
  }
}
