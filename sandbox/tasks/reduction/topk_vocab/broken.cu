// Does not compile: the fields are read as .v and .i but the struct names them value and index.
struct Pick {
  float value;
  int index;
};

extern "C" __global__ void topk_vocab(const float* logits, float* values, int* indices, int rows, int vocab, int k) {
  const int row = blockIdx.x;
  if (row >= rows || threadIdx.x != 0) return;
  const float* p = logits + static_cast<long long>(row) * vocab;
  for (int j = 0; j < k; ++j) {
    Pick best{p[0], 0};
    for (int c = 1; c < vocab; ++c)
      if (p[c] > best.v) best = Pick{p[c], c};
    values[static_cast<long long>(row) * k + j] = best.v;
    indices[static_cast<long long>(row) * k + j] = best.i;
  }
}
