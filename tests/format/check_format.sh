#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Every C++ source of the project follows .clang-format: exits 1 naming each file that does not,
# 77 (skipped) where clang-format 14 is missing (other versions format differently).
# Usage: check_format.sh [SOURCE_DIR]    Fix: clang-format -i $(tests/format/check_format.sh --list)
set -uo pipefail
list_files() {
  # Kernels under sandbox/tasks and tests/sandbox/corpus are data, kept byte for byte.
  git ls-files -- '*.cpp' '*.hpp' '*.h' ':!:sandbox/tasks/*' ':!:tests/sandbox/corpus/*'
}
if [[ "${1:-}" == "--list" ]]; then
  cd "$(dirname "$0")/../.." && list_files
  exit 0
fi
cd "${1:-$(dirname "$0")/../..}" || exit 2
if ! command -v clang-format >/dev/null || [[ "$(clang-format --version)" != *"version 14."* ]]; then
  echo "skipped: the format is clang-format 14's (apt-get install clang-format on Debian 12)"
  exit 77
fi
if ! git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  echo "skipped: not a git checkout, so there is no list of the project's files"
  exit 77
fi
bad=0
while IFS= read -r file; do
  if ! clang-format --dry-run --Werror "$file" >/dev/null 2>&1; then
    echo "not formatted: $file"
    bad=$((bad + 1))
  fi
done < <(list_files)
if ((bad)); then
  echo "$bad file(s) differ from .clang-format; fix with: clang-format -i <file>"
  exit 1
fi
echo "every C++ source follows .clang-format"
