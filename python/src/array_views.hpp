// SPDX-License-Identifier: Apache-2.0
// Views of numpy arrays for the bindings: one-dimensional, C-contiguous, native byte order, an exact
// dtype. A matching array is used in place (no copy); anything else is a ValueError that names the
// argument, what it got and what to pass instead. torch tensors arrive here already viewed as numpy
// arrays by the Python layer (leap/_convert.py), sharing their memory.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <type_traits>
#include <utility>

#include "leap/detail/error.hpp"

namespace leap::python {

namespace py = pybind11;

template <class... Parts>
[[noreturn]] void value_error(Parts&&... parts) {
  throw py::value_error(detail::concat(std::forward<Parts>(parts)...));
}

inline std::string shape_text(const py::array& array) {
  std::string text = "(";
  for (py::ssize_t d = 0; d < array.ndim(); ++d) {
    text += std::to_string(array.shape(d));
    text += array.ndim() == 1 ? "," : (d + 1 < array.ndim() ? ", " : "");
  }
  return text + ")";
}

inline std::string dtype_text(const py::array& array) { return py::str(array.dtype()).cast<std::string>(); }

// The checks every argument passes: a numpy array, one-dimensional, contiguous.
inline py::array require_vector(const py::handle& object, const char* name) {
  if (!py::isinstance<py::array>(object)) {
    throw py::type_error(detail::concat(name, " must be a numpy array or a torch CPU tensor, not ",
                                        py::str(py::type::of(object)).cast<std::string>()));
  }
  auto array = py::reinterpret_borrow<py::array>(object);
  if (array.ndim() != 1) {
    value_error(name, " must be one-dimensional (one value per sample), got shape ", shape_text(array));
  }
  if (array.shape(0) > 1 && array.strides(0) != array.itemsize()) {
    value_error(name, " is not contiguous (stride of ", array.strides(0), " bytes for ", array.itemsize(),
                "-byte items); pass np.ascontiguousarray(", name, ") or ", name, ".contiguous()");
  }
  return array;
}

template <class T>
bool has_dtype(const py::array& array) {
  return array.dtype().equal(py::dtype::of<T>());  // also false for a non-native byte order
}

template <class T>
std::span<const T> const_view(const py::array& array) {
  return {static_cast<const T*>(array.data()), static_cast<std::size_t>(array.shape(0))};
}

// An output array: contiguous, writeable, the given length. Its dtype is checked by the caller.
inline py::array require_output(const py::handle& object, const char* name, std::size_t length) {
  py::array array = require_vector(object, name);
  if (!array.writeable()) value_error(name, " is read-only; pass a writeable array");
  if (static_cast<std::size_t>(array.shape(0)) != length) {
    value_error(name, " has ", array.shape(0), " elements; expected ", length, " (one per sample)");
  }
  return array;
}

template <class T>
std::span<T> mutable_view(py::array& array) {
  return {static_cast<T*>(array.mutable_data()), static_cast<std::size_t>(array.shape(0))};
}

// A one-dimensional array of any native integer dtype, read without a copy.
struct IntegerVector {
  const void* data = nullptr;
  std::size_t size = 0;
  bool is_signed = true;
  int itemsize = 8;

  // Calls fn(const T* values) with T the array's element type.
  template <class Fn>
  decltype(auto) visit(Fn&& fn) const {
    switch (itemsize * (is_signed ? 1 : -1)) {
      case 1: return fn(static_cast<const std::int8_t*>(data));
      case 2: return fn(static_cast<const std::int16_t*>(data));
      case 4: return fn(static_cast<const std::int32_t*>(data));
      case -1: return fn(static_cast<const std::uint8_t*>(data));
      case -2: return fn(static_cast<const std::uint16_t*>(data));
      case -4: return fn(static_cast<const std::uint32_t*>(data));
      case -8: return fn(static_cast<const std::uint64_t*>(data));
      default: return fn(static_cast<const std::int64_t*>(data));
    }
  }
};

inline IntegerVector integer_vector(const py::handle& object, const char* name, const char* expectation) {
  py::array array = require_vector(object, name);
  const char kind = array.dtype().kind();
  const int itemsize = static_cast<int>(array.itemsize());
  const bool native = array.dtype().attr("isnative").cast<bool>();
  if ((kind != 'i' && kind != 'u') || !native || (itemsize != 1 && itemsize != 2 && itemsize != 4 && itemsize != 8)) {
    value_error(name, " has dtype ", dtype_text(array), "; expected integers (", expectation, ")");
  }
  return {array.data(), static_cast<std::size_t>(array.shape(0)), kind == 'i', itemsize};
}

inline void require_length(const char* name, std::size_t length, const char* reference, std::size_t expected) {
  if (length != expected) {
    value_error(name, " has ", length, " elements but ", reference, " has ", expected, " (one per sample)");
  }
}

}  // namespace leap::python
