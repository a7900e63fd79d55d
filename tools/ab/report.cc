#include "tools/ab/report.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace cused::tools::ab {

namespace {

std::string better_word(Better better) {
  return better == Better::higher ? "higher is better" : "lower is better";
}

std::string escape_xml(const std::string& text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

nlohmann::json summary_json(const Summary& summary) {
  return {{"count", summary.count}, {"median", summary.median},
          {"q1", summary.q1},       {"q3", summary.q3},
          {"mad", summary.mad},     {"min", summary.min},
          {"max", summary.max},     {"relative_spread", summary.relative_spread()}};
}

nlohmann::json variant_json(const Variant& variant, const std::vector<double>& runs,
                            const Summary& summary) {
  return {{"label", variant.label},
          {"device", variant.device},
          {"runs", runs},
          {"summary", summary_json(summary)}};
}

// Deterministic jitter in [-1, 1] for run `index`, so that a plot does not change between renders.
double jitter(std::size_t index) {
  return std::fmod(static_cast<double>(index) * 0.618033988749895, 1.0) * 2 - 1;
}

// Round tick positions covering [low, high].
std::vector<double> ticks(double low, double high) {
  double raw = (high - low) / 5;
  double magnitude = std::pow(10, std::floor(std::log10(raw)));
  double step = magnitude;
  for (double factor : {1.0, 2.0, 5.0, 10.0})
    if (magnitude * factor >= raw) {
      step = magnitude * factor;
      break;
    }
  std::vector<double> result;
  for (double tick = std::ceil(low / step) * step; tick <= high; tick += step)
    result.push_back(tick);
  return result;
}

// "label (device)", or the path alone when the variant was given as a path.
std::string describe(const Variant& variant) {
  return variant.label == variant.device ? variant.label
                                         : fmt::format("{} ({})", variant.label, variant.device);
}

}  // namespace

Analysis analyze(Analysis analysis, const BootstrapOptions& bootstrap) {
  analysis.summary_a = summarize(analysis.runs_a);
  analysis.summary_b = summarize(analysis.runs_b);
  analysis.interval = bootstrap_ratio_of_medians(analysis.runs_a, analysis.runs_b, bootstrap);
  analysis.verdict = judge(analysis.interval, analysis.better);
  analysis.note = detection_note(analysis.verdict, analysis.target_percent);
  analysis.seed = bootstrap.seed;
  analysis.resamples = bootstrap.resamples;
  return analysis;
}

std::string markdown_header(const Analysis& analysis) {
  return fmt::format(
      "A = {}\nB = {}\nmetric: {}, {}; median over runs, spread = IQR / median, "
      "B/A with a {:.3g} % paired-bootstrap interval\n\n"
      "| workload | runs | A median | B median | B/A | {:.3g} % CI | A spread | B spread | verdict "
      "|\n"
      "|---|---:|---:|---:|---:|---|---:|---:|---|\n",
      describe(analysis.a), describe(analysis.b), analysis.metric_name,
      better_word(analysis.better), analysis.interval.confidence * 100,
      analysis.interval.confidence * 100);
}

std::string markdown_row(const Analysis& analysis) {
  const auto& v = analysis.verdict;
  std::string verdict = v.detected ? fmt::format("B {:.1f} % {}", std::abs(v.improvement_percent),
                                                 v.improvement_percent > 0 ? "faster" : "slower")
                                   : "no difference";
  return fmt::format(
      "| {} | {}+{} | {:.6g} | {:.6g} | {:.3f} | [{:.3f}, {:.3f}] | {:.1f} % | "
      "{:.1f} % | {} |\n",
      analysis.name, analysis.runs_a.size(), analysis.runs_b.size(), analysis.summary_a.median,
      analysis.summary_b.median, analysis.interval.ratio, analysis.interval.low,
      analysis.interval.high, analysis.summary_a.relative_spread() * 100,
      analysis.summary_b.relative_spread() * 100, verdict);
}

nlohmann::json to_json(const Analysis& analysis) {
  return {{"name", analysis.name},
          {"metric", analysis.metric_name},
          {"better", analysis.better == Better::higher ? "higher" : "lower"},
          {"command", analysis.command},
          {"warmup_pairs", analysis.warmup_pairs},
          {"seconds", analysis.seconds},
          {"a", variant_json(analysis.a, analysis.runs_a, analysis.summary_a)},
          {"b", variant_json(analysis.b, analysis.runs_b, analysis.summary_b)},
          {"ratio",
           {{"value", analysis.interval.ratio},
            {"low", analysis.interval.low},
            {"high", analysis.interval.high},
            {"confidence", analysis.interval.confidence},
            {"method", "paired percentile bootstrap of median(B)/median(A)"},
            {"resamples", analysis.resamples},
            {"seed", analysis.seed}}},
          {"verdict",
           {{"detected", analysis.verdict.detected},
            {"improvement_percent", analysis.verdict.improvement_percent},
            {"low_percent", analysis.verdict.low_percent},
            {"high_percent", analysis.verdict.high_percent},
            {"text", analysis.verdict.text},
            {"target_percent", analysis.target_percent},
            {"note", analysis.note}}}};
}

Analysis from_json(const nlohmann::json& record) {
  Analysis analysis;
  analysis.name = record.at("name").get<std::string>();
  analysis.metric_name = record.at("metric").get<std::string>();
  analysis.better =
      record.at("better").get<std::string>() == "lower" ? Better::lower : Better::higher;
  analysis.command = record.at("command").get<std::vector<std::string>>();
  analysis.warmup_pairs = record.at("warmup_pairs").get<int>();
  analysis.seconds = record.at("seconds").get<double>();
  for (auto [side, variant, runs] :
       {std::tuple{"a", &analysis.a, &analysis.runs_a}, {"b", &analysis.b, &analysis.runs_b}}) {
    const auto& entry = record.at(side);
    *variant = {entry.at("label").get<std::string>(), entry.at("device").get<std::string>()};
    *runs = entry.at("runs").get<std::vector<double>>();
  }
  analysis.target_percent = record.at("verdict").at("target_percent").get<double>();
  return analysis;
}

std::string svg_plot(const Analysis& analysis) {
  constexpr double kWidth = 720, kLeft = 150, kRight = 30, kTop = 50, kRow = 90;
  double height = kTop + 2 * kRow + 50;
  double low = std::min(analysis.summary_a.min, analysis.summary_b.min);
  double high = std::max(analysis.summary_a.max, analysis.summary_b.max);
  double pad = std::max((high - low) * 0.05, std::abs(high) * 1e-3 + 1e-12);
  low -= pad;
  high += pad;
  auto x = [&](double value) {
    return kLeft + (value - low) / (high - low) * (kWidth - kLeft - kRight);
  };

  std::string svg = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" "
      "viewBox=\"0 0 {0} {1}\" font-family=\"sans-serif\" font-size=\"12\">\n"
      "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
      "<text x=\"{2}\" y=\"20\" font-size=\"14\">{3}: {4} ({5})</text>\n"
      "<text x=\"{2}\" y=\"38\">B/A = {6:.3f}, {7:.3g} % CI [{8:.3f}, {9:.3f}]: {10}</text>\n",
      kWidth, height, 10, escape_xml(analysis.name.empty() ? "binder-ab" : analysis.name),
      escape_xml(analysis.metric_name), better_word(analysis.better), analysis.interval.ratio,
      analysis.interval.confidence * 100, analysis.interval.low, analysis.interval.high,
      escape_xml(analysis.verdict.text));
  struct Row {
    const char* tag;
    const Variant* variant;
    const std::vector<double>* runs;
    const Summary* summary;
    const char* colour;
  };
  Row rows[] = {{"A", &analysis.a, &analysis.runs_a, &analysis.summary_a, "#1f77b4"},
                {"B", &analysis.b, &analysis.runs_b, &analysis.summary_b, "#ff7f0e"}};
  for (std::size_t r = 0; r < 2; ++r) {
    const auto& row = rows[r];
    double centre = kTop + kRow * (static_cast<double>(r) + 0.5);
    const auto& s = *row.summary;
    svg += fmt::format("<text x=\"10\" y=\"{:.1f}\" font-weight=\"bold\">{}</text>\n", centre - 6,
                       row.tag);
    svg += fmt::format("<text x=\"10\" y=\"{:.1f}\">{}</text>\n", centre + 10,
                       escape_xml(row.variant->label.substr(0, 22)));
    svg += fmt::format(
        "<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"{}\"/>\n", x(s.min),
        centre, x(s.max), centre, row.colour);
    svg += fmt::format(
        "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"30\" fill=\"{}\" "
        "fill-opacity=\"0.2\" stroke=\"{}\"/>\n",
        x(s.q1), centre - 15, std::max(1.0, x(s.q3) - x(s.q1)), row.colour, row.colour);
    svg += fmt::format(
        "<line x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{0:.1f}\" y2=\"{2:.1f}\" stroke=\"{3}\" "
        "stroke-width=\"3\"/>\n",
        x(s.median), centre - 18, centre + 18, row.colour);
    for (std::size_t i = 0; i < row.runs->size(); ++i)
      svg += fmt::format(
          "<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"3\" fill=\"{}\" fill-opacity=\"0.6\"/>\n",
          x((*row.runs)[i]), centre + 28 + 8 * jitter(i), row.colour);
  }
  double axis_y = kTop + 2 * kRow + 5;
  svg += fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"black\"/>\n", kLeft,
                     axis_y, kWidth - kRight, axis_y);
  for (double tick : ticks(low, high))
    svg += fmt::format(
        "<line x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\" stroke=\"black\"/>"
        "<text x=\"{0:.1f}\" y=\"{3}\" text-anchor=\"middle\">{4:.6g}</text>\n",
        x(tick), axis_y, axis_y + 5, axis_y + 20, tick);
  svg += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n",
                     (kLeft + kWidth - kRight) / 2, axis_y + 38, escape_xml(analysis.metric_name));
  svg += "</svg>\n";
  return svg;
}

}  // namespace cused::tools::ab
