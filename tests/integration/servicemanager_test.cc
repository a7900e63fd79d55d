// SPDX-License-Identifier: GPL-2.0-only
// tools/servicemanager through cused: the Android 10 IServiceManager protocol
// (docs/servicemanager.md) as libcused-client's ServiceManagerProxy speaks it, on an in-process
// binderfs mount. Service owners and clients are separate opens of the device (separate binder
// procs) in this process; the service manager is the real tool, in a child process.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/wait.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>

#include "client/binder_process.h"
#include "client/ipc_thread.h"
#include "client/service_manager.h"
#include "tests/integration/mounted_binderfs.h"
#include "tests/integration/tool_process.h"

namespace cused {
namespace {

using client::BinderProcess;
using client::IncomingTransaction;
using client::IpcThread;
using client::Parcel;
using client::ServiceManagerProxy;
using namespace std::chrono_literals;

constexpr std::uint32_t kWhoAreYou = 1;  // replies with the object's marker
constexpr std::uint32_t kStopLooper = 2;

client::ProcessOptions options_for(const std::string& device) {
  client::ProcessOptions options;
  options.device = device;
  options.max_threads = 0;  // no BR_SPAWN_LOOPER: the test owns every thread
  return options;
}

// A binder proc serving objects on one looper thread that the test can stop and join.
class ServiceOwner {
 public:
  explicit ServiceOwner(const std::string& device)
      : process_(std::make_unique<BinderProcess>(options_for(device))) {}
  ~ServiceOwner() {
    if (looper_.joinable()) looper_.join();
  }

  // A local object answering kWhoAreYou with `marker`.
  binder_uintptr_t add_object(std::int32_t marker) {
    return process_->add_local_object([marker](const IncomingTransaction& txn, Parcel& reply) {
      if (txn.code == kStopLooper) {
        IpcThread::current()->leave_looper();
        return client::kOk;
      }
      if (txn.code != kWhoAreYou) return client::kUnknownTransaction;
      reply.write_int32(marker);
      return client::kOk;
    });
  }
  std::int32_t register_as(const std::string& name, binder_uintptr_t object,
                           std::int32_t dump_priority = client::kDumpPriorityDefault) {
    IpcThread thread(*process_);
    return ServiceManagerProxy(thread).add_service(name, object, false, dump_priority);
  }
  void start_looper() {
    looper_ = std::thread([this] {
      IpcThread thread(*process_);
      thread.join_looper(true);
    });
  }
  // After a kStopLooper call: join the looper and close the device, which kills every node.
  void die() {
    looper_.join();
    process_.reset();
  }

 private:
  std::unique_ptr<BinderProcess> process_;
  std::thread looper_;
};

class ServiceManagerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    servicemanager_ = std::make_unique<testing::ToolProcess>(std::vector<std::string>{
        testing::binary_from_env("SERVICEMANAGER_BINARY"), device()});  // `servicemanager DEVICE`
    // Until the tool has become the context manager, handle 0 answers with a dead/failed reply.
    auto deadline = std::chrono::steady_clock::now() + 5s;
    while (sm().ping() != client::kOk) {
      ASSERT_LT(std::chrono::steady_clock::now(), deadline) << "servicemanager never answered";
      std::this_thread::sleep_for(10ms);
    }
  }
  void TearDown() override { servicemanager_.reset(); }

  std::string device() const { return mount_.path("binder"); }
  ServiceManagerProxy sm() { return ServiceManagerProxy(client_thread_); }
  std::int32_t who_is(std::uint32_t handle) {
    Parcel data, reply;
    EXPECT_EQ(client_thread_.transact(handle, kWhoAreYou, data, &reply), client::kOk);
    return reply.read_int32().value_or(-1);
  }

  testing::MountedBinderfs mount_;
  BinderProcess client_{options_for(device())};
  IpcThread client_thread_{client_};
  std::unique_ptr<testing::ToolProcess> servicemanager_;
};

// S6.3: handle 0 reaches the context manager; PING_TRANSACTION is answered without a header.
TEST_F(ServiceManagerTest, S6_3_PingReachesTheServiceManager) { EXPECT_EQ(sm().ping(), 0); }

// ADD_SERVICE then GET/CHECK_SERVICE hand back a reference (S5.2: translated to the caller's own
// handle) on which calls reach the registered object.
TEST_F(ServiceManagerTest, S5_2_AddedServiceIsFoundAndCallable) {
  ServiceOwner owner(device());
  owner.start_looper();
  ASSERT_EQ(owner.register_as("cused.test.echo", owner.add_object(4242)), 0);
  auto got = sm().get_service("cused.test.echo");
  auto checked = sm().check_service("cused.test.echo");
  ASSERT_TRUE(got && checked);
  EXPECT_NE(*got, 0u);
  EXPECT_EQ(*got, *checked);  // one ref per node per proc
  EXPECT_EQ(who_is(*got), 4242);
  EXPECT_EQ(sm().check_service("cused.test.nobody"), std::nullopt);
  Parcel stop, reply;
  EXPECT_EQ(client_thread_.transact(*got, kStopLooper, stop, &reply), 0);
}

TEST_F(ServiceManagerTest, ListServicesNamesEveryServiceAndFiltersByDumpPriority) {
  ServiceOwner owner(device());
  ASSERT_EQ(owner.register_as("b.second", owner.add_object(2)), 0);
  ASSERT_EQ(owner.register_as("a.first", owner.add_object(1), client::kDumpPriorityCritical), 0);
  EXPECT_EQ(sm().list_services(), (std::vector<std::string>{"a.first", "b.second"}));
  EXPECT_EQ(sm().list_services(client::kDumpPriorityCritical),
            (std::vector<std::string>{"a.first"}));
}

// A second ADD_SERVICE under a taken name replaces the old registration.
TEST_F(ServiceManagerTest, ReRegisteringANameReplacesTheService) {
  ServiceOwner owner(device());
  owner.start_looper();
  ASSERT_EQ(owner.register_as("cused.test.swap", owner.add_object(1)), 0);
  ASSERT_EQ(owner.register_as("cused.test.swap", owner.add_object(2)), 0);
  auto handle = sm().get_service("cused.test.swap");
  ASSERT_TRUE(handle);
  EXPECT_EQ(who_is(*handle), 2);
  Parcel stop, reply;
  EXPECT_EQ(client_thread_.transact(*handle, kStopLooper, stop, &reply), 0);
}

// Android 10 answers a wrong interface token, an empty name and a missing binder with -1.
TEST_F(ServiceManagerTest, MalformedRequestsAreRefusedWithStatus) {
  Parcel wrong_token, reply;
  wrong_token.write_interface_token(u"android.os.INotTheServiceManager");
  wrong_token.write_string16(std::string_view("x"));
  EXPECT_EQ(client_thread_.transact(0, client::kCheckService, wrong_token, &reply), -1);
  Parcel no_binder;
  no_binder.write_interface_token(client::kServiceManagerInterface);
  no_binder.write_string16(std::string_view("cused.test.nothing"));
  no_binder.write_int32(0);
  EXPECT_EQ(client_thread_.transact(0, client::kAddService, no_binder, &reply), -1);
  ServiceOwner owner(device());
  EXPECT_EQ(owner.register_as("", owner.add_object(1)), -1);
  Parcel unknown;
  unknown.write_interface_token(client::kServiceManagerInterface);
  EXPECT_EQ(client_thread_.transact(0, 99, unknown, &reply), -1);
  Parcel hostile_length;
  hostile_length.write_interface_token(client::kServiceManagerInterface);
  hostile_length.write_int32(INT32_MAX);  // a String16 claiming 2^31 units
  EXPECT_EQ(client_thread_.transact(0, client::kGetService, hostile_length, &reply), -1);
  EXPECT_EQ(sm().ping(), 0);  // and it still serves
}

// S7.2: the service manager asked for death notifications; a dead service disappears.
TEST_F(ServiceManagerTest, S7_2_DeadServiceIsDropped) {
  ServiceOwner owner(device());
  owner.start_looper();
  ASSERT_EQ(owner.register_as("cused.test.mortal", owner.add_object(7)), 0);
  auto handle = sm().get_service("cused.test.mortal");
  ASSERT_TRUE(handle);
  Parcel stop, reply;
  ASSERT_EQ(client_thread_.transact(*handle, kStopLooper, stop, &reply), 0);
  owner.die();
  auto deadline = std::chrono::steady_clock::now() + 5s;
  while (sm().check_service("cused.test.mortal")) {
    ASSERT_LT(std::chrono::steady_clock::now(), deadline) << "dead service still listed";
    std::this_thread::sleep_for(10ms);
  }
  EXPECT_TRUE(sm().list_services().empty());
  // Our own reference now names a dead node (S4.1).
  EXPECT_EQ(client_thread_.transact(*handle, kWhoAreYou, stop, &reply), client::kDeadObject);
}

// S2.3: one context manager per device; the second is refused with EBUSY, and says so.
TEST_F(ServiceManagerTest, S2_3_ASecondOneSaysAnotherContextManagerIsRegistered) {
  testing::ToolProcess second({testing::binary_from_env("SERVICEMANAGER_BINARY"), device()},
                              testing::ToolProcess::Capture::stdout_and_stderr);
  auto result = second.finish(10s);
  EXPECT_EQ(exit_status(result), 1) << result.output;
  EXPECT_EQ(result.output, "servicemanager: another context manager is registered on " + device() +
                               " (Device or resource busy)\n");
  EXPECT_EQ(sm().ping(), client::kOk) << "the first one serves on";
}

// The daemon (a real cused process) stopped or killed under a running servicemanager: it says the
// daemon went away and what to do, exit code 3, instead of "looper ended: ...".
class ServiceManagerDaemonGoneTest : public ::testing::TestWithParam<int> {
 protected:
  void TearDown() override {
    umount2(dir_.c_str(), MNT_DETACH);  // a killed daemon leaves its mount
    std::filesystem::remove_all(dir_);
  }

  std::string dir_ = testing::make_temp_dir("cused-sm-gone-");
};

TEST_P(ServiceManagerDaemonGoneTest, SaysTheDaemonWentAwayWithExitCode3) {
  std::string device = dir_ + "/binder";
  testing::ToolProcess daemon(
      {testing::binary_from_env("CUSED_BINARY"), "--mount", dir_, "--foreground"});
  ASSERT_TRUE(testing::wait_until([&] { return std::filesystem::exists(device); }, 5s));
  testing::ToolProcess servicemanager({testing::binary_from_env("SERVICEMANAGER_BINARY"), device},
                                      testing::ToolProcess::Capture::stdout_and_stderr);
  {
    BinderProcess client(options_for(device));
    IpcThread thread(client);
    ASSERT_TRUE(ServiceManagerProxy(thread).wait_until_answering(5s, nullptr));
  }
  kill(daemon.pid(), GetParam());
  daemon.finish(10s);
  auto result = servicemanager.finish(10s);
  EXPECT_EQ(exit_status(result), 3) << result.output;
  EXPECT_EQ(result.output.rfind(
                "servicemanager: the binder daemon serving " + device + " went away (", 0),
            0u)
      << result.output;
  EXPECT_NE(result.output.find("); restart cused, then servicemanager\n"), std::string::npos)
      << result.output;
}

// SIGTERM: cused stops and unmounts (the looper gets ENOTCONN); SIGKILL: the kernel aborts the
// connection (ECONNABORTED).
INSTANTIATE_TEST_SUITE_P(StoppedOrKilled, ServiceManagerDaemonGoneTest,
                         ::testing::Values(SIGTERM, SIGKILL));

}  // namespace
}  // namespace cused
