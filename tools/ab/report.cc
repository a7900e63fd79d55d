// SPDX-License-Identifier: GPL-2.0-only
#include "tools/ab/report.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <optional>

#include "tools/ab/quantized_verdict.h"
#include "tools/ab/trace_report.h"

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
          {"variant", variant.actual},
          {"runs", runs},
          {"summary", summary_json(summary)}};
}

nlohmann::json secondary_json(const std::vector<SecondaryMetric>& metrics) {
  auto out = nlohmann::json::array();
  for (const auto& metric : metrics)
    out.push_back({{"name", metric.name},
                   {"better", metric.better == Better::higher ? "higher" : "lower"},
                   {"a", {{"runs", metric.runs_a}, {"summary", summary_json(metric.summary_a)}}},
                   {"b", {{"runs", metric.runs_b}, {"summary", summary_json(metric.summary_b)}}},
                   {"unit", metric.unit},
                   {"resolution", metric.resolution},
                   {"block_ratios", metric.block_ratios},
                   {"ratio",
                    {{"value", metric.interval.ratio},
                     {"low", metric.interval.low},
                     {"high", metric.interval.high},
                     {"confidence", metric.interval.confidence}}},
                   {"verdict",
                    {{"too_few_pairs", metric.verdict.too_few_pairs},
                     {"detected", metric.verdict.detected},
                     {"unresolved", metric.verdict.unresolved},
                     {"improvement_percent", metric.verdict.improvement_percent},
                     {"text", metric.verdict.text}}}});
  return out;
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

// The metric's name, with the width of its buckets when its runs are bucket midpoints.
std::string shown_name(const SecondaryMetric& metric) {
  if (metric.resolution <= 0) return metric.name;
  return fmt::format("{}, in {:g} {} buckets", metric.name, metric.resolution, metric.unit);
}

// "label (device): its full variant", without the device when the label is its path and without
// the variant where no cused told it.
std::string describe(const Variant& variant) {
  std::string text = variant.label == variant.device
                         ? variant.label
                         : fmt::format("{} ({})", variant.label, variant.device);
  return variant.actual.empty() ? text : text + ": " + variant.actual;
}

}  // namespace

Analysis analyze(Analysis analysis, const BootstrapOptions& bootstrap) {
  analysis.summary_a = summarize(analysis.runs_a);
  analysis.summary_b = summarize(analysis.runs_b);
  if (analysis.blocks.empty()) {
    analysis.interval = bootstrap_ratio_of_medians(analysis.runs_a, analysis.runs_b, bootstrap);
    analysis.verdict =
        judge(analysis.interval, analysis.better, analysis.wording, analysis.metric_name);
  } else {
    auto blocks = bootstrap_blocks(split_blocks(analysis.runs_a, analysis.runs_b, analysis.blocks),
                                   bootstrap);
    analysis.interval = blocks.interval;
    analysis.block_ratios = blocks.block_ratios;
    analysis.heterogeneity = blocks.heterogeneity;
    analysis.verdict =
        judge_blocks(blocks, analysis.better, analysis.wording, analysis.metric_name);
  }
  analysis.note = detection_note(analysis.verdict, analysis.target_percent);
  analysis.seed = bootstrap.seed;
  analysis.resamples = bootstrap.resamples;
  for (auto& metric : analysis.secondary) {
    metric.summary_a = summarize(metric.runs_a);
    metric.summary_b = summarize(metric.runs_b);
    std::optional<BlockInterval> blocks;
    if (analysis.blocks.empty()) {
      metric.interval = bootstrap_ratio_of_medians(metric.runs_a, metric.runs_b, bootstrap);
    } else {
      blocks =
          bootstrap_blocks(split_blocks(metric.runs_a, metric.runs_b, analysis.blocks), bootstrap);
      metric.interval = blocks->interval;
      metric.block_ratios = blocks->block_ratios;
    }
    if (blocks && blocks->blocks < kMinBlocksForVerdict)
      metric.verdict = judge_blocks(*blocks, metric.better);
    else if (metric.resolution > 0)
      metric.verdict = judge_quantized(metric.interval, metric.better, metric.summary_a.median,
                                       metric.summary_b.median, metric.resolution, metric.unit);
    else
      metric.verdict =
          blocks ? judge_blocks(*blocks, metric.better) : judge(metric.interval, metric.better);
  }
  return analysis;
}

std::string secondary_line(const Analysis& analysis, const SecondaryMetric& metric) {
  std::string name = shown_name(metric);
  if (metric.verdict.unresolved)
    return fmt::format("{}, {}: {} (medians A {:.6g}, B {:.6g})\n", analysis.name, name,
                       metric.verdict.text, metric.summary_a.median, metric.summary_b.median);
  return fmt::format("{}, {}: B/A {:.3f} [{:.3f}, {:.3f}]; {}\n", analysis.name, name,
                     metric.interval.ratio, metric.interval.low, metric.interval.high,
                     metric.verdict.text);
}

namespace {

// "B/A with a 95 % paired-bootstrap interval", or what the two-level one is.
std::string interval_words(const Analysis& analysis) {
  double percent = analysis.interval.confidence * 100;
  if (analysis.blocks.empty())
    return fmt::format("B/A with a {:.3g} % paired-bootstrap interval", percent);
  return fmt::format(
      "B/A = the median of {} blocks' own B/A (each a fresh start), with a {:.3g} % two-level "
      "bootstrap interval (blocks, then pairs within them); I² = the share of the blocks' "
      "disagreement beyond their own noise",
      analysis.blocks.size(), percent);
}

}  // namespace

std::string markdown_header(const Analysis& analysis, bool block_columns) {
  return fmt::format(
      "A = {}\nB = {}\nmetric: {}, {}; median over runs, spread = IQR / median, {}\n\n"
      "| workload | runs | A median | B median | B/A | {:.3g} % CI | A spread | B spread | verdict "
      "|{}\n"
      "|---|---:|---:|---:|---:|---|---:|---:|---|{}\n",
      describe(analysis.a), describe(analysis.b), analysis.metric_name,
      better_word(analysis.better), interval_words(analysis), analysis.interval.confidence * 100,
      block_columns ? " blocks' B/A | I² |" : "", block_columns ? "---|---:|" : "");
}

namespace {

std::string block_cells(const Analysis& analysis) {
  if (analysis.blocks.empty()) return " — | — |";
  std::string ratios;
  for (double ratio : analysis.block_ratios)
    ratios += fmt::format("{}{:.3f}", ratios.empty() ? "" : " ", ratio);
  return fmt::format(" {} | {:.2f} |", ratios, analysis.heterogeneity);
}

namespace {

// Each block with its own runs, so that a reader of the JSON needs no spans to find them.
nlohmann::json blocks_json(const Analysis& analysis) {
  auto out = nlohmann::json::array();
  for (std::size_t k = 0; k < analysis.blocks.size(); ++k) {
    const BlockSpan& span = analysis.blocks[k];
    auto runs = [&span](const std::vector<double>& all) {
      auto first = all.begin() + static_cast<std::ptrdiff_t>(span.first);
      return std::vector<double>(first, first + static_cast<std::ptrdiff_t>(span.pairs));
    };
    out.push_back({{"first", span.first},
                   {"pairs", span.pairs},
                   {"b_first", span.b_first},
                   {"warmup_pairs", span.warmup_pairs},
                   {"seconds", span.seconds},
                   {"ratio", k < analysis.block_ratios.size() ? analysis.block_ratios[k] : 0},
                   {"a", runs(analysis.runs_a)},
                   {"b", runs(analysis.runs_b)}});
  }
  return out;
}

}  // namespace

}  // namespace

std::string markdown_row(const Analysis& analysis, bool block_columns) {
  std::string runs = fmt::format("{}+{}", analysis.runs_a.size(), analysis.runs_b.size());
  if (!analysis.blocks.empty()) runs += fmt::format(" in {} blocks", analysis.blocks.size());
  return fmt::format(
      "| {} | {} | {:.6g} | {:.6g} | {:.3f} | [{:.3f}, {:.3f}] | {:.1f} % | "
      "{:.1f} % | {} |{}\n",
      analysis.name, runs, analysis.summary_a.median, analysis.summary_b.median,
      analysis.interval.ratio, analysis.interval.low, analysis.interval.high,
      analysis.summary_a.relative_spread() * 100, analysis.summary_b.relative_spread() * 100,
      analysis.verdict.brief, block_columns ? block_cells(analysis) : "");
}

nlohmann::json to_json(const Analysis& analysis) {
  nlohmann::json record = {
      {"name", analysis.name},
      {"metric", analysis.metric_name},
      {"better", analysis.better == Better::higher ? "higher" : "lower"},
      {"wording", analysis.wording == Wording::amount ? "amount" : "speed"},
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
        {"method", analysis.blocks.empty()
                       ? "paired percentile bootstrap of median(B)/median(A)"
                       : "two-level bootstrap (blocks, then pairs) of the median of the "
                         "blocks' median(B)/median(A), expanded percentile"},
        {"resamples", analysis.resamples},
        {"seed", analysis.seed}}},
      {"verdict",
       {{"too_few_pairs", analysis.verdict.too_few_pairs},
        {"detected", analysis.verdict.detected},
        {"improvement_percent", analysis.verdict.improvement_percent},
        {"low_percent", analysis.verdict.low_percent},
        {"high_percent", analysis.verdict.high_percent},
        {"text", analysis.verdict.text},
        {"target_percent", analysis.target_percent},
        {"note", analysis.note}}},
      {"secondary", secondary_json(analysis.secondary)},
      {"blocks", blocks_json(analysis)},
      {"heterogeneity", analysis.heterogeneity},
      {"aa", analysis.aa}};
  if (!analysis.traces.empty()) record["trace"] = to_json(analysis.traces);
  return record;
}

Analysis from_json(const nlohmann::json& record) {
  Analysis analysis;
  analysis.name = record.at("name").get<std::string>();
  analysis.metric_name = record.at("metric").get<std::string>();
  analysis.better =
      record.at("better").get<std::string>() == "lower" ? Better::lower : Better::higher;
  // Runs saved before the wording or the devices' variants were recorded: speed, unknown.
  analysis.wording =
      record.value("wording", std::string("speed")) == "amount" ? Wording::amount : Wording::speed;
  analysis.command = record.at("command").get<std::vector<std::string>>();
  analysis.warmup_pairs = record.at("warmup_pairs").get<int>();
  analysis.seconds = record.at("seconds").get<double>();
  for (auto [side, variant, runs] :
       {std::tuple{"a", &analysis.a, &analysis.runs_a}, {"b", &analysis.b, &analysis.runs_b}}) {
    const auto& entry = record.at(side);
    *variant = {.label = entry.at("label").get<std::string>(),
                .device = entry.at("device").get<std::string>(),
                .actual = entry.value("variant", std::string())};
    *runs = entry.at("runs").get<std::vector<double>>();
  }
  analysis.target_percent = record.at("verdict").at("target_percent").get<double>();
  // Runs saved before --blocks: one block.
  for (const auto& entry : record.value("blocks", nlohmann::json::array()))
    analysis.blocks.push_back({.first = entry.at("first").get<std::size_t>(),
                               .pairs = entry.at("pairs").get<std::size_t>(),
                               .b_first = entry.at("b_first").get<bool>(),
                               .warmup_pairs = entry.at("warmup_pairs").get<int>(),
                               .seconds = entry.at("seconds").get<double>()});
  analysis.aa = record.value("aa", false);
  if (record.contains("trace")) analysis.traces = traced_runs_from_json(record.at("trace"));
  // Runs saved before --latency existed have no secondary metrics.
  for (const auto& entry : record.value("secondary", nlohmann::json::array())) {
    SecondaryMetric metric;
    metric.name = entry.at("name").get<std::string>();
    metric.better =
        entry.at("better").get<std::string>() == "lower" ? Better::lower : Better::higher;
    metric.runs_a = entry.at("a").at("runs").get<std::vector<double>>();
    metric.runs_b = entry.at("b").at("runs").get<std::vector<double>>();
    // Runs saved before the buckets were told apart: taken as precise, as they were then.
    metric.unit = entry.value("unit", "");
    metric.resolution = entry.value("resolution", 0.0);
    analysis.secondary.push_back(std::move(metric));
  }
  return analysis;
}

namespace {

constexpr double kFont = 12, kTitleFont = 14, kSmallFont = 10, kLineHeight = 15;
constexpr double kEm = 0.6;  // a character's width, in em, on the wide side for sans-serif
constexpr const char* kColours[] = {"#1f77b4", "#ff7f0e"};  // A, B

// The UTF-8 characters of `text` ("…" is one), so that wrapping never splits one.
std::vector<std::string> characters(const std::string& text) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < text.size();) {
    std::size_t length = 1;
    while (i + length < text.size() &&
           (static_cast<unsigned char>(text[i + length]) & 0xC0) == 0x80)
      ++length;
    out.push_back(text.substr(i, length));
    i += length;
  }
  return out;
}

bool break_after(const std::string& character) {
  return character == " " || character == "," || character == ":" || character == "=" ||
         character == "/";
}

// Lines of at most `max_chars` characters, broken after a space or a separator (, : = /) where
// one is in the line's last two thirds, so that a spec such as fast:alloc_lock=spin-install,
// pages=lazy breaks between its keys; a word longer than a line is cut.
std::vector<std::string> wrap(const std::string& text, double max_chars) {
  auto limit = static_cast<std::size_t>(std::max(8.0, std::floor(max_chars)));
  auto chars = characters(text);
  std::vector<std::string> lines;
  std::size_t start = 0;
  auto take = [&](std::size_t count) {
    std::string line;
    for (std::size_t k = 0; k < count; ++k) line += chars[start + k];
    while (!line.empty() && line.back() == ' ') line.pop_back();
    lines.push_back(line);
    start += count;
  };
  while (chars.size() - start > limit) {
    std::size_t cut = limit;
    for (std::size_t k = limit; k > limit / 3; --k)
      if (break_after(chars[start + k - 1])) {
        cut = k;
        break;
      }
    take(cut);
  }
  if (start < chars.size() || lines.empty()) take(chars.size() - start);
  return lines;
}

// One <text> per line, the first baseline at `y`; returns the baseline after the last.
double text_lines(std::string& svg, double x, double y, const std::vector<std::string>& lines,
                  double font_size, const std::string& attributes = "") {
  for (const auto& line : lines) {
    svg += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"{}\"{}>{}</text>\n", x, y,
                       font_size, attributes, escape_xml(line));
    y += std::max(kLineHeight, font_size + 4);
  }
  return y;
}

// One panel's data: a metric's runs and statistics for A and B.
struct Panel {
  std::string metric;
  Better better;
  std::array<const std::vector<double>*, 2> runs;
  std::array<const Summary*, 2> summaries;
  RatioInterval interval;
  std::string verdict;
  bool unresolved = false;
};

std::string ratio_line(const Panel& panel) {
  // A ratio of bucket midpoints that cannot resolve is no measurement: the verdict says why.
  if (panel.unresolved) return panel.verdict;
  return fmt::format("B/A = {:.3f}, {:.3g} % CI [{:.3f}, {:.3f}]: {}", panel.interval.ratio,
                     panel.interval.confidence * 100, panel.interval.low, panel.interval.high,
                     panel.verdict);
}

// A horizontal axis from `low` to `high` over [left, right] at `axis_y`, its ticks, its label.
void draw_axis(std::string& svg, double left, double right, double axis_y, double low, double high,
               const std::vector<std::string>& label) {
  auto x = [&](double value) { return left + (value - low) / (high - low) * (right - left); };
  svg += fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"black\"/>\n", left,
                     axis_y, right, axis_y);
  for (double tick : ticks(low, high))
    svg += fmt::format(
        "<line x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\" stroke=\"black\"/>"
        "<text x=\"{0:.1f}\" y=\"{3}\" font-size=\"{5}\" text-anchor=\"middle\">{4:.6g}</text>\n",
        x(tick), axis_y, axis_y + 5, axis_y + 20, tick, kFont);
  text_lines(svg, (left + right) / 2, axis_y + 38, label, kFont, " text-anchor=\"middle\"");
}

// The boxes, dots and axis of one panel; `left`/`right` bound its data area.
void draw_panel(std::string& svg, const Panel& panel, double left, double right,
                const std::array<double, 2>& centres, double axis_y,
                const std::vector<std::string>& axis_label) {
  double low = std::min(panel.summaries[0]->min, panel.summaries[1]->min);
  double high = std::max(panel.summaries[0]->max, panel.summaries[1]->max);
  double pad = std::max((high - low) * 0.05, std::abs(high) * 1e-3 + 1e-12);
  low -= pad;
  high += pad;
  auto x = [&](double value) { return left + (value - low) / (high - low) * (right - left); };
  for (std::size_t r = 0; r < 2; ++r) {
    const auto& s = *panel.summaries[r];
    double centre = centres[r];
    const char* colour = kColours[r];
    svg += fmt::format(
        "<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"{}\"/>\n", x(s.min),
        centre, x(s.max), centre, colour);
    svg += fmt::format(
        "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"30\" fill=\"{}\" "
        "fill-opacity=\"0.2\" stroke=\"{}\"/>\n",
        x(s.q1), centre - 15, std::max(1.0, x(s.q3) - x(s.q1)), colour, colour);
    svg += fmt::format(
        "<line x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{0:.1f}\" y2=\"{2:.1f}\" stroke=\"{3}\" "
        "stroke-width=\"3\"/>\n",
        x(s.median), centre - 18, centre + 18, colour);
    const auto& runs = *panel.runs[r];
    for (std::size_t i = 0; i < runs.size(); ++i)
      svg += fmt::format(
          "<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"3\" fill=\"{}\" fill-opacity=\"0.6\"/>\n",
          x(runs[i]), centre + 28 + 8 * jitter(i), colour);
  }
  draw_axis(svg, left, right, axis_y, low, high, axis_label);
}

// The blocks' own B/A (issue 29): one numbered marker per block on a B/A axis with 1 marked,
// and the two-level interval as a bar under them, so that blocks that disagree are seen beside
// the runs they were made from.
void draw_block_panel(std::string& svg, const Analysis& analysis, double left, double right,
                      double top, double axis_y) {
  const auto& ratios = analysis.block_ratios;
  double low =
      std::min({1.0, analysis.interval.low, *std::min_element(ratios.begin(), ratios.end())});
  double high =
      std::max({1.0, analysis.interval.high, *std::max_element(ratios.begin(), ratios.end())});
  double pad = std::max((high - low) * 0.08, 1e-3);
  low -= pad;
  high += pad;
  auto x = [&](double value) { return left + (value - low) / (high - low) * (right - left); };
  double middle = (top + axis_y) / 2;
  svg += fmt::format(
      "<line x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{0:.1f}\" y2=\"{2:.1f}\" stroke=\"#999\" "
      "stroke-dasharray=\"4 3\"/>\n",
      x(1), top, axis_y);
  for (std::size_t k = 0; k < ratios.size(); ++k) {
    double y = middle - 20 + 10 * jitter(k);
    svg += fmt::format(
        "<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"5\" fill=\"#2ca02c\" fill-opacity=\"0.7\">"
        "<title>block {}: B/A {:.4f}</title></circle>\n",
        x(ratios[k]), y, k + 1, ratios[k]);
    svg += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"{}\">{}</text>\n",
                       x(ratios[k]) + 6, y - 4, kSmallFont, k + 1);
  }
  double bar_y = middle + 20;
  svg += fmt::format(
      "<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"black\" "
      "stroke-width=\"3\"/>\n",
      x(analysis.interval.low), bar_y, x(analysis.interval.high), bar_y);
  svg += fmt::format(
      "<line x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{0:.1f}\" y2=\"{2:.1f}\" stroke=\"black\" "
      "stroke-width=\"3\"/>\n",
      x(analysis.interval.ratio), bar_y - 7, bar_y + 7);
  draw_axis(svg, left, right, axis_y, low, high, {"B/A per block, and the two-level interval"});
}

// The traced window's lock waits (--trace): per variant and waiter class, the share of its waits
// that took at most each duration, on a log axis of µs (a curve further right waited longer),
// whatever the lock. A's curves in A's colour, B's in B's, one dash pattern per class; the legend
// under the axis. Returns where the legend ends.
double draw_wait_panel(std::string& svg, const std::vector<TracedRun>& runs, double left,
                       double right, double top, double axis_y) {
  constexpr const char* kDashes[] = {"", "7 3", "2 3", "9 3 2 3"};
  constexpr std::size_t kMaxPoints = 400;  // per curve: a step at every rank up to this many
  struct Curve {
    std::size_t side;
    std::string label;
    std::vector<std::uint64_t> ns;
  };
  std::vector<Curve> curves;
  std::vector<std::string> classes;  // every class of either side, for one dash pattern each
  std::uint64_t lowest = UINT64_MAX, highest = 0;
  for (const auto& run : runs)
    for (auto& [waiter, ns] : waits_by_class(run.summary)) {
      if (std::find(classes.begin(), classes.end(), waiter) == classes.end())
        classes.push_back(waiter);
      lowest = std::min(lowest, std::max<std::uint64_t>(ns.front(), 1));
      highest = std::max(highest, ns.back());
      curves.push_back({run.side == "B" ? 1u : 0u, run.side + " " + waiter, std::move(ns)});
    }
  if (curves.empty()) {
    text_lines(svg, left, (top + axis_y) / 2, {"no lock waits in the traced window"}, kFont);
    return axis_y;
  }
  double low = std::floor(std::log10(static_cast<double>(lowest) / 1e3));
  double high = std::max(low + 1, std::ceil(std::log10(static_cast<double>(highest) / 1e3)));
  auto x = [&](std::uint64_t ns) {
    double decades = std::log10(std::max(static_cast<double>(ns), 1.0) / 1e3);
    return left + (std::clamp(decades, low, high) - low) / (high - low) * (right - left);
  };
  auto y = [&](double share) { return axis_y - share * (axis_y - top); };
  svg += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\" stroke=\"black\"/>\n", left,
                     axis_y, right);
  for (double decade = low; decade <= high; ++decade) {
    double at = left + (decade - low) / (high - low) * (right - left);
    svg += fmt::format(
        "<line x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\" stroke=\"black\"/>"
        "<text x=\"{0:.1f}\" y=\"{3}\" font-size=\"{5}\" text-anchor=\"middle\">{4}</text>\n",
        at, axis_y, axis_y + 5, axis_y + 20,
        // 100000 rather than 1e+05: the axis is read as µs.
        decade < 0 ? fmt::format("{:g}", std::pow(10.0, decade))
                   : fmt::format("{:.0f}", std::pow(10.0, decade)),
        kFont);
  }
  for (double share : {0.0, 0.5, 1.0})
    svg += fmt::format(
        "<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"{}\" text-anchor=\"end\">{:g}</text>\n",
        left - 4, y(share) + 4, kSmallFont, share);
  double legend_y =
      text_lines(svg, (left + right) / 2, axis_y + 38, {"lock wait (µs, log); up: share of waits"},
                 kFont, " text-anchor=\"middle\"");
  for (const auto& curve : curves) {
    std::string points;
    std::size_t n = curve.ns.size(), steps = std::min(n, kMaxPoints);
    double previous = 0;
    for (std::size_t k = 1; k <= steps; ++k) {
      std::size_t rank = (k * n + steps - 1) / steps;  // the k-th of `steps` ranks, 1..n
      double share = static_cast<double>(rank) / static_cast<double>(n);
      double at = x(curve.ns[rank - 1]);
      points += fmt::format("{:.1f},{:.1f} {:.1f},{:.1f} ", at, y(previous), at, y(share));
      previous = share;
    }
    std::size_t dash = static_cast<std::size_t>(
        std::find(classes.begin(), classes.end(), curve.label.substr(2)) - classes.begin());
    std::string pattern = kDashes[dash % std::size(kDashes)];
    std::string dash_attribute =
        pattern.empty() ? "" : fmt::format(" stroke-dasharray=\"{}\"", pattern);
    svg += fmt::format(
        "<polyline class=\"wait-cdf\" points=\"{}\" fill=\"none\" stroke=\"{}\" "
        "stroke-width=\"2\"{}><title>{}: {} waits</title></polyline>\n",
        points, kColours[curve.side], dash_attribute, escape_xml(curve.label), n);
    svg += fmt::format(
        "<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"{}\" "
        "stroke-width=\"2\"{}/>\n",
        left, legend_y - 4, left + 30, legend_y - 4, kColours[curve.side], dash_attribute);
    Durations waits{curve.ns};
    legend_y = text_lines(svg, left + 36, legend_y,
                          {fmt::format("{}: {} waits, {:.1f} ms in all; P50 {:.1f}, P99 {:.1f} µs",
                                       curve.label, n, static_cast<double>(waits.total()) / 1e6,
                                       static_cast<double>(waits.percentile(0.5)) / 1e3,
                                       static_cast<double>(waits.percentile(0.99)) / 1e3)},
                          kSmallFont);
  }
  return legend_y;
}

}  // namespace

double text_width(const std::string& text, double font_size) {
  return static_cast<double>(characters(text).size()) * font_size * kEm;
}

std::string svg_plot(const Analysis& analysis) {
  constexpr double kMargin = 10, kPanelWidth = 440, kPanelPad = 45, kMinRow = 90;
  constexpr double kLabelChars = 34, kDeviceChars = 44;  // wider labels wrap
  constexpr double kWaitPanelWidth = 600;  // its legend lines name a class and four figures

  std::vector<Panel> panels{{analysis.metric_name,
                             analysis.better,
                             {&analysis.runs_a, &analysis.runs_b},
                             {&analysis.summary_a, &analysis.summary_b},
                             analysis.interval,
                             analysis.verdict.text}};
  for (const auto& metric : analysis.secondary)
    panels.push_back({shown_name(metric),
                      metric.better,
                      {&metric.runs_a, &metric.runs_b},
                      {&metric.summary_a, &metric.summary_b},
                      metric.interval,
                      metric.verdict.text,
                      metric.verdict.unresolved});

  // The label column: tag, label and device of each variant, wrapped, as wide as they need.
  struct RowText {
    std::vector<std::string> label, device;
  };
  std::array<RowText, 2> rows;
  double label_width = text_width("B", kFont);
  for (std::size_t r = 0; r < 2; ++r) {
    const Variant& variant = r == 0 ? analysis.a : analysis.b;
    rows[r].label = wrap(variant.label, kLabelChars);
    if (variant.device != variant.label) rows[r].device = wrap(variant.device, kDeviceChars);
    for (const auto& line : rows[r].label)
      label_width = std::max(label_width, text_width(line, kFont));
    for (const auto& line : rows[r].device)
      label_width = std::max(label_width, text_width(line, kSmallFont));
  }
  double plots_left = kMargin + label_width + 2 * kMargin;
  bool block_panel = !analysis.block_ratios.empty();
  bool wait_panel = !analysis.traces.empty();
  double width = plots_left + kPanelWidth * static_cast<double>(panels.size() + block_panel) +
                 (wait_panel ? kWaitPanelWidth : 0) + kMargin;

  std::string body;
  // The title: the row, the main metric, its B/A, interval and verdict, wrapped to the width.
  double text_span = width - 2 * kMargin;
  double y = kMargin + kTitleFont;
  y = text_lines(
      body, kMargin, y,
      wrap(fmt::format("{}: {} ({})", analysis.name.empty() ? "binder-ab" : analysis.name,
                       analysis.metric_name, better_word(analysis.better)),
           text_span / (kTitleFont * kEm)),
      kTitleFont);
  y = text_lines(body, kMargin, y, wrap(ratio_line(panels[0]), text_span / (kFont * kEm)), kFont);

  // With several panels each says which metric it shows and what its B/A is.
  double panel_chars = (kPanelWidth - kMargin) / (kFont * kEm);
  if (panels.size() > 1) {
    double headers_end = y + 8;
    for (std::size_t p = 0; p < panels.size(); ++p) {
      double left = plots_left + kPanelWidth * static_cast<double>(p);
      double line_y = y + 8;
      line_y =
          text_lines(body, left, line_y,
                     wrap(fmt::format("{} ({})", panels[p].metric, better_word(panels[p].better)),
                          panel_chars),
                     kFont, " font-weight=\"bold\"");
      line_y = text_lines(body, left, line_y, wrap(ratio_line(panels[p]), panel_chars), kFont);
      headers_end = std::max(headers_end, line_y);
    }
    y = headers_end;
  }

  // The rows: the labels on the left, each panel's box and dots at the row's centre.
  std::array<double, 2> centres{};
  double row_top = y + 5;
  for (std::size_t r = 0; r < 2; ++r) {
    double lines = 1 + static_cast<double>(rows[r].label.size() + rows[r].device.size());
    double row_height = std::max(kMinRow, lines * kLineHeight + 25);
    centres[r] = row_top + row_height / 2;
    double line_y = text_lines(body, kMargin, row_top + 20, {r == 0 ? "A" : "B"}, kFont,
                               " font-weight=\"bold\"");
    line_y = text_lines(body, kMargin, line_y, rows[r].label, kFont);
    text_lines(body, kMargin, line_y, rows[r].device, kSmallFont, " fill=\"#555\"");
    row_top += row_height;
  }
  double axis_y = row_top + 5;
  double bottom = axis_y;
  for (std::size_t p = 0; p < panels.size(); ++p) {
    double left = plots_left + kPanelWidth * static_cast<double>(p);
    auto axis_label = wrap(panels[p].metric, panel_chars);
    draw_panel(body, panels[p], left + kPanelPad, left + kPanelWidth - kPanelPad, centres, axis_y,
               axis_label);
    bottom = std::max(bottom, axis_y + 38 + kLineHeight * static_cast<double>(axis_label.size()));
    if (p > 0)
      body += fmt::format(
          "<line x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{0:.1f}\" y2=\"{2:.1f}\" stroke=\"#ccc\"/>\n",
          left, y, axis_y);
  }
  if (block_panel) {
    double left = plots_left + kPanelWidth * static_cast<double>(panels.size());
    text_lines(body, left + kMargin, y + 17,
               wrap(fmt::format("{} blocks, I² {:.2f}", analysis.block_ratios.size(),
                                analysis.heterogeneity),
                    panel_chars),
               kFont, " font-weight=\"bold\"");
    draw_block_panel(body, analysis, left + kPanelPad, left + kPanelWidth - kPanelPad, y + 25,
                     axis_y);
    body += fmt::format(
        "<line x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{0:.1f}\" y2=\"{2:.1f}\" stroke=\"#ccc\"/>\n",
        left, y, axis_y);
    bottom = std::max(bottom, axis_y + 38 + kLineHeight);
  }
  if (wait_panel) {
    double left = plots_left + kPanelWidth * static_cast<double>(panels.size() + block_panel);
    text_lines(body, left + kMargin, y + 17,
               wrap("lock waits in the traced window (--trace)", panel_chars), kFont,
               " font-weight=\"bold\"");
    bottom = std::max(bottom, draw_wait_panel(body, analysis.traces, left + kPanelPad,
                                              left + kWaitPanelWidth - kMargin, y + 25, axis_y));
    body += fmt::format(
        "<line x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{0:.1f}\" y2=\"{2:.1f}\" stroke=\"#ccc\"/>\n",
        left, y, axis_y);
  }
  double height = bottom + kMargin;
  return fmt::format(
             "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0:.0f}\" height=\"{1:.0f}\" "
             "viewBox=\"0 0 {0:.0f} {1:.0f}\" font-family=\"sans-serif\" font-size=\"{2}\">\n"
             "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n",
             std::ceil(width), std::ceil(height), kFont) +
         body + "</svg>\n";
}

}  // namespace cused::tools::ab
