// SPDX-License-Identifier: GPL-2.0-only
// binder-ab run's experiment files (issue 46 point 1): every key a file may hold is read, and an
// unknown key or a value out of its range is refused with a message that names it; a sweep is the
// cross product of its parameters in the file's order; the published scenarios' files parse.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "tools/ab/experiment_file.h"
#include "tools/ab/kernel_design_names.h"

namespace cused::tools::ab {
namespace {

ExperimentJson minimal() {
  return ExperimentJson::parse(R"({
    "name": "mine",
    "devices": {"a": {"variant": "alloc_lock=mutex"}, "b": {"variant": "alloc_lock=spin"}}
  })");
}

// The message parse_experiment refuses `file` with ("" when it accepts it).
std::string refusal(const ExperimentJson& file) {
  try {
    expand_sweep(file);
  } catch (const ExperimentError& error) {
    return error.what();
  }
  return "";
}

std::string refusal_with(const std::string& key, const std::string& value) {
  return refusal(with_setting(minimal(), key, value));
}

TEST(ExperimentFile, MinimalFileTakesTheDefaults) {
  auto experiment = parse_experiment(minimal());
  EXPECT_EQ(experiment.a.name, "a");
  EXPECT_EQ(experiment.b.variant, "alloc_lock=spin");
  EXPECT_EQ(experiment.workload.program, WorkloadProgram::binder_throughput);
  EXPECT_EQ(experiment.blocks, 5);
  EXPECT_EQ(experiment.time, 60);
  EXPECT_TRUE(experiment.latency.empty());
}

TEST(ExperimentFile, UnknownKeysAreRefusedByName) {
  EXPECT_EQ(refusal_with("bloks", "3"),
            "bloks: unknown key (docs/ab.md, \"Experiment files\", lists every key)");
  EXPECT_NE(refusal_with("workload.worker", "3").find("workload.worker: unknown key"),
            std::string::npos);
  EXPECT_NE(refusal_with("conditions.memcg.size", "3").find("conditions.memcg.size: unknown key"),
            std::string::npos);
  EXPECT_NE(refusal_with("devices.a.varient", "\"x\"").find("devices.a.varient: unknown key"),
            std::string::npos);
  EXPECT_NE(refusal_with("devices.c", "{}").find("devices.c: unknown key"), std::string::npos);
  EXPECT_NE(refusal_with("published", R"({"experiment": "e", "result": "r", "url": "x"})")
                .find("published.url: unknown key"),
            std::string::npos);
  EXPECT_EQ(refusal_with("published", R"({"experiment": "e"})"),
            "published.result: missing (docs/ab.md, \"Experiment files\")");
}

TEST(ExperimentFile, OutOfRangeValuesAreRefusedByName) {
  EXPECT_EQ(refusal_with("workload.workers", "0"), "workload.workers: 0 is out of range, 1 to 64");
  EXPECT_EQ(refusal_with("workload.nice", "20"), "workload.nice: 20 is out of range, -20 to 19");
  EXPECT_EQ(refusal_with("blocks", "0"), "blocks: 0 is out of range, 1 to 1000");
  EXPECT_EQ(refusal_with("time", "0"), "time: 0 is out of range, 0.1 to 86400");
  EXPECT_EQ(refusal_with("conditions.memcg", R"({"mib": 8})"),
            "conditions.memcg.mib: 8 is out of range, 16 to 1048576");
  EXPECT_EQ(refusal_with("conditions.cpu_hogs", "-1"),
            "conditions.cpu_hogs: -1 is out of range, 0 to 64");
  EXPECT_EQ(refusal_with("workload.payload", "\"4k\""),
            "workload.payload: a whole number is needed, not \"4k\"");
  EXPECT_EQ(refusal_with("conditions.shrinker_stress", "1"),
            "conditions.shrinker_stress: true or false is needed, not 1");
  EXPECT_EQ(refusal_with("workload.realtime", "rr"),
            "workload.realtime: \"rr\" is not off, fifo or fifo:PRIO (PRIO 1 to 99)");
  EXPECT_EQ(refusal_with("workload.realtime", "fifo:100"),
            "workload.realtime: \"fifo:100\" is not off, fifo or fifo:PRIO (PRIO 1 to 99)");
  EXPECT_EQ(refusal_with("workload.program", "fio"),
            "workload.program: \"fio\" is not one of binder-throughput, binderThroughputTest, "
            "binder-sendvec, binder-messaging, command");
  EXPECT_EQ(refusal_with("latency", R"(["p95"])"),
            "latency: \"p95\" is not one of \"p50\", \"p90\", \"p99\", \"p99.9\"");
}

// The variant grammar is the daemon's own parser (any registered design): its complaint comes
// with the key.
TEST(ExperimentFile, VariantsAreParsedByTheDeviceVariantGrammar) {
  auto message = refusal_with("devices.b.variant", "alloc_lock=bogus");
  EXPECT_TRUE(message.starts_with("devices.b.variant: ")) << message;
  EXPECT_NE(message.find("bogus"), std::string::npos) << message;
  EXPECT_EQ(refusal_with("devices.b.variant", "alloc_lock=upstream"), "");
  EXPECT_EQ(refusal_with("devices.b.name", "a"), "devices.b.name: \"a\" is A's name too");
}

TEST(ExperimentFile, ACommandNeedsItsDevice) {
  auto file = with_setting(minimal(), "workload", R"({"program": "command"})");
  EXPECT_EQ(refusal(file), "workload.command: missing (program \"command\" runs it)");
  file = with_setting(file, "workload.command", R"(["true"])");
  EXPECT_EQ(refusal(file), "workload.command: no word holds {dev}, so A and B would run the same");
  file = with_setting(file, "workload.command", R"(["prog", "--device={dev}"])");
  EXPECT_EQ(refusal(file), "");
}

// mutex-handoff's table is one sweep: groups x policies, the last key varying fastest, each cell
// named for its values.
TEST(ExperimentFile, SweepIsTheCrossProductInTheFilesOrder) {
  auto file = with_setting(minimal(), "sweep", R"({
    "workload.groups": [1, 2],
    "devices.b.variant": ["lock_policy=handoff", "lock_policy=steal"]})");
  auto cells = expand_sweep(file);
  ASSERT_EQ(cells.size(), 4u);
  EXPECT_EQ(cells[0].name, "mine-1-handoff");
  EXPECT_EQ(cells[1].name, "mine-1-steal");
  EXPECT_EQ(cells[2].name, "mine-2-handoff");
  EXPECT_EQ(cells[3].experiment.workload.groups, 2);
  EXPECT_EQ(cells[3].experiment.b.variant, "lock_policy=steal");
  EXPECT_EQ(refusal_with("sweep", R"({"name": ["x"]})"),
            "sweep.name: not a key a sweep varies (cases, workload.*, conditions.*, devices.*, "
            "time, blocks)");
  EXPECT_EQ(refusal_with("sweep", R"({"workload.workers": [1, 0]})"),
            "sweep cell mine-0: workload.workers: 0 is out of range, 1 to 64");
}

TEST(ExperimentFile, CasesSetTheirKeysOverTheFile) {
  auto file = with_setting(minimal(), "sweep", R"({"cases": [
    {"name": "small", "workload": {"payload": 0}},
    {"name": "big", "title": "big one", "workload": {"payload": 4096},
     "conditions": {"shrinker_stress": true}}]})");
  auto cells = expand_sweep(file);
  ASSERT_EQ(cells.size(), 2u);
  EXPECT_EQ(cells[0].name, "mine-small");
  EXPECT_FALSE(cells[0].experiment.conditions.shrinker_stress);
  EXPECT_EQ(cells[1].experiment.title, "big one");
  EXPECT_EQ(cells[1].experiment.workload.payload, 4096);
  EXPECT_TRUE(cells[1].experiment.conditions.shrinker_stress);
}

TEST(ExperimentFile, QuickSetsTimeAndBlocksThenTheFilesOwnKeys) {
  auto file = with_setting(minimal(), "quick", R"({"workload": {"loops": 20}})");
  file = with_setting(file, "workload.groups", "4");
  auto experiment = parse_experiment(quick_version(file));
  EXPECT_EQ(experiment.time, 2);
  EXPECT_EQ(experiment.blocks, 3);
  EXPECT_EQ(experiment.workload.loops, 20);
  EXPECT_EQ(experiment.workload.groups, 4);  // merged, not replaced
}

TEST(ExperimentFile, ConditionsAndRealTimeReachTheVariants) {
  auto file = with_setting(minimal(), "conditions.install_latency_us", "15");
  file = with_setting(file, "workload.realtime", "fifo:2");
  auto experiment = parse_experiment(file);
  EXPECT_EQ(experiment.workload.realtime_priority, 2);
  EXPECT_EQ(effective_variant(experiment, experiment.a),
            "alloc_lock=mutex,install_latency_us=15,priority=android");
}

// The four published scenarios, quickstart's rows, the copy-me files and the kernel files'
// comparisons (issue 45: alloc-lock-kernel, kernel-history), as shipped.
TEST(ExperimentFile, ShippedFilesParse) {
  accept_kernel_design_names();  // as binder-ab does: the daemon builds them
  const char* source = std::getenv("CUSED_SOURCE_ROOT");
  ASSERT_NE(source, nullptr);
  std::size_t files = 0;
  for (const auto& entry :
       std::filesystem::directory_iterator(std::string(source) + "/experiments")) {
    if (entry.path().extension() != ".json") continue;
    ++files;
    auto file = read_experiment_file(entry.path().string());
    auto cells = expand_sweep(file);
    EXPECT_FALSE(cells.empty()) << entry.path();
    EXPECT_FALSE(expand_sweep(quick_version(file)).empty()) << entry.path();
    const std::string stem = entry.path().stem();
    if (stem == "mutex-handoff") {
      EXPECT_EQ(cells.size(), 15u);
    }
    if (stem == "alloc-lock-kernel") {  // the kernel's files, then cused's designs as a row
      ASSERT_EQ(cells.size(), 2u);
      EXPECT_EQ(cells[0].experiment.a.variant, "alloc_lock=kernel:7.2");
      EXPECT_EQ(cells[0].experiment.b.variant,
                "alloc_lock=kernel:7.2+tests/kernel-designs/patches/"
                "7.2-spinlock-install-mutex.patch");
      EXPECT_EQ(cells[1].experiment.a.variant, "alloc_lock=mutex");
      EXPECT_EQ(cells[1].experiment.b.variant, "alloc_lock=spin-install");
    }
    if (stem == "kernel-history") {
      ASSERT_EQ(cells.size(), 3u);
      EXPECT_EQ(cells[1].experiment.a.variant, "alloc_lock=kernel:6.12");
      EXPECT_EQ(cells[2].experiment.b.variant, "alloc_lock=kernel:7.2");
    }
    if (stem != "quickstart" && stem != "my-design" && stem != "my-kernel-patch" &&
        stem != "kernel-history") {
      EXPECT_TRUE(cells.front().experiment.published) << entry.path();
    }
  }
  EXPECT_EQ(files, 9u);
}

// binder-ab names kernel designs and leaves building them to the daemon: an experiment file
// with one parses without trees, and a name that is no kernel design is still refused.
TEST(ExperimentFile, KernelDesignsAreNamesTheDaemonBuilds) {
  accept_kernel_design_names();
  auto file = with_setting(minimal(), "devices.b.variant", "alloc_lock=kernel:/src/linux+my.patch");
  EXPECT_EQ(parse_experiment(file).b.variant, "alloc_lock=kernel:/src/linux+my.patch");
  EXPECT_THROW(parse_experiment(with_setting(minimal(), "devices.b.variant", "alloc_lock=kernel:")),
               ExperimentError);
}

}  // namespace
}  // namespace cused::tools::ab
