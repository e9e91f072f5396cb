// SPDX-License-Identifier: Apache-2.0
#include "screen.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>

#include "study.hpp"

namespace toy {

namespace {

std::string format(const char* style, double value) {
  char text[48];
  std::snprintf(text, sizeof text, style, value);
  return text;
}

// mean, then [min, max] when more than one seed has a value, then n/N when not every seed has one.
std::string stats_cell(const Stats& stats, const char* style, const char* suffix) {
  if (stats.present == 0) return "-";
  std::string text = format(style, stats.mean) + suffix;
  if (stats.present > 1) text += " [" + format(style, stats.min) + ", " + format(style, stats.max) + "]";
  if (stats.present < stats.total) text += " " + std::to_string(stats.present) + "/" + std::to_string(stats.total);
  return text;
}

// Rows of cells, each column as wide as its widest cell, two spaces between columns; the first row
// is the header. Trailing spaces are dropped.
std::vector<std::string> grid(const std::vector<std::vector<std::string>>& rows) {
  std::vector<std::size_t> width;
  for (const auto& row : rows) {
    for (std::size_t c = 0; c < row.size(); ++c) {
      if (width.size() <= c) width.push_back(0);
      width[c] = std::max(width[c], row[c].size());
    }
  }
  std::vector<std::string> lines;
  for (const auto& row : rows) {
    std::string line;
    for (std::size_t c = 0; c < row.size(); ++c) {
      if (c > 0) line += "  ";
      line += row[c];
      if (c + 1 < row.size()) line.append(width[c] - row[c].size(), ' ');
    }
    line.erase(line.find_last_not_of(' ') + 1);
    lines.push_back(line);
  }
  return lines;
}

std::string list_text(const std::vector<double>& values) {
  std::string text;
  for (double value : values) text += (text.empty() ? "" : ",") + format("%g", value);
  return text;
}

std::string metric_text(Metric metric, int max_turns) {
  return metric == Metric::acc_turn1 ? "Acc@1" : "Acc@" + std::to_string(max_turns);
}

std::string count(int n, int of) { return std::to_string(n) + "/" + std::to_string(of); }

// "3/3  1/3" under "LEAP GRPO": in how many seeds each reached the target.
std::string reached_cell(const Reach& reach, int seeds) {
  std::string leap = count(reach.leap_reached, seeds);
  leap.append(leap.size() < 4 ? 4 - leap.size() : 0, ' ');
  return leap + " " + count(reach.baseline_reached, seeds);
}

void convergence_rows(const ConvergenceClaim& claim, const Claims& claims,
                      std::vector<std::vector<std::string>>& rows) {
  std::vector<std::string> head = {"to " + format("%.0f", 100 * claim.fraction) + " % of the best " +
                                   metric_text(claim.metric, claims.max_turns)};
  for (std::size_t mix = 0; mix < claims.mixes.size(); ++mix) {
    head.push_back(claims.mixes[mix] + " mix: " + format("%.3f", claim.target[mix]));
    head.push_back("LEAP GRPO");
  }
  rows.push_back(head);
  for (std::size_t b = 0; b < claim.baseline_gamma.size(); ++b) {
    std::vector<std::string> row = {"  vs GRPO, discount " + gamma_text(claim.baseline_gamma[b])};
    for (const Reach& reach : claim.reach[b]) {
      row.push_back(ratio_cell(reach.ratio));
      row.push_back(reached_cell(reach, claims.seeds));
    }
    rows.push_back(row);
  }
}

// The plot, or why there is none and where its data is: file names after the first are beside it.
std::vector<std::string> plot_lines(const std::vector<Plot>& plots) {
  const auto names = [&](bool png) {
    std::string text;
    for (const Plot& plot : plots) {
      const std::filesystem::path& path = png ? plot.png : plot.data;
      text += text.empty() ? path.string() : ", " + path.filename().string();
    }
    return text;
  };
  const bool drawn =
      std::all_of(plots.begin(), plots.end(), [](const Plot& p) { return p.status == Plot::Status::drawn; });
  if (drawn) return {"plot: " + names(true) + " (Acc@1 and Acc@final against evaluations)"};
  const bool no_gnuplot =
      std::any_of(plots.begin(), plots.end(), [](const Plot& p) { return p.status == Plot::Status::no_gnuplot; });
  return {no_gnuplot ? "no plot: gnuplot is not installed (apt-get install gnuplot-nox)" : "no plot: gnuplot failed",
          "curves: " + names(false)};
}

}  // namespace

std::string ratio_cell(const Stats& stats) { return stats_cell(stats, "%.2f", "x"); }
std::string difference_cell(const Stats& stats) { return stats_cell(stats, "%+.3f", ""); }

std::vector<std::string> screen_lines(const Options& options, const Claims& claims, const RunReport& report) {
  std::vector<std::string> lines;
  const std::string final_metric = metric_text(Metric::acc_final, claims.max_turns);
  lines.push_back("LEAP vs GRPO on a SIMULATED kernel-writing environment (a toy: no model, no compiler, no GPU)");
  lines.push_back("seeds " + seeds_text(options.seeds) + ", " + std::to_string(options.tasks) +
                  " tasks, G = " + std::to_string(options.group_size) + ", " + std::to_string(options.max_turns) +
                  " turns, " + std::to_string(options.budget) + " evaluations a run; lr " +
                  list_text(options.learning_rates) + ", best per variant");
  lines.push_back("");

  lines.push_back("Does LEAP converge faster than multi-turn GRPO? Evaluations to the target, LEAP / GRPO,");
  lines.push_back("per seed: below 1 LEAP is faster; mean [min, max] over the seeds both reached it (n/" +
                  std::to_string(claims.seeds) + ": only n did)");
  std::vector<std::vector<std::string>> convergence;
  convergence_rows(claims.acc_turn1, claims, convergence);
  convergence_rows(claims.acc_final, claims, convergence);
  for (std::string& line : grid(convergence)) lines.push_back(std::move(line));
  lines.push_back("");

  std::vector<std::vector<std::string>> dcp = {{"Does DCP save at equal accuracy?"}};
  for (const std::string& mix : claims.mixes) dcp.front().push_back(mix + " mix");
  for (const DcpSaving& saving : claims.dcp) {
    dcp.push_back({"  " + saving.estimator + ": " + saving.pruned + " / " + saving.unpruned});
    std::vector<std::string> per_step = {"    evaluations per step"};
    std::vector<std::string> time = {"    modelled time to 95 % " + final_metric};
    std::vector<std::string> accuracy = {"    final " + final_metric + ", pruned - unpruned"};
    for (std::size_t mix = 0; mix < claims.mixes.size(); ++mix) {
      per_step.push_back(ratio_cell(saving.per_step[mix]));
      time.push_back(ratio_cell(saving.time_to_target[mix]));
      accuracy.push_back(difference_cell(saving.final_difference[mix]));
    }
    dcp.push_back(per_step);
    dcp.push_back(time);
    dcp.push_back(accuracy);
  }
  for (std::string& line : grid(dcp)) lines.push_back(std::move(line));
  lines.push_back("");

  std::string tables = "full tables: " + report.tables.front();
  for (std::size_t t = 1; t < report.tables.size(); ++t)
    tables += ", " + std::filesystem::path(report.tables[t]).filename().string();
  lines.push_back(tables + " (or --tables); " + std::filesystem::path(report.json).filename().string());
  for (std::string& line : plot_lines(report.plots)) lines.push_back(std::move(line));
  lines.push_back(std::to_string(report.runs) + " runs in " + format("%.0f", report.seconds) + " s (" +
                  format("%.0f", report.cpu_seconds) + " CPU-s on " + std::to_string(report.threads) + " threads)");
  return lines;
}

}  // namespace toy
