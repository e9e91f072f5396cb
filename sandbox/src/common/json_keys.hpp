// SPDX-License-Identifier: Apache-2.0
// The one check behind a task spec's "unknown key" and a serve request's "unknown field": a key the
// reader does not know is refused by name, never ignored, so a misspelt option cannot pass unnoticed.
#pragma once

#include <algorithm>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

namespace leap::sandbox::detail {

// The first key of `object` (in its iteration order) that is not among `known`; nullopt when every
// key is known or `object` is not an object.
inline std::optional<std::string> first_unknown_key(const nlohmann::json& object,
                                                    std::initializer_list<std::string_view> known) {
  if (!object.is_object()) return std::nullopt;
  for (const auto& item : object.items()) {
    if (std::find(known.begin(), known.end(), item.key()) == known.end()) return item.key();
  }
  return std::nullopt;
}

}  // namespace leap::sandbox::detail
