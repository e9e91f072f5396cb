# SPDX-License-Identifier: Apache-2.0
# Runs toy_policy as a person would, on a small study, and checks what reaches the terminal (stdout
# and stderr together): by default and with --study, a screen of at most 30 lines of at most 100
# characters that answers the claims and says where the tables are; with --tables, the full tables
# (and no screen). Runs in WORK_DIR with a relative --out, as the README's first command does.
set(small --seeds 1-3 --lr 1,3 --budget 2000 --tasks 10 --group-size 4 --eval-interval 400 --eval-samples 4 --threads 2
          --out out)
file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}")

# Output as a CMake list of lines. ';' and brackets would split or join list items, so they are
# replaced first (the checks below do not look for them).
function(lines_of text out)
  string(REPLACE ";" "," text "${text}")
  string(REPLACE "[" "(" text "${text}")
  string(REPLACE "]" ")" text "${text}")
  string(REGEX REPLACE "\n$" "" text "${text}")
  string(REPLACE "\n" ";" text "${text}")
  set(${out} "${text}" PARENT_SCOPE)
endfunction()

function(run_toy name)
  execute_process(COMMAND "${TOY_POLICY}" ${small} ${ARGN} WORKING_DIRECTORY "${WORK_DIR}"
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "toy_policy ${ARGN} failed (${rc}): ${err}")
  endif()
  set(${name}_out "${out}" PARENT_SCOPE)
  set(${name}_all "${err}${out}" PARENT_SCOPE)
endfunction()

function(check_screen name mixes)
  set(all "${${name}_all}")
  lines_of("${all}" lines)
  list(LENGTH lines count)
  if(count GREATER 30)
    message(FATAL_ERROR "${name}: ${count} lines reach the terminal, more than 30:\n${all}")
  endif()
  foreach(line IN LISTS lines)
    string(LENGTH "${line}" width)
    if(width GREATER 100)
      message(FATAL_ERROR "${name}: a line of ${width} characters, more than 100:\n${line}")
    endif()
  endforeach()
  foreach(part "Does LEAP converge faster" "to 90 % of the best Acc@1" "to 95 % of the best Acc@3"
               "vs GRPO, discount 0.5" "Does DCP save at equal accuracy" "evaluations per step"
               "full tables: out/summary.md" "summary.json" " runs in ")
    string(FIND "${all}" "${part}" at)
    if(at EQUAL -1)
      message(FATAL_ERROR "${name}: the screen lacks '${part}':\n${all}")
    endif()
  endforeach()
  foreach(mix IN LISTS mixes)
    string(FIND "${all}" "${mix} mix: " at)
    if(at EQUAL -1)
      message(FATAL_ERROR "${name}: the screen has no column for the ${mix} mix:\n${all}")
    endif()
  endforeach()
  string(FIND "${all}" "| variant |" table)
  if(NOT table EQUAL -1)
    message(FATAL_ERROR "${name}: the full tables are on the screen:\n${all}")
  endif()
endfunction()

run_toy(plain)
check_screen(plain "default")
# The screen is not the whole story: the full tables it points to are written.
file(READ "${WORK_DIR}/out/summary.md" markdown)
string(FIND "${markdown}" "| variant | lr |" table)
if(table EQUAL -1)
  message(FATAL_ERROR "out/summary.md has no summary table:\n${markdown}")
endif()

# --study with its own grid of five learning rates and its two mixes, on a smaller budget.
execute_process(COMMAND "${TOY_POLICY}" --study --seeds 1-3 --budget 800 --tasks 8 --group-size 4 --eval-interval 200
                        --eval-samples 4 --threads 2 --out out WORKING_DIRECTORY "${WORK_DIR}"
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "toy_policy --study failed (${rc}): ${err}")
endif()
set(study_all "${err}${out}")
check_screen(study "default;hard")

# --tables prints the tables summary.md holds, and no screen.
run_toy(tables --tables)
string(FIND "${tables_out}" "${markdown}" same)
string(FIND "${tables_out}" "Does LEAP converge faster" screen)
if(same EQUAL -1 OR NOT screen EQUAL -1)
  message(FATAL_ERROR "--tables must print summary.md's tables instead of the screen:\n${tables_out}")
endif()
message(STATUS "screens fit:\n${plain_all}\n${study_all}")
