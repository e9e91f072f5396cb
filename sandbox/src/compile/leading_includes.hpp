// SPDX-License-Identifier: Apache-2.0
// The include list a source's leading part means to the preprocessor: what a stored PCH is chosen by,
// made from and used for (pch_store.hpp).
//
// The leading part is the run of logical lines from the top that are blank, comments, or exactly one
// `#include <name>` (a name of letters, digits and _ . / + -, no empty, `.` or `..` component, not
// absolute); comments may stand anywhere in them, as the preprocessor reads them. The first line that
// is anything else (code, another directive, a quoted include, a digraph) ends it. Where a line cannot
// be read with certainty the part ends before it: a backslash outside a comment (a splice), a `//`
// comment whose last visible character is a backslash (it would continue on the next line), a block
// comment with a splice in it (`*\` newline `/` closes it), `??` (a trigraph where they are on), an
// unterminated comment, a last line without its newline.
//
// The list keeps every include in order. A repeat of a header that has an include guard or
// `#pragma once` (has_include_guard) means nothing more, and is left out of the list; the source a PCH
// compile is given then has that line blanked (its newlines kept, so every line keeps its number). A
// repeat of any other header stays in the list: it may mean something the second time.
//
// NVRTC itself then checks that the PCH's directives are an initial part of the source's (comments and
// blank lines do not count there either, measured with NVRTC 13.0) and refuses the PCH otherwise.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace leap::sandbox::detail {

struct LeadingIncludes {
  std::vector<std::string> names;  // the headers, in order, each guarded one once
  // The source with the left-out repeats blanked line for line; empty when nothing was left out
  // (the source itself is then what a PCH compile is given).
  std::string pch_source;
};

// `guarded(name)`: whether including header `name` again adds nothing (asked only for repeats).
LeadingIncludes leading_includes(std::string_view source, const std::function<bool(const std::string&)>& guarded);

// The text a PCH is made from: one `#include <name>` line per name. Only this, never a candidate's
// source, reaches the process that makes a PCH.
std::string pch_prefix_text(const std::vector<std::string>& names);

// Whether a header's text is wholly inside an include guard (`#ifndef X` / `#if !defined(X)`, then
// `#define X`, up to the `#endif` that matches it, with no `#else` or `#elif` at its level and nothing
// after it), or starts with `#pragma once`. False whenever the text is not read with certainty (a raw
// string, a backslash and spaces before a newline, a trigraph, an unterminated comment).
bool has_include_guard(std::string_view header);

// Whether `name` may be the name of an included header in a stored PCH's key (see above).
bool pch_header_name_ok(std::string_view name) noexcept;

}  // namespace leap::sandbox::detail
