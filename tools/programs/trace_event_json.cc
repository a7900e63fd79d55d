// SPDX-License-Identifier: GPL-2.0-only
#include "tools/programs/trace_event_json.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <utility>
#include <vector>

#include "cused/host/ftrace_line.h"

namespace cused::tools {
namespace {

using host::FtraceLine;
using nlohmann::json;

constexpr unsigned kOneWay = 0x01;  // TF_ONE_WAY
// A flow's end must lie inside its slice: this much (µs, 1 ns) inside the slice's end, and no
// slice that carries one is shorter than twice it.
constexpr double kInside = 0.001;
// The text's times are whole µs, so the ends of two slices drawn from them may be 1 µs off.
constexpr double kRounding = 1.0 + kInside;

struct Track {
  int pid = 0, tid = 0;
  auto operator<=>(const Track&) const = default;
};

struct Slice {
  Track track;
  double ts = 0, dur = 0;  // µs
  std::string name, cat;
  json args = json::object();
  bool derived = false;  // a call's slice: its ends are the events', moved to nest if needed
  double end() const { return ts + dur; }
};

// A flow arrow's end: at the start or near the end of a slice, known after the slices nest.
struct FlowEnd {
  std::size_t slice;
  bool at_end;
};
struct Flow {
  std::uint64_t id;
  FlowEnd from, to;
};

double micros(double seconds) { return std::round(seconds * 1e6); }

std::optional<unsigned long long> hex_field(const FtraceLine& line, const std::string& key) {
  auto value = line.field(key);
  if (!value || value->rfind("0x", 0) != 0) return std::nullopt;
  char* end = nullptr;
  unsigned long long result = std::strtoull(value->c_str() + 2, &end, 16);
  if (end == value->c_str() + 2) return std::nullopt;
  return result;
}

json number_or_null(const FtraceLine& line, const std::string& key) {
  auto n = line.number(key);
  return n ? json(*n) : json(nullptr);
}

class Converter {
 public:
  void read(const std::string& text) {
    if (text.rfind("# cused: ", 0) == 0) return end_line(text.substr(9));
    auto line = host::parse_ftrace_line(text);
    if (!line) return;
    ++counts_.events;
    Track track{line->tgid > 0 ? line->tgid : line->tid, line->tid};
    comms_[track] = line->comm;
    comm_of_tid_[line->tid] = line->comm;
    const double ts = micros(line->seconds);
    const std::string& event = line->event;
    if (event == "binder_transaction")
      transaction(*line, track, ts);
    else if (event == "binder_transaction_received")
      received(*line, track, ts);
    else if (event == "cused_lock_contended")
      behind_[{line->tid, lock_key(*line)}] = {number_or_null(*line, "holder"),
                                               number_or_null(*line, "holder_prio")};
    else if (event == "cused_lock_acquired")
      lock_slice(*line, track, ts, "wait", "wait_ns");
    else if (event == "cused_lock_released")
      lock_slice(*line, track, ts, "hold", "hold_ns");
    else if (event == "cused_page_install")
      timed_slice(*line, track, ts, "page install");
    else if (event == "cused_page_reclaim")
      timed_slice(*line, track, ts, "page reclaim");
    else if (event == "cused_shrinker_pass")
      timed_slice(*line, track, ts, "shrinker pass");
  }

  TraceJson finish() {
    nest();
    json events = json::array();
    metadata(events);
    for (auto& slice : slices_) {
      json event = {{"name", slice.name},     {"cat", slice.cat},  {"ph", "X"},
                    {"ts", slice.ts},         {"dur", slice.dur},  {"pid", slice.track.pid},
                    {"tid", slice.track.tid}, {"args", slice.args}};
      events.push_back(std::move(event));
    }
    for (const auto& flow : flows_) {
      events.push_back(flow_event(flow.id, "s", flow.from));
      events.push_back(flow_event(flow.id, "f", flow.to));
    }
    counts_.flows = flows_.size();
    json other = {{"source", "cused trace (docs/tracing.md)"}, {"dropped", dropped_}};
    if (!written_.empty()) other["written"] = written_;
    return {{{"traceEvents", std::move(events)},
             {"displayTimeUnit", "ns"},
             {"otherData", std::move(other)}},
            counts_};
  }

 private:
  struct Call {
    Track caller;
    double ts = 0;
    bool one_way = false;
    std::optional<std::size_t> server_slice;  // the server's slice, once it replied
    std::string code;
  };
  struct Received {
    std::uint64_t call;
    double ts;
  };

  // "# cused: process TGID PROGRAM", "# cused: dropped per event: NAME=N ...", "# cused: N
  // events written, M dropped ..."
  void end_line(const std::string& text) {
    std::istringstream in(text);
    std::string word;
    in >> word;
    if (word == "process") {
      int tgid = 0;
      std::string program;
      if (in >> tgid && std::getline(in >> std::ws, program)) programs_[tgid] = program;
    } else if (word == "dropped") {
      in >> word >> word;  // "per event:"
      while (in >> word) {
        auto eq = word.find('=');
        if (eq != std::string::npos)
          dropped_[word.substr(0, eq)] = std::strtoull(word.c_str() + eq + 1, nullptr, 10);
      }
    } else if (text.find(" events written, ") != std::string::npos) {
      written_ = text;
    }
  }

  std::string lock_key(const FtraceLine& line) {
    return line.field("lock").value_or("?") + "/" + line.field("variant").value_or("");
  }

  std::size_t add(Slice slice) {
    slices_.push_back(std::move(slice));
    return slices_.size() - 1;
  }

  void transaction(const FtraceLine& line, const Track& track, double ts) {
    auto id = line.number("transaction");
    auto reply = line.number("reply");
    if (!id || !reply) return;
    if (*reply == 0) {
      calls_[*id] = {track, ts, (hex_field(line, "flags").value_or(0) & kOneWay) != 0, std::nullopt,
                     line.field("code").value_or("")};
      return;
    }
    // A reply answers the call this thread received last and has not answered.
    auto& stack = serving_[track];
    if (stack.empty()) return;
    Received call = stack.back();
    stack.pop_back();
    auto found = calls_.find(call.call);
    if (found == calls_.end()) return;
    found->second.server_slice =
        add({track,
             call.ts,
             std::max(ts - call.ts, 2 * kInside),
             "binder reply",
             "binder",
             {{"transaction", call.call}, {"reply", *id}, {"code", found->second.code}},
             true});
    replies_[*id] = call.call;
  }

  void received(const FtraceLine& line, const Track& track, double ts) {
    auto id = line.number("transaction");
    if (!id) return;
    if (auto call = calls_.find(*id); call != calls_.end()) {
      if (!call->second.one_way) {
        serving_[track].push_back({static_cast<std::uint64_t>(*id), ts});
        return;
      }
      std::size_t from = add({call->second.caller,
                              call->second.ts,
                              2 * kInside,
                              "binder transaction async",
                              "binder",
                              {{"transaction", *id}, {"code", call->second.code}},
                              true});
      std::size_t to = add({track,
                            ts,
                            2 * kInside,
                            "binder async rcv",
                            "binder",
                            {{"transaction", *id}, {"code", call->second.code}},
                            true});
      flows_.push_back({2 * static_cast<std::uint64_t>(*id), {from, false}, {to, false}});
      ++counts_.one_way;
      calls_.erase(call);
      return;
    }
    // The reply to a call of this thread: the call's slice ends here.
    auto reply = replies_.find(*id);
    if (reply == replies_.end()) return;
    auto call = calls_.find(reply->second);
    replies_.erase(reply);
    if (call == calls_.end() || !call->second.server_slice) return;
    std::size_t caller =
        add({track,
             call->second.ts,
             std::max(ts - call->second.ts, 2 * kInside),
             "binder transaction",
             "binder",
             {{"transaction", call->first}, {"reply", *id}, {"code", call->second.code}},
             true});
    const std::uint64_t flow = 2 * call->first;
    flows_.push_back({flow, {caller, false}, {*call->second.server_slice, false}});
    flows_.push_back({flow + 1, {*call->second.server_slice, true}, {caller, true}});
    ++counts_.calls;
    calls_.erase(call);
  }

  // cused_lock_acquired (kind "wait") or cused_lock_released ("hold"): a slice ending at the
  // event, as long as its duration field.
  void lock_slice(const FtraceLine& line, const Track& track, double ts, const char* kind,
                  const char* duration_key) {
    auto ns = line.number(duration_key);
    if (!ns) return;
    const std::string lock = line.field("lock").value_or("?");
    json args = {{"lock", lock},
                 {"variant", line.field("variant").value_or("")},
                 {"policy", line.field("policy").value_or("")},
                 {duration_key, *ns},
                 {"prio", number_or_null(line, "prio")}};
    if (std::string(kind) == "wait") {
      auto found = behind_.find({line.tid, lock_key(line)});
      if (found != behind_.end()) {
        const json& holder = found->second.first;
        args["holder"] = holder;
        if (holder.is_number() && comm_of_tid_.contains(holder.get<int>()))
          args["holder_comm"] = comm_of_tid_[holder.get<int>()];
        args["holder_prio"] = found->second.second;
        behind_.erase(found);
      }
      ++counts_.lock_waits;
    } else {
      args["nivcsw"] = number_or_null(line, "nivcsw");
      ++counts_.lock_holds;
    }
    const double dur = static_cast<double>(*ns) / 1e3;
    add({track, ts - dur, dur, fmt::format("{} {}", kind, lock), "cused_lock", std::move(args),
         false});
  }

  void timed_slice(const FtraceLine& line, const Track& track, double ts, const char* name) {
    auto ns = line.number("ns");
    if (!ns) return;
    json args = json::object();
    for (const auto& [key, value] : line.fields) args[key] = value;
    const double dur = static_cast<double>(*ns) / 1e3;
    add({track, ts - dur, dur, name, "cused", std::move(args), false});
    ++counts_.other;
  }

  // Makes every track's slices nest (the header says how).
  void nest() {
    std::map<Track, std::vector<std::size_t>> by_track;
    for (std::size_t i = 0; i < slices_.size(); ++i) by_track[slices_[i].track].push_back(i);
    for (auto& [track, indexes] : by_track) {
      move_derived(indexes);
      clip(indexes);
    }
  }

  // A call's slice that an exact slice straddles starts after it or ends with it.
  void move_derived(const std::vector<std::size_t>& indexes) {
    std::vector<std::size_t> exact;
    for (std::size_t i : indexes)
      if (!slices_[i].derived) exact.push_back(i);
    for (std::size_t d : indexes) {
      Slice& call = slices_[d];
      if (!call.derived) continue;
      for (std::size_t e : exact) {
        const Slice& lock = slices_[e];
        if (lock.ts < call.ts && lock.end() > call.ts && lock.end() < call.end()) {
          const double end = call.end();
          call.ts = lock.end();
          call.dur = end - call.ts;
        } else if (lock.ts > call.ts && lock.ts < call.end() && lock.end() > call.end()) {
          call.dur = lock.end() - call.ts;
        }
      }
    }
  }

  void clip(std::vector<std::size_t> indexes) {
    std::sort(indexes.begin(), indexes.end(), [this](std::size_t a, std::size_t b) {
      const Slice &x = slices_[a], &y = slices_[b];
      return x.ts != y.ts ? x.ts < y.ts : x.dur > y.dur;
    });
    std::vector<std::size_t> open;
    for (std::size_t i : indexes) {
      Slice& slice = slices_[i];
      while (!open.empty()) {
        const double parent_end = slices_[open.back()].end();
        if (parent_end <= slice.ts) {
          open.pop_back();
        } else if (slice.end() > parent_end && parent_end - slice.ts <= kRounding) {
          // Begins as the other ends, within the text's rounding: after it, not inside it.
          slice.dur -= parent_end - slice.ts;
          slice.ts = parent_end;
          open.pop_back();
        } else {
          break;
        }
      }
      if (!open.empty() && slice.end() > slices_[open.back()].end()) {
        const double parent_end = slices_[open.back()].end();
        slice.args["drawn_shortened_us"] = slice.end() - parent_end;
        slice.dur = parent_end - slice.ts;
        if (!slice.derived) ++counts_.clipped;
      }
      open.push_back(i);
    }
  }

  json flow_event(std::uint64_t id, const char* phase, const FlowEnd& end) const {
    const Slice& slice = slices_[end.slice];
    const double ts = end.at_end ? slice.end() - std::min(kInside, slice.dur / 2) : slice.ts;
    json event = {{"name", "binder"}, {"cat", "binder"},        {"ph", phase},           {"id", id},
                  {"ts", ts},         {"pid", slice.track.pid}, {"tid", slice.track.tid}};
    if (std::string(phase) == "f") event["bp"] = "e";
    return event;
  }

  void metadata(json& events) const {
    std::map<int, std::string> processes;
    for (const auto& [track, comm] : comms_) {
      auto& name = processes[track.pid];
      if (auto program = programs_.find(track.pid); program != programs_.end())
        name = program->second;
      else if (track.tid == track.pid || name.empty())
        name = comm;
      events.push_back({{"name", "thread_name"},
                        {"ph", "M"},
                        {"pid", track.pid},
                        {"tid", track.tid},
                        {"args", {{"name", fmt::format("{}-{}", comm, track.tid)}}}});
    }
    for (const auto& [pid, name] : processes)
      events.push_back({{"name", "process_name"},
                        {"ph", "M"},
                        {"pid", pid},
                        {"tid", pid},
                        {"args", {{"name", name}}}});
  }

  TraceJsonCounts counts_;
  std::vector<Slice> slices_;
  std::vector<Flow> flows_;
  std::map<Track, std::string> comms_;
  std::map<int, std::string> comm_of_tid_;
  std::map<int, std::string> programs_;
  std::map<std::string, std::uint64_t> dropped_;
  std::string written_;
  std::map<long long, Call> calls_;                 // by debug id, until answered
  std::map<long long, std::uint64_t> replies_;      // a reply's id: the call it answers
  std::map<Track, std::vector<Received>> serving_;  // a server thread's unanswered calls
  std::map<std::pair<int, std::string>, std::pair<json, json>> behind_;  // holder, holder_prio
};

}  // namespace

TraceJson trace_event_json(std::istream& text) {
  Converter converter;
  for (std::string line; std::getline(text, line);) converter.read(line);
  return converter.finish();
}

std::string trace_json_path(const std::string& text_path) { return text_path + ".json"; }

TraceJsonCounts write_trace_event_json(const std::string& text_path, const std::string& json_path) {
  std::ifstream in(text_path);
  if (!in) throw std::runtime_error("cannot read the trace " + text_path);
  TraceJson converted = trace_event_json(in);
  std::ofstream out(json_path);
  if (!out) throw std::runtime_error("cannot write " + json_path);
  out << converted.document.dump() << '\n';
  if (!out.flush()) throw std::runtime_error("cannot write " + json_path);
  return converted.counts;
}

}  // namespace cused::tools
