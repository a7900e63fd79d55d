// SPDX-License-Identifier: GPL-2.0-only
#include "tools/ab/experiment_file.h"

#include <fmt/format.h>

#include <fstream>
#include <limits>
#include <regex>
#include <set>
#include <stdexcept>
#include <string_view>
#include <type_traits>
#include <variant>

#include "core/device_variant.h"

namespace cused::tools::ab {

namespace {

std::string joined(const std::string& prefix, const std::string& key) {
  return prefix.empty() ? key : prefix + "." + key;
}

// One JSON object of the file, read key by key: each getter checks the value's type and range
// and names the key when it refuses; finish() refuses every key no getter asked for.
class ObjectReader {
 public:
  ObjectReader(const ExperimentJson& object, std::string path)
      : object_(object), path_(std::move(path)) {
    if (!object_.is_object())
      throw ExperimentError(fmt::format("{}: an object {{...}} is needed here, not {}",
                                        path_.empty() ? "the file" : path_, object_.dump()));
  }

  bool has(const std::string& key) {
    read_.insert(key);
    return object_.contains(key);
  }

  std::string key_path(const std::string& key) const { return joined(path_, key); }

  const ExperimentJson& raw(const std::string& key) {
    read_.insert(key);
    return object_.at(key);
  }

  long integer(const std::string& key, long low, long high, long fallback) {
    return ranged<long>(key, low, high, fallback, "a whole number");
  }

  double number(const std::string& key, double low, double high, double fallback) {
    return ranged<double>(key, low, high, fallback, "a number");
  }

  bool boolean(const std::string& key, bool fallback) {
    if (!has(key)) return fallback;
    const auto& value = object_.at(key);
    if (!value.is_boolean())
      throw ExperimentError(
          fmt::format("{}: true or false is needed, not {}", key_path(key), value.dump()));
    return value.get<bool>();
  }

  std::string string(const std::string& key, const std::string& fallback) {
    if (!has(key)) return fallback;
    const auto& value = object_.at(key);
    if (!value.is_string())
      throw ExperimentError(
          fmt::format("{}: a string \"...\" is needed, not {}", key_path(key), value.dump()));
    return value.get<std::string>();
  }

  std::string required_string(const std::string& key) {
    if (!object_.contains(key))
      throw ExperimentError(
          fmt::format("{}: missing (docs/ab.md, \"Experiment files\")", key_path(key)));
    return string(key, "");
  }

  // `key`'s value, one of `choices`.
  std::string choice(const std::string& key, const std::vector<std::string>& choices,
                     const std::string& fallback) {
    std::string value = string(key, fallback);
    for (const auto& choice : choices)
      if (value == choice) return value;
    throw ExperimentError(
        fmt::format("{}: \"{}\" is not one of {}", key_path(key), value, fmt::join(choices, ", ")));
  }

  void finish() const {
    for (const auto& [key, value] : object_.items())
      if (!read_.contains(key))
        throw ExperimentError(
            fmt::format("{}: unknown key (docs/ab.md, \"Experiment files\", "
                        "lists every key)",
                        key_path(key)));
  }

 private:
  // `key`'s number: `kind` of JSON number (a whole one for long), within [low, high].
  template <typename Number>
  Number ranged(const std::string& key, Number low, Number high, Number fallback,
                const char* kind) {
    if (!has(key)) return fallback;
    const auto& value = object_.at(key);
    bool right_kind = std::is_integral_v<Number> ? value.is_number_integer() : value.is_number();
    if (!right_kind)
      throw ExperimentError(
          fmt::format("{}: {} is needed, not {}", key_path(key), kind, value.dump()));
    auto number = value.get<Number>();
    if (number < low || number > high)
      throw ExperimentError(
          fmt::format("{}: {} is out of range, {} to {}", key_path(key), number, low, high));
    return number;
  }

  const ExperimentJson& object_;
  std::string path_;
  std::set<std::string> read_;
};

ExperimentDevice parse_device(const ExperimentJson& json, const std::string& path,
                              const std::string& default_name) {
  ObjectReader reader(json, path);
  ExperimentDevice device;
  device.name = reader.string("name", default_name);
  static const std::regex kNodeName("[A-Za-z0-9_-]{1,64}");
  if (!std::regex_match(device.name, kNodeName))
    throw ExperimentError(fmt::format("{}: \"{}\" is not a device name (letters, digits, _ and -)",
                                      reader.key_path("name"), device.name));
  device.variant = reader.string("variant", "");
  // The variant grammar is core/device_variant's (every registered design, its keys): its
  // parser decides, and its complaint is passed on with the key.
  auto parsed = core::parse_device_variant(device.variant);
  if (auto* error = std::get_if<core::VariantSpecError>(&parsed))
    throw ExperimentError(fmt::format("{}: {}", reader.key_path("variant"), error->message));
  reader.finish();
  return device;
}

// "off", "fifo" or "fifo:N" (N 1-99): the SCHED_FIFO priority, 0 for off.
int parse_realtime(const std::string& text, const std::string& path) {
  if (text == "off") return 0;
  if (text == "fifo") return 1;
  static const std::regex kFifo("fifo:([0-9]{1,2})");
  std::smatch match;
  if (std::regex_match(text, match, kFifo)) {
    int priority = std::stoi(match[1]);
    if (priority >= 1 && priority <= 99) return priority;
  }
  throw ExperimentError(
      fmt::format("{}: \"{}\" is not off, fifo or fifo:PRIO (PRIO 1 to 99)", path, text));
}

// The spellings a file uses, each once: parsing, and the lists the refusals print, come from
// these tables.
template <typename Value>
struct Named {
  std::string_view name;
  Value value;
};

constexpr Named<WorkloadProgram> kPrograms[] = {
    {"binder-throughput", WorkloadProgram::binder_throughput},
    {"binderThroughputTest", WorkloadProgram::binder_throughput_test},
    {"binder-sendvec", WorkloadProgram::binder_sendvec},
    {"binder-messaging", WorkloadProgram::binder_messaging},
    {"command", WorkloadProgram::command},
};

constexpr Named<LatencyPercentile> kPercentiles[] = {
    {"p50", LatencyPercentile::p50},
    {"p90", LatencyPercentile::p90},
    {"p99", LatencyPercentile::p99},
    {"p99.9", LatencyPercentile::p999},
};

template <typename Value, std::size_t N>
std::vector<std::string> names_of(const Named<Value> (&table)[N]) {
  std::vector<std::string> names;
  for (const auto& entry : table) names.emplace_back(entry.name);
  return names;
}

template <typename Value, std::size_t N>
Value value_named(const Named<Value> (&table)[N], std::string_view name) {
  for (const auto& entry : table)
    if (entry.name == name) return entry.value;
  throw std::logic_error("no entry named " + std::string(name));
}

std::vector<std::string> parse_command(ObjectReader& reader) {
  if (!reader.has("command"))
    throw ExperimentError(
        fmt::format("{}: missing (program \"command\" runs it)", reader.key_path("command")));
  const auto& words = reader.raw("command");
  bool strings = words.is_array() && !words.empty();
  for (const auto& word : words) strings = strings && word.is_string();
  if (!strings)
    throw ExperimentError(
        fmt::format("{}: a list of strings [\"program\", \"{{dev}}\", ...] is "
                    "needed, not {}",
                    reader.key_path("command"), words.dump()));
  auto command = words.get<std::vector<std::string>>();
  bool has_device = false;
  for (const auto& word : command) has_device = has_device || word.find("{dev}") != word.npos;
  if (!has_device)
    throw ExperimentError(fmt::format("{}: no word holds {{dev}}, so A and B would run the same",
                                      reader.key_path("command")));
  return command;
}

ExperimentWorkload parse_workload(const ExperimentJson& json) {
  ObjectReader reader(json, "workload");
  ExperimentWorkload workload;
  workload.program =
      value_named(kPrograms, reader.choice("program", names_of(kPrograms), "binder-throughput"));
  if (workload.program == WorkloadProgram::command) workload.command = parse_command(reader);
  workload.workers = static_cast<int>(reader.integer("workers", 1, 64, 2));
  workload.iterations = static_cast<int>(reader.integer("iterations", 1, 10'000'000, 1000));
  workload.payload = static_cast<int>(reader.integer("payload", 0, 1 << 20, 0));
  workload.latency_max_us = static_cast<int>(reader.integer("latency_max_us", 0, 10'000'000, 0));
  workload.defer_complete = reader.boolean("defer_complete", false);
  workload.groups = static_cast<int>(reader.integer("groups", 1, 64, 1));
  workload.loops = static_cast<int>(reader.integer("loops", 1, 1'000'000, 100));
  workload.benchmark_filter = reader.string("benchmark_filter", "");
  workload.nice = static_cast<int>(reader.integer("nice", -20, 19, 0));
  workload.realtime_priority =
      parse_realtime(reader.string("realtime", "off"), reader.key_path("realtime"));
  workload.metric = reader.string("metric", "");
  if (!workload.metric.empty()) {
    try {
      std::regex pattern(workload.metric);
      if (pattern.mark_count() < 1)
        throw ExperimentError(fmt::format("{}: the regex needs a group (...) around the number",
                                          reader.key_path("metric")));
    } catch (const std::regex_error& error) {
      throw ExperimentError(
          fmt::format("{}: not a regex: {}", reader.key_path("metric"), error.what()));
    }
  }
  workload.metric_name = reader.string("metric_name", "");
  if (reader.has("lower_is_better"))
    workload.lower_is_better = reader.boolean("lower_is_better", false);
  if (reader.has("counts")) workload.counts = reader.boolean("counts", false);
  reader.finish();
  return workload;
}

ExperimentConditions parse_conditions(const ExperimentJson& json) {
  ObjectReader reader(json, "conditions");
  ExperimentConditions conditions;
  if (reader.has("daemon_nice"))
    conditions.daemon_nice = static_cast<int>(reader.integer("daemon_nice", -20, 19, 0));
  conditions.background_callers = reader.boolean("background_callers", false);
  conditions.background_traffic = reader.boolean("background_traffic", false);
  conditions.cpu_hogs = static_cast<int>(reader.integer("cpu_hogs", 0, 64, 0));
  conditions.shrinker_stress = reader.boolean("shrinker_stress", false);
  if (reader.has("memcg")) {
    ObjectReader memcg(reader.raw("memcg"), reader.key_path("memcg"));
    ExperimentMemoryCgroup cgroup;
    cgroup.mib = static_cast<int>(memcg.integer("mib", 16, 1 << 20, 256));
    cgroup.zram = memcg.boolean("zram", true);
    memcg.finish();
    conditions.memcg = cgroup;
  }
  if (reader.has("install_latency_us"))
    conditions.install_latency_us =
        static_cast<int>(reader.integer("install_latency_us", 0, 1'000'000, 0));
  reader.finish();
  return conditions;
}

ExperimentPublished parse_published(const ExperimentJson& json) {
  ObjectReader reader(json, "published");
  ExperimentPublished published;
  published.experiment = reader.required_string("experiment");
  published.result = reader.required_string("result");
  published.direction = reader.choice("direction", {"higher", "lower"}, "higher") == "higher"
                            ? Better::higher
                            : Better::lower;
  reader.finish();
  return published;
}

LatencyPercentile parse_percentile(const ExperimentJson& value, const std::string& path) {
  for (const auto& [name, percentile] : kPercentiles)
    if (value == name) return percentile;
  std::vector<std::string> quoted;
  for (const auto& name : names_of(kPercentiles)) quoted.push_back(fmt::format("\"{}\"", name));
  throw ExperimentError(
      fmt::format("{}: {} is not one of {}", path, value.dump(), fmt::join(quoted, ", ")));
}

std::vector<LatencyPercentile> parse_latency(ObjectReader& reader) {
  if (!reader.has("latency")) return {};
  const auto& value = reader.raw("latency");
  if (value.is_boolean()) {
    if (!value.get<bool>()) return {};
    std::vector<LatencyPercentile> all;
    for (const auto& entry : kPercentiles) all.push_back(entry.value);
    return all;
  }
  if (!value.is_array())
    throw ExperimentError(fmt::format(
        "latency: true, false or a list like [\"p50\", \"p99\"] is needed, not {}", value.dump()));
  std::vector<LatencyPercentile> percentiles;
  for (const auto& entry : value) {
    auto percentile = parse_percentile(entry, "latency");
    if (std::find(percentiles.begin(), percentiles.end(), percentile) != percentiles.end())
      throw ExperimentError(fmt::format("latency: {} is listed twice", entry.dump()));
    percentiles.push_back(percentile);
  }
  return percentiles;
}

// The keys a sweep may vary: those that change one comparison's settings, not the file's frame.
bool sweepable(const std::string& dotted) {
  return dotted == "cases" || dotted.starts_with("workload.") ||
         dotted.starts_with("conditions.") || dotted.starts_with("devices.") || dotted == "time" ||
         dotted == "blocks";
}

ExperimentJson* walk(ExperimentJson& file, const std::string& dotted, bool create) {
  ExperimentJson* node = &file;
  std::size_t start = 0;
  for (;;) {
    auto end = dotted.find('.', start);
    std::string part = dotted.substr(start, end == dotted.npos ? dotted.npos : end - start);
    if (part.empty()) throw ExperimentError(fmt::format("\"{}\": not a dotted key", dotted));
    if (!node->is_object()) {
      if (!create || !node->is_null())
        throw ExperimentError(fmt::format("{}: {} holds no keys", dotted, part));
      *node = ExperimentJson::object();
    }
    if (!node->contains(part) && !create) return nullptr;
    node = &(*node)[part];
    if (end == dotted.npos) return node;
    start = end + 1;
  }
}

// A cell's part of the comparison's name: the value, or the part after '=' of a one-key variant
// ("lock_policy=steal" -> "steal").
std::string cell_word(const ExperimentJson& value) {
  if (!value.is_string()) return value.dump();
  auto text = value.get<std::string>();
  auto equals = text.find('=');
  if (equals != text.npos && text.find(',') == text.npos) return text.substr(equals + 1);
  return text;
}

}  // namespace

Experiment parse_experiment(const ExperimentJson& file) {
  ObjectReader reader(file, "");
  Experiment experiment;
  experiment.name = reader.required_string("name");
  static const std::regex kName("[A-Za-z0-9_.+-]{1,100}");
  if (!std::regex_match(experiment.name, kName))
    throw ExperimentError(fmt::format(
        "name: \"{}\" is not a file name (letters, digits, '_', '.', '+', '-')", experiment.name));
  experiment.title = reader.string("title", "");
  experiment.description = reader.string("description", "");
  if (reader.has("published")) experiment.published = parse_published(reader.raw("published"));
  if (!reader.has("devices"))
    throw ExperimentError("devices: missing: {\"a\": {\"variant\": ...}, \"b\": {...}}");
  ObjectReader devices(reader.raw("devices"), "devices");
  if (!devices.has("a") || !devices.has("b"))
    throw ExperimentError("devices: both \"a\" and \"b\" are needed");
  experiment.a = parse_device(devices.raw("a"), "devices.a", "a");
  experiment.b = parse_device(devices.raw("b"), "devices.b", "b");
  devices.finish();
  if (experiment.a.name == experiment.b.name)
    throw ExperimentError(fmt::format("devices.b.name: \"{}\" is A's name too", experiment.b.name));
  experiment.workload =
      parse_workload(reader.has("workload") ? reader.raw("workload") : ExperimentJson::object());
  experiment.conditions = parse_conditions(reader.has("conditions") ? reader.raw("conditions")
                                                                    : ExperimentJson::object());
  experiment.blocks = static_cast<int>(reader.integer("blocks", 1, 1000, 5));
  experiment.time = reader.number("time", 0.1, 86400, 60);
  experiment.latency = parse_latency(reader);
  experiment.trace = reader.boolean("trace", false);
  experiment.confidence = reader.number("confidence", 0.5, 0.999, 0.95);
  experiment.detect = reader.number("detect", 0.01, 1000, 5);
  // Read by expand_sweep and quick_version, known here.
  reader.has("sweep");
  reader.has("quick");
  reader.finish();
  if (!experiment.latency.empty() &&
      experiment.workload.program != WorkloadProgram::binder_throughput &&
      experiment.workload.program != WorkloadProgram::binder_throughput_test &&
      experiment.workload.program != WorkloadProgram::command)
    throw ExperimentError(
        "latency: only binder-throughput and binderThroughputTest (or a command printing their "
        "lines) print latency percentiles");
  return experiment;
}

std::vector<ExperimentCell> expand_sweep(const ExperimentJson& file) {
  ExperimentJson frame = file;
  std::vector<std::pair<std::string, ExperimentJson>> axes;
  if (file.is_object() && file.contains("sweep")) {
    frame.erase("sweep");
    const auto& sweep = file.at("sweep");
    if (!sweep.is_object() || sweep.empty())
      throw ExperimentError(
          "sweep: an object {\"workload.groups\": [1, 2], ...} of dotted keys and their values "
          "is needed");
    for (const auto& [key, values] : sweep.items()) {
      if (!sweepable(key))
        throw ExperimentError(fmt::format(
            "sweep.{}: not a key a sweep varies (cases, workload.*, conditions.*, devices.*, "
            "time, blocks)",
            key));
      if (!values.is_array() || values.empty())
        throw ExperimentError(fmt::format("sweep.{}: a non-empty list of values is needed", key));
      if (key == "cases")
        for (const auto& value : values)
          if (!value.is_object() || !value.contains("name") || !value.at("name").is_string())
            throw ExperimentError(fmt::format(
                "sweep.cases: each case is an object with a \"name\" and the keys it sets, not {}",
                value.dump()));
      axes.emplace_back(key, values);
    }
  }
  std::vector<ExperimentCell> cells;
  std::vector<std::size_t> index(axes.size(), 0);
  for (;;) {
    ExperimentJson cell = frame;
    std::string name = frame.value("name", std::string{});
    for (std::size_t i = 0; i < axes.size(); ++i) {
      const auto& value = axes[i].second.at(index[i]);
      if (axes[i].first == "cases") {  // a case: its keys over the file's, its name the cell's
        ExperimentJson keys = value;
        keys.erase("name");
        cell.merge_patch(keys);
        name += "-" + value.at("name").get<std::string>();
        continue;
      }
      *walk(cell, axes[i].first, true) = value;
      name += "-" + cell_word(value);
    }
    try {
      Experiment experiment = parse_experiment(cell);
      cells.push_back({name, std::move(experiment)});
    } catch (const ExperimentError& error) {
      if (axes.empty()) throw;
      throw ExperimentError(fmt::format("sweep cell {}: {}", name, error.what()));
    }
    // The next cell: the last axis varies fastest.
    std::size_t axis = axes.size();
    while (axis > 0 && ++index[axis - 1] == axes[axis - 1].second.size()) index[--axis] = 0;
    if (axis == 0) break;
  }
  return cells;
}

ExperimentJson with_setting(ExperimentJson file, const std::string& dotted_key,
                            const std::string& value) {
  ExperimentJson parsed;
  try {
    parsed = ExperimentJson::parse(value);
  } catch (const ExperimentJson::parse_error&) {
    parsed = value;
  }
  // A sweep's keys are dotted themselves: sweep.workload.groups is the sweep's "workload.groups".
  if (dotted_key.starts_with("sweep.")) {
    if (!file.contains("sweep") || !file.at("sweep").is_object())
      file["sweep"] = ExperimentJson::object();
    file["sweep"][dotted_key.substr(6)] = parsed;
    return file;
  }
  *walk(file, dotted_key, true) = parsed;
  return file;
}

ExperimentJson quick_version(ExperimentJson file) {
  ExperimentJson quick = file.contains("quick") ? file.at("quick") : ExperimentJson::object();
  if (!quick.is_object())
    throw ExperimentError("quick: an object of the keys --quick sets ({\"time\": 2, ...})");
  file["time"] = 2;
  file["blocks"] = 3;
  // The overrides, key by key, objects merged (a quick "workload": {"loops": 20} keeps the
  // workload's other keys).
  file.merge_patch(quick);
  return file;
}

ExperimentJson read_experiment_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw ExperimentError("cannot read " + path);
  ExperimentJson json;
  try {
    json = ExperimentJson::parse(in, nullptr, true, /*ignore_comments=*/true);
  } catch (const ExperimentJson::parse_error& error) {
    throw ExperimentError(fmt::format("{}: not JSON: {}", path, error.what()));
  }
  // A binder-ab run record: the experiment it ran is kept whole in it.
  if (json.is_object() && json.contains("experiment") && json.contains("comparisons"))
    return json.at("experiment");
  return json;
}

std::string effective_variant(const Experiment& experiment, const ExperimentDevice& device) {
  std::string variant = device.variant;
  auto add = [&variant](const std::string& keys) {
    variant += variant.empty() ? keys : "," + keys;
  };
  if (experiment.conditions.install_latency_us)
    add(fmt::format("install_latency_us={}", *experiment.conditions.install_latency_us));
  // The Android kernel's RT inheritance, which a real-time caller's comparison needs on both.
  if (experiment.workload.realtime_priority > 0) add("priority=android");
  return variant;
}

}  // namespace cused::tools::ab
