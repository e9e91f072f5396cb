// SPDX-License-Identifier: Apache-2.0
// Eigen views: the batched advantage functions on vectors a trainer already holds in Eigen.
//
// Outputs are Eigen::Ref<VectorXd> / Ref<VectorXf>: a VectorXd, a contiguous segment of one, a Map
// over the trainer's own buffer, or array.matrix() bind without a copy and are written in place.
// Inputs are Ref<const ...>: contiguous data binds without a copy; Eigen evaluates anything else
// (an expression, a strided view) into a temporary first.
#pragma once

#if !__has_include(<Eigen/Core>)
#error "leap/eigen.hpp needs Eigen 3.4: link leap::eigen (find_package(leap COMPONENTS eigen)), not leap::leap alone"
#endif
#include <Eigen/Core>
#include <cstdint>
#include <span>

#include "leap/baselines.hpp"
#include "leap/kernel_order.hpp"
#include "leap/outcome.hpp"
#include "leap/rank_advantage.hpp"

namespace leap {
namespace detail {
template <class Scalar>
std::span<Scalar> as_span(Eigen::Ref<Eigen::Matrix<Scalar, Eigen::Dynamic, 1>> vector) {
  return {vector.data(), static_cast<std::size_t>(vector.size())};
}
template <class Scalar>
std::span<const Scalar> as_span(const Eigen::Ref<const Eigen::Matrix<Scalar, Eigen::Dynamic, 1>>& vector) {
  return {vector.data(), static_cast<std::size_t>(vector.size())};
}
}  // namespace detail

template <class Order = KernelOrder>
void rank_advantages(std::span<const Outcome> results, std::span<const std::uint32_t> group_ids,
                     Eigen::Ref<Eigen::VectorXd> out, const Order& order = {}) {
  rank_advantages(results, group_ids, detail::as_span<double>(out), order);
}
template <class Order = KernelOrder>
void rank_advantages(std::span<const Outcome> results, std::span<const std::uint32_t> group_ids,
                     Eigen::Ref<Eigen::VectorXf> out, const Order& order = {}) {
  rank_advantages(results, group_ids, detail::as_span<float>(out), order);
}

inline void grpo_advantages(const Eigen::Ref<const Eigen::VectorXd>& rewards, std::span<const std::uint32_t> group_ids,
                            Eigen::Ref<Eigen::VectorXd> out, GrpoOptions options = {}) {
  grpo_advantages(detail::as_span<double>(rewards), group_ids, detail::as_span<double>(out), options);
}
inline void grpo_advantages(const Eigen::Ref<const Eigen::VectorXf>& rewards, std::span<const std::uint32_t> group_ids,
                            Eigen::Ref<Eigen::VectorXf> out, GrpoOptions options = {}) {
  grpo_advantages(detail::as_span<float>(rewards), group_ids, detail::as_span<float>(out), options);
}

inline void rloo_advantages(const Eigen::Ref<const Eigen::VectorXd>& rewards, std::span<const std::uint32_t> group_ids,
                            Eigen::Ref<Eigen::VectorXd> out) {
  rloo_advantages(detail::as_span<double>(rewards), group_ids, detail::as_span<double>(out));
}
inline void rloo_advantages(const Eigen::Ref<const Eigen::VectorXf>& rewards, std::span<const std::uint32_t> group_ids,
                            Eigen::Ref<Eigen::VectorXf> out) {
  rloo_advantages(detail::as_span<float>(rewards), group_ids, detail::as_span<float>(out));
}

}  // namespace leap
