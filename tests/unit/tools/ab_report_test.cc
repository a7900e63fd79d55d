// SPDX-License-Identifier: GPL-2.0-only
// binder-ab's SVG plot (issue 21): no text runs past the picture's edge or into the plots, however
// long the variant labels (they were cut at 22 characters), the title keeps the interval and the
// verdict, and --latency's metrics get a panel each beside the main one.
#include <gtest/gtest.h>

#include <regex>
#include <string>
#include <vector>

#include "tools/ab/report.h"

namespace cused::tools::ab {
namespace {

struct SvgText {
  double x, y, size;
  std::string anchor, text;
};

std::vector<SvgText> texts_of(const std::string& svg) {
  std::vector<SvgText> out;
  std::regex element(
      R"re(<text x="([0-9.]+)" y="([0-9.]+)" font-size="([0-9.]+)"([^>]*)>([^<]*)</text>)re");
  for (std::sregex_iterator it(svg.begin(), svg.end(), element), end; it != end; ++it) {
    std::string attributes = (*it)[4];
    out.push_back(
        {std::stod((*it)[1]), std::stod((*it)[2]), std::stod((*it)[3]),
         attributes.find("text-anchor=\"middle\"") != std::string::npos ? "middle" : "start",
         (*it)[5]});
  }
  return out;
}

double svg_width(const std::string& svg) {
  std::smatch match;
  EXPECT_TRUE(std::regex_search(svg, match, std::regex(R"re(<svg [^>]*width="([0-9.]+)")re")));
  return std::stod(match[1]);
}

// The left edge of the first panel's plotting area: the leftmost box or whisker.
double plots_left(const std::string& svg) {
  double left = 1e9;
  std::regex shape(R"re(<(?:rect|line) x1?="([0-9.]+)")re");
  for (std::sregex_iterator it(svg.begin(), svg.end(), shape), end; it != end; ++it)
    left = std::min(left, std::stod((*it)[1]));
  return left;
}

Analysis sample(const std::string& label_a, const std::string& label_b) {
  Analysis analysis;
  analysis.name = "payload 4096, shrinker stress";
  analysis.metric_name = "iterations per sec";
  analysis.a = {label_a, "/tmp/cused-quickstart-gVG08h/" + label_a.substr(0, label_a.find(':'))};
  analysis.b = {label_b, "/tmp/cused-quickstart-gVG08h/" + label_b.substr(0, label_b.find(':'))};
  for (int i = 0; i < 20; ++i) {
    analysis.runs_a.push_back(9300 + 37 * (i % 7));
    analysis.runs_b.push_back(9900 + 41 * (i % 5));
  }
  BootstrapOptions bootstrap;
  bootstrap.resamples = 500;
  return analyze(analysis, bootstrap);
}

void expect_no_text_clipped(const std::string& svg) {
  double width = svg_width(svg);
  double left_of_plots = plots_left(svg);
  auto texts = texts_of(svg);
  ASSERT_FALSE(texts.empty());
  double labels_top = 1e9;  // the label column starts with the tag "A"
  for (const auto& text : texts)
    if (text.text == "A") labels_top = std::min(labels_top, text.y);
  for (const auto& text : texts) {
    double extent = text_width(text.text, text.size);
    double from = text.anchor == "middle" ? text.x - extent / 2 : text.x;
    EXPECT_GE(from, 0) << text.text;
    EXPECT_LE(from + extent, width) << text.text;
    // The labels at the left end before the plots begin.
    if (text.y >= labels_top && text.x < left_of_plots && text.anchor == "start") {
      EXPECT_LE(from + extent, left_of_plots) << text.text;
    }
  }
}

// Every character of `label` is drawn, in order, across the lines it was wrapped to.
void expect_label_whole(const std::string& svg, const std::string& label) {
  std::string drawn;
  for (const auto& text : texts_of(svg)) drawn += text.text;
  EXPECT_NE(drawn.find(label), std::string::npos) << label << " not in " << drawn;
}

TEST(AbSvgPlot, TheLabelsThatWereCutAreWhole) {
  auto svg = svg_plot(sample("binder:alloc_lock=mutex", "fast:alloc_lock=spin-install"));
  expect_label_whole(svg, "binder:alloc_lock=mutex");
  expect_label_whole(svg, "fast:alloc_lock=spin-install");
  expect_no_text_clipped(svg);
}

TEST(AbSvgPlot, AVeryLongSpecWrapsAtItsSeparatorsAndStaysInside) {
  std::string long_b =
      "fast:alloc_lock=spin-install,pages=lazy,lock_policy=handoff,defer_complete=on,exec_context="
      "caller,install_latency_us=0";
  auto svg = svg_plot(sample("binder:alloc_lock=mutex", long_b));
  expect_no_text_clipped(svg);
  // Wrapped after a separator: some line ends with ',' and none is the whole spec.
  bool wrapped_at_comma = false;
  for (const auto& text : texts_of(svg)) {
    EXPECT_NE(text.text, long_b);
    if (!text.text.empty() && text.text.back() == ',') wrapped_at_comma = true;
  }
  EXPECT_TRUE(wrapped_at_comma);
  std::string drawn;
  for (const auto& text : texts_of(svg)) drawn += text.text;
  EXPECT_NE(drawn.find(long_b), std::string::npos);
}

TEST(AbSvgPlot, TheTitleHasTheIntervalAndTheVerdict) {
  auto analysis = sample("binder:alloc_lock=mutex", "fast:alloc_lock=spin-install");
  auto svg = svg_plot(analysis);
  std::string title;  // everything above the label column
  for (const auto& text : texts_of(svg)) {
    if (text.text == "A") break;
    title += text.text + " ";
  }
  EXPECT_NE(title.find("payload 4096, shrinker stress"), std::string::npos) << title;
  EXPECT_NE(title.find("B/A = "), std::string::npos) << title;
  EXPECT_NE(title.find("95 % CI ["), std::string::npos) << title;
  EXPECT_NE(title.find("B is "), std::string::npos) << title;  // B is about 6 % faster
}

TEST(AbSvgPlot, LatencyMetricsGetAPanelEachBesideThroughput) {
  auto analysis = sample("binder:alloc_lock=mutex", "fast:alloc_lock=spin-install");
  for (const char* name : {"P50 latency (ms)", "P99 latency (ms)"}) {
    SecondaryMetric metric;
    metric.name = name;
    for (int i = 0; i < 20; ++i) {
      metric.runs_a.push_back(0.1 + 0.001 * (i % 3));
      metric.runs_b.push_back(0.09 + 0.001 * (i % 4));
    }
    analysis.secondary.push_back(metric);
  }
  BootstrapOptions bootstrap;
  bootstrap.resamples = 500;
  analysis = analyze(analysis, bootstrap);
  auto one_panel = svg_plot(sample("binder:alloc_lock=mutex", "fast:alloc_lock=spin-install"));
  auto svg = svg_plot(analysis);
  EXPECT_GT(svg_width(svg), svg_width(one_panel) * 2);  // beside, not over each other
  expect_no_text_clipped(svg);
  std::size_t dots = 0;
  for (auto at = svg.find("<circle"); at != std::string::npos; at = svg.find("<circle", at + 1))
    ++dots;
  EXPECT_EQ(dots, 3u * 2 * 20);  // three panels, a dot a run
  std::string drawn;
  for (const auto& text : texts_of(svg)) drawn += text.text + "|";
  EXPECT_NE(drawn.find("P99 latency (ms) (lower is better)"), std::string::npos) << drawn;
  // JSON keeps them, and a replay reads them back.
  auto replayed = from_json(to_json(analysis));
  ASSERT_EQ(replayed.secondary.size(), 2u);
  EXPECT_EQ(replayed.secondary[1].name, "P99 latency (ms)");
  EXPECT_EQ(replayed.secondary[1].runs_b, analysis.secondary[1].runs_b);
}

}  // namespace
}  // namespace cused::tools::ab
