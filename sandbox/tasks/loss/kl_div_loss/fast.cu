// Faster: one pass over both rows. Each thread keeps a running maximum and rescaled sum of exp for
// both rows and w = sum exp(b - max_b) * (b - a); KL = w / sum_b - logsumexp(b) + logsumexp(a),
// since the target probabilities sum to 1. Warp shuffles merge the threads' states.
struct State {
  float ma, sa, mb, sb, w;
};

__device__ __forceinline__ void add_pair(State& st, float av, float bv) {
  if (av > st.ma) {
    st.sa = st.sa * expf(st.ma - av) + 1.0f;
    st.ma = av;
  } else {
    st.sa += expf(av - st.ma);
  }
  if (bv > st.mb) {
    const float scale = expf(st.mb - bv);
    st.sb = st.sb * scale + 1.0f;
    st.w = st.w * scale + (bv - av);
    st.mb = bv;
  } else {
    const float e = expf(bv - st.mb);
    st.sb += e;
    st.w += e * (bv - av);
  }
}

__device__ __forceinline__ void merge(State& st, const State& o) {
  const float na = fmaxf(st.ma, o.ma), nb = fmaxf(st.mb, o.mb);
  st.sa = st.sa * expf(st.ma - na) + o.sa * expf(o.ma - na);
  st.ma = na;
  const float f = expf(st.mb - nb), g = expf(o.mb - nb);
  st.sb = st.sb * f + o.sb * g;
  st.w = st.w * f + o.w * g;
  st.mb = nb;
}

__device__ __forceinline__ void warp_merge(State& st) {
  for (int offset = 16; offset > 0; offset /= 2) {
    State o;
    o.ma = __shfl_down_sync(0xffffffffu, st.ma, offset);
    o.sa = __shfl_down_sync(0xffffffffu, st.sa, offset);
    o.mb = __shfl_down_sync(0xffffffffu, st.mb, offset);
    o.sb = __shfl_down_sync(0xffffffffu, st.sb, offset);
    o.w = __shfl_down_sync(0xffffffffu, st.w, offset);
    merge(st, o);
  }
}

extern "C" __global__ void kl_div_loss(const float* pred_logits, const float* target_logits, float* out, int rows, int cols) {
  __shared__ State warp_state[32];
  const long long offset = static_cast<long long>(blockIdx.x) * cols;
  const float* a = pred_logits + offset;
  const float* b = target_logits + offset;
  State st = {-3.0e38f, 0.0f, -3.0e38f, 0.0f, 0.0f};
  for (int c = threadIdx.x; c < cols; c += blockDim.x) add_pair(st, a[c], b[c]);
  warp_merge(st);
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  if (lane == 0) warp_state[warp] = st;
  __syncthreads();
  if (warp == 0) {
    const State empty = {-3.0e38f, 0.0f, -3.0e38f, 0.0f, 0.0f};
    st = lane < blockDim.x / 32 ? warp_state[lane] : empty;
    warp_merge(st);
    if (lane == 0) {
      const float kl = st.w / st.sb - (st.mb + logf(st.sb)) + (st.ma + logf(st.sa));
      atomicAdd(out, kl / static_cast<float>(rows));
    }
  }
}
