// SPDX-License-Identifier: Apache-2.0
// What the fleet tests need around a real Redis: a free loopback port, a redis-server in a temporary
// directory (persisting every write, so a restart loses nothing acknowledged), member processes to
// start, kill and stop, and a direct connection for looking inside the streams. Only 127.0.0.1.
// Members and clients refuse to run without a fleet key: the harness provides one in $LEAP_FLEET_KEY
// (inherited by the members it starts) unless the environment already names one.
#pragma once

#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "fleet/fleet_redis.hpp"
#include "leap/sandbox/fleet_key.hpp"

namespace fleet_test {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

// The first executable `name` on $PATH, or empty.
inline std::string find_program(const std::string& name) {
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "/usr/bin:/bin";
  for (std::size_t start = 0; start <= dirs.size();) {
    const std::size_t end = std::min(dirs.find(':', start), dirs.size());
    const std::string candidate = dirs.substr(start, end - start) + "/" + name;
    if (end > start && ::access(candidate.c_str(), X_OK) == 0) return candidate;
    start = end + 1;
  }
  return {};
}

// A port on 127.0.0.1 that nothing listens on right now (the kernel picks it).
inline int free_loopback_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    throw std::runtime_error("cannot bind a loopback socket");
  }
  socklen_t len = sizeof addr;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  ::close(fd);
  return ntohs(addr.sin_port);
}

// The fleet key of this test process and the members it starts: the environment's, or a fresh random
// one put in $LEAP_FLEET_KEY. Call before starting threads that read the environment.
inline leap::sandbox::FleetKey test_fleet_key() {
  if (std::optional<leap::sandbox::FleetKey> key = leap::sandbox::FleetKey::from_environment()) return *key;
  std::random_device random;
  std::string key = "leap-fleet-test-";
  for (int i = 0; i < 24; ++i) key.push_back("0123456789abcdef"[random() % 16]);
  ::setenv(std::string(leap::sandbox::fleet_key_env).c_str(), key.c_str(), 1);
  return leap::sandbox::FleetKey::from_bytes(key);
}

// Peak resident memory of a process (VmHWM), in bytes; 0 when it cannot be read.
inline std::size_t peak_rss_bytes(pid_t pid) {
  std::FILE* f = std::fopen(("/proc/" + std::to_string(pid) + "/status").c_str(), "r");
  if (f == nullptr) return 0;
  char line[256];
  std::size_t kb = 0;
  while (std::fgets(line, sizeof line, f) != nullptr) {
    if (std::sscanf(line, "VmHWM: %zu kB", &kb) == 1) break;
  }
  std::fclose(f);
  return kb * 1024;
}

class TempDir {
 public:
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "leap-fleet-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

// A child process with its output in a log file; killed (SIGKILL) if still running at destruction,
// and by the kernel if the test process dies first.
class Child {
 public:
  Child(const std::vector<std::string>& argv, const std::filesystem::path& log,
        const std::vector<std::pair<std::string, std::string>>& env = {}) {
    pid_ = ::fork();
    if (pid_ < 0) throw std::runtime_error("fork failed");
    if (pid_ == 0) {
      // Dies with the test, however the test ends (an abort runs no destructor).
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (::getppid() == 1) ::_exit(127);
      const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0600);
      if (fd >= 0) {
        ::dup2(fd, 1);
        ::dup2(fd, 2);
      }
      for (const auto& [key, value] : env) ::setenv(key.c_str(), value.c_str(), 1);
      std::vector<char*> args;
      for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
      args.push_back(nullptr);
      ::execv(args[0], args.data());
      ::_exit(127);
    }
  }
  ~Child() {
    if (running()) {
      ::kill(pid_, SIGKILL);
      wait(10s);
    }
  }
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;

  pid_t pid() const { return pid_; }
  void signal(int sig) const { ::kill(pid_, sig); }
  bool running() {
    if (status_) return false;
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) status_ = status;
    return !status_;
  }
  // The wait status once the child has exited, or nullopt after `limit`.
  std::optional<int> wait(std::chrono::milliseconds limit) {
    const auto until = Clock::now() + limit;
    while (running() && Clock::now() < until) std::this_thread::sleep_for(5ms);
    return status_;
  }

 private:
  pid_t pid_ = -1;
  std::optional<int> status_;
};

// redis-server on 127.0.0.1:<port> with its data in `dir`, every write appended to a file so that a
// stop and start keeps what it acknowledged. `appendfsync`: "always" (each write synced: what the
// restart test needs) or "everysec" (the deployment docs/fleet.md suggests; what the benchmark uses), or
// "off": no append-only file at all (tests that write hundreds of MB and never restart).
class RedisServer {
 public:
  RedisServer(std::string program, std::filesystem::path dir, std::string appendfsync = "always")
      : program_(std::move(program)),
        dir_(std::move(dir)),
        appendfsync_(std::move(appendfsync)),
        port_(free_loopback_port()) {
    (void)test_fleet_key();  // every fleet on this server signs its messages
    start();
  }
  int port() const { return port_; }
  std::string url() const { return "redis://127.0.0.1:" + std::to_string(port_); }
  leap::sandbox::RedisAddress address() const { return {"127.0.0.1", port_, 0}; }

  void start() {
    process_.emplace(std::vector<std::string>{program_, "--port", std::to_string(port_), "--bind", "127.0.0.1", "--dir",
                                              dir_.string(), "--appendonly", appendfsync_ == "off" ? "no" : "yes",
                                              "--appendfsync", appendfsync_ == "off" ? "everysec" : appendfsync_,
                                              "--save", "", "--daemonize", "no", "--protected-mode", "yes"},
                     dir_ / "redis.log");
    const auto until = Clock::now() + 10s;
    for (;;) {
      try {
        leap::sandbox::fleet::RedisConnection probe(address(), {}, 500ms);
        if (leap::sandbox::fleet::text(probe.command({"PING"}).get()) == "PONG") return;
      } catch (const std::exception&) {}
      if (Clock::now() > until || !process_->running()) {
        throw std::runtime_error("redis-server did not come up on port " + std::to_string(port_) + " (see " +
                                 (dir_ / "redis.log").string() + ")");
      }
      std::this_thread::sleep_for(20ms);
    }
  }
  // SIGTERM: Redis flushes its append-only file and exits.
  void stop() {
    if (!process_) return;
    process_->signal(SIGTERM);
    if (!process_->wait(10s)) process_->signal(SIGKILL);
    process_.reset();
  }
  ~RedisServer() { stop(); }

 private:
  std::string program_;
  std::filesystem::path dir_;
  std::string appendfsync_;
  int port_;
  std::optional<Child> process_;
};

}  // namespace fleet_test
