// SPDX-License-Identifier: Apache-2.0
// The softmax choice both example policies are made of: probabilities from a row of logits, a draw
// from them, and the policy-gradient step for the choice drawn.
#pragma once

#include <Eigen/Core>

namespace examples {

template <class Row>
Eigen::VectorXd softmax(const Row& logits) {
  Eigen::VectorXd p = (logits.transpose().array() - logits.maxCoeff()).exp().matrix();
  return p / p.sum();
}

// The choice that the uniform draw u in [0, 1) falls on.
template <class Row>
int sample(const Row& logits, double u) {
  const Eigen::VectorXd p = softmax(logits);
  double cumulative = 0.0;
  for (Eigen::Index k = 0; k < p.size(); ++k) {
    cumulative += p[k];
    if (u < cumulative) return static_cast<int>(k);
  }
  return static_cast<int>(p.size() - 1);
}

// grad += advantage * d log softmax(logits)[chosen] / d logits = advantage * (onehot(chosen) - softmax(logits))
template <class Row, class GradRow>
void add_log_prob_gradient(const Row& logits, int chosen, double advantage, GradRow&& grad) {
  Eigen::VectorXd g = -softmax(logits);
  g[chosen] += 1.0;
  grad += advantage * g.transpose();
}

}  // namespace examples
