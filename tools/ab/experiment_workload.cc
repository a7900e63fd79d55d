// SPDX-License-Identifier: GPL-2.0-only
#include "tools/ab/experiment_workload.h"

#include <fmt/format.h>

#include "tools/ab/workload.h"

namespace cused::tools::ab {

namespace {

void append(std::vector<std::string>& words, std::initializer_list<std::string> more) {
  words.insert(words.end(), more.begin(), more.end());
}

// nice and chrt before the program: its own nice (relative to binder-ab's, as `nice -n` is) and
// SCHED_FIFO for a real-time caller, whose nice stays as well, ignored while the policy is FIFO.
std::vector<std::string> scheduling_prefix(const ExperimentWorkload& workload) {
  std::vector<std::string> words;
  if (workload.nice != 0) append(words, {"nice", "-n", std::to_string(workload.nice)});
  if (workload.realtime_priority > 0)
    append(words, {"chrt", "-f", std::to_string(workload.realtime_priority)});
  return words;
}

std::vector<std::string> under_cused_run(const WorkloadPrograms& programs,
                                         const std::string& mount) {
  return {programs.cused, "run", "--mount", mount, "--"};
}

void binder_throughput(WorkloadCommand& out, const ExperimentWorkload& workload,
                       const std::string& mount, const WorkloadPrograms& programs) {
  auto& words = out.command;
  auto prefix = under_cused_run(programs, mount);
  words.insert(words.end(), prefix.begin(), prefix.end());
  append(words,
         {programs.binder_throughput, "--device", "{dev}", "-w", std::to_string(workload.workers),
          "-i", std::to_string(workload.iterations), "-s", std::to_string(workload.payload)});
  if (workload.latency_max_us > 0) append(words, {"-m", std::to_string(workload.latency_max_us)});
  if (workload.defer_complete) words.push_back("--defer-complete");
  // Only cused's binder-throughput can mark its nodes FLAT_BINDER_FLAG_INHERIT_RT.
  if (workload.realtime_priority > 0) words.push_back("--inherit-rt");
  out.metric = kDefaultMetric;
}

void binder_throughput_test(WorkloadCommand& out, const ExperimentWorkload& workload,
                            const WorkloadPrograms& programs) {
  out.dev_binder = true;
  append(out.command, {programs.binder_throughput_test, "-w", std::to_string(workload.workers),
                       "-i", std::to_string(workload.iterations)});
  if (workload.payload > 0) append(out.command, {"-s", std::to_string(workload.payload)});
  if (workload.latency_max_us > 0)
    append(out.command, {"-m", std::to_string(workload.latency_max_us)});
  out.metric = kDefaultMetric;
}

void binder_sendvec(WorkloadCommand& out, const ExperimentWorkload& workload,
                    const std::string& mount, const WorkloadPrograms& programs) {
  auto prefix = under_cused_run(programs, mount);
  out.command.insert(out.command.end(), prefix.begin(), prefix.end());
  std::string filter = workload.benchmark_filter.empty()
                           ? fmt::format("BM_sendVec/{}/", workload.payload)
                           : workload.benchmark_filter;
  append(out.command, {programs.binder_sendvec, "--device={dev}", "--benchmark_filter=" + filter});
  out.metric = fmt::format("BM_sendVec/{}/real_time +([0-9.]+) ns", workload.payload);
  out.metric_name = fmt::format("ns per {} B op", workload.payload);
  out.lower_is_better = true;
}

void binder_messaging(WorkloadCommand& out, const ExperimentWorkload& workload,
                      const std::string& mount, const WorkloadPrograms& programs) {
  auto prefix = under_cused_run(programs, mount);
  out.command.insert(out.command.end(), prefix.begin(), prefix.end());
  append(out.command,
         {programs.binder_messaging, "-d", "{dev}", "-g", std::to_string(workload.groups), "-l",
          std::to_string(workload.loops), "--rounds", "1"});
  out.metric = "seconds=([0-9.]+)";
  out.metric_name = "seconds";
  out.lower_is_better = true;
}

void own_command(WorkloadCommand& out, const ExperimentWorkload& workload,
                 const std::string& mount) {
  for (auto word : workload.command) {
    for (auto at = word.find("{mount}"); at != word.npos; at = word.find("{mount}", at))
      word.replace(at, 7, mount);
    out.command.push_back(word);
  }
  out.metric = kDefaultMetric;
}

}  // namespace

WorkloadCommand workload_command(const Experiment& experiment, const std::string& mount,
                                 const WorkloadPrograms& programs) {
  const auto& workload = experiment.workload;
  WorkloadCommand out;
  out.command = scheduling_prefix(workload);
  switch (workload.program) {
    case WorkloadProgram::binder_throughput:
      binder_throughput(out, workload, mount, programs);
      break;
    case WorkloadProgram::binder_throughput_test:
      binder_throughput_test(out, workload, programs);
      break;
    case WorkloadProgram::binder_sendvec:
      binder_sendvec(out, workload, mount, programs);
      break;
    case WorkloadProgram::binder_messaging:
      binder_messaging(out, workload, mount, programs);
      break;
    case WorkloadProgram::command:
      own_command(out, workload, mount);
      break;
  }
  if (!workload.metric.empty()) out.metric = workload.metric;
  if (!workload.metric_name.empty()) out.metric_name = workload.metric_name;
  if (workload.lower_is_better) out.lower_is_better = *workload.lower_is_better;
  if (workload.counts) out.counts = *workload.counts;
  return out;
}

}  // namespace cused::tools::ab
