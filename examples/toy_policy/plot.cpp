// SPDX-License-Identifier: Apache-2.0
#include "plot.hpp"

#include <cstdlib>
#include <fstream>

namespace toy {

namespace {

// The seeds' curves on a common grid of evaluations: mean, min and max of Acc@1 and Acc@final.
void write_curves(const std::filesystem::path& data, const Options& options, const std::vector<Variant>& variants,
                  const MixStudy& study) {
  std::ofstream out(data);
  out << "# SIMULATED environment, " << mix_name(study.hard) << " mix, seeds " << seeds_text(options.seeds)
      << ". Columns: training evaluations, Acc@1 mean min max, Acc@final mean min max; one block per variant\n";
  const int cells = 120;
  for (std::size_t v = 0; v < variants.size(); ++v) {
    out << "# " << variants[v].name << " (lr " << options.learning_rates[study.variants[v].rate] << ")\n";
    for (int c = 0; c <= cells; ++c) {
      const double at = static_cast<double>(options.budget) * c / cells;
      const Stats a1 = value_at_budget(study.variants[v], Metric::acc_turn1, at);
      const Stats a3 = value_at_budget(study.variants[v], Metric::acc_final, at);
      if (!a1.complete() || !a3.complete()) continue;
      out << at << ' ' << a1.mean << ' ' << a1.min << ' ' << a1.max << ' ' << a3.mean << ' ' << a3.min << ' ' << a3.max
          << '\n';
    }
    out << "\n\n";
  }
}

}  // namespace

Plot write_plot(const Options& options, const std::vector<Variant>& variants, const MixStudy& study) {
  const std::filesystem::path dir(options.out_dir);
  const std::string stem = study.hard ? "toy_policy_hard" : "toy_policy";
  const std::filesystem::path data = dir / (stem + ".dat");
  write_curves(data, options, variants, study);
  Plot plot{data, {}, Plot::Status::no_gnuplot};
  if (std::system("command -v gnuplot >/dev/null 2>&1") != 0) return plot;
  const std::filesystem::path png = dir / (stem + ".png");
  const std::filesystem::path script = dir / (stem + ".gp");
  static const char* colours[] = {"#7f7f7f", "#9ecae1", "#3182bd", "#08519c", "#fdae6b",
                                  "#31a354", "#8c6d31", "#d62728", "#9467bd"};
  {
    std::ofstream gp(script);
    gp << "set terminal pngcairo size 1400,560 font ',10' noenhanced\n"
       << "set output '" << png.string() << "'\n"
       << "set multiplot layout 1,2 title 'toy policy on a SIMULATED kernel environment (" << mix_name(study.hard)
       << " mix, seeds " << seeds_text(options.seeds) << ": mean, shaded min-max; G = " << options.group_size << ", "
       << options.tasks << " tasks)'\n"
       << "set key bottom right\nset grid\nset xlabel 'training evaluations'\nset yrange [0:1]\n"
       << "set style fill transparent solid 0.12 noborder\n";
    for (int panel = 0; panel < 2; ++panel) {
      const int mean = panel == 0 ? 2 : 5;
      const double reference = study.reference[static_cast<std::size_t>(panel)];
      gp << "set ylabel '"
         << (panel == 0 ? std::string("Acc@1 (first turn)")
                        : "Acc@" + std::to_string(options.max_turns) + " (with feedback)")
         << "'\nset arrow 1 from graph 0, first " << 0.95 * reference << " to graph 1, first " << 0.95 * reference
         << " nohead dt 2 lc 'gray'\nplot";
      for (std::size_t v = 0; v < variants.size(); ++v) {
        const char* colour = colours[v % (sizeof colours / sizeof *colours)];
        gp << (v ? "," : "") << " '" << data.string() << "' index " << v << " using 1:" << mean + 1 << ":" << mean + 2
           << " with filledcurves lc rgb '" << colour << "' notitle, '' index " << v << " using 1:" << mean
           << " with lines lw 2 lc rgb '" << colour << "'" << (variants[v].name.rfind("leap", 0) == 0 ? "" : " dt 2")
           << " title '" << variants[v].name << "'";
      }
      gp << "\n";
    }
    gp << "unset multiplot\n";
  }
  const std::string command = "gnuplot '" + script.string() + "'";
  if (std::system(command.c_str()) == 0) {
    plot.png = png;
    plot.status = Plot::Status::drawn;
  } else {
    plot.status = Plot::Status::gnuplot_failed;
  }
  return plot;
}

std::string describe(const Plot& plot) {
  switch (plot.status) {
    case Plot::Status::drawn: return "plot: " + plot.png.string() + " (data: " + plot.data.string() + ")";
    case Plot::Status::no_gnuplot:
      return "gnuplot is not installed: wrote the data to " + plot.data.string() +
             " (apt-get install gnuplot-nox for the plot)";
    case Plot::Status::gnuplot_failed: return "gnuplot failed; the data is in " + plot.data.string();
  }
  return {};
}

}  // namespace toy
