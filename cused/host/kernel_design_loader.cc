// SPDX-License-Identifier: GPL-2.0-only
#include "cused/host/kernel_design_loader.h"

#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <regex>
#include <sstream>
#include <vector>

#include "core/alloc/kernel/kernel_design.h"
#include "core/alloc/kernel/kernel_runtime.h"
#include "cused/host/patched_kernel_tree.h"
#include "cused/host/run_program.h"
#include "cused/host/scratch_directory.h"

#ifndef CUSED_KERNEL_SHIM_DIR
#define CUSED_KERNEL_SHIM_DIR "/usr/share/cused/kernel_shim"
#endif

namespace cused::host {

namespace fs = std::filesystem;

namespace {

constexpr std::string_view kPrefix = "kernel:";

std::string env_or(const char* name, std::string fallback) {
  const char* value = std::getenv(name);
  return value && *value ? value : fallback;
}

std::optional<std::string> read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// FNV-1a, 64 bits: a stable name for what went into an object (not a defence against anyone).
struct Hash {
  std::uint64_t value = 0xcbf29ce484222325ull;
  void add(std::string_view bytes) {
    for (unsigned char c : bytes) value = (value ^ c) * 0x100000001b3ull;
    value = (value ^ 0xff) * 0x100000001b3ull;  // a separator between the parts
  }
  std::string hex() const {
    char text[17];
    std::snprintf(text, sizeof(text), "%016llx", static_cast<unsigned long long>(value));
    return text;
  }
};

// The tree's version: tools/bootstrap's .version ("7.2.8-1"), else the Makefile's.
std::optional<std::string> tree_version(const fs::path& tree) {
  if (auto text = read_file(tree / ".version")) {
    std::smatch m;
    if (std::regex_search(*text, m, std::regex(R"((\d+)\.(\d+)(?:\.(\d+))?)")))
      return m[1].str() + "." + m[2].str() + "." + (m[3].matched ? m[3].str() : "0");
  }
  if (auto text = read_file(tree / "Makefile")) {
    auto field = [&](const char* name) -> std::string {
      std::smatch m;
      std::regex line(std::string("\\n") + name + R"(\s*=\s*(\d+))");
      std::string with_newline = "\n" + *text;
      return std::regex_search(with_newline, m, line) ? m[1].str() : "";
    };
    std::string v = field("VERSION"), p = field("PATCHLEVEL"), s = field("SUBLEVEL");
    if (!v.empty() && !p.empty()) return v + "." + p + "." + (s.empty() ? "0" : s);
  }
  return std::nullopt;
}

// Whether the tree's struct binder_alloc guards its fields with the spinlock `lock` (6.8-6.13,
// and patches such as tests/kernel-designs/patches/7.2-spinlock-install-mutex.patch) rather than
// the mutex `mutex`: read from the header, since a patch changes it whatever the version.
bool alloc_lock_is_spinlock(const fs::path& header) {
  static const std::regex field(R"(struct binder_alloc \{[^}]*\bspinlock_t\s+lock;)");
  return std::regex_search(read_file(header).value_or(""), field);
}

// Constants, not std::strings: the tests build objects from static initializers of other files.
#ifdef CUSED_KERNEL_SANITIZE
constexpr std::string_view kSanitize = CUSED_KERNEL_SANITIZE;
#else
#define CUSED_KERNEL_CC "cc"
constexpr std::string_view kSanitize;
#endif

std::vector<std::string> split_words(const std::string& text) {
  std::istringstream in(text);
  std::vector<std::string> words;
  for (std::string word; in >> word;) words.push_back(word);
  return words;
}

// The shim's files, in a stable order, for the hash.
std::vector<fs::path> shim_files(const fs::path& shim) {
  std::vector<fs::path> files;
  std::error_code ec;
  for (const auto& entry : fs::recursive_directory_iterator(shim, ec))
    if (entry.is_regular_file()) files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace

KernelDesignPaths kernel_design_paths() {
  KernelDesignPaths paths;
  paths.shim = env_or("CUSED_KERNEL_SHIM", CUSED_KERNEL_SHIM_DIR);
  paths.trees = env_or("CUSED_KERNEL_TREES", "");
  std::string cache = env_or("CUSED_KERNEL_CACHE", "");
  if (cache.empty()) {
    std::string base = env_or("XDG_CACHE_HOME", "");
    if (base.empty() && std::getenv("HOME")) base = std::string(std::getenv("HOME")) + "/.cache";
    if (base.empty()) base = "/tmp";
    cache = base + "/cused/kernel-designs";
  }
  paths.cache = cache;
  // A sanitized cused builds with its own compiler: another's sanitizer runtime would not match.
  paths.cc = kSanitize.empty() ? env_or("CC", "cc") : std::string(CUSED_KERNEL_CC);
  return paths;
}

std::optional<fs::path> kernel_tree_of(std::string_view name, const KernelDesignPaths& paths,
                                       std::string& error) {
  if (!name.starts_with(kPrefix)) {
    error = "not a kernel design name";
    return std::nullopt;
  }
  const std::string spec(name.substr(kPrefix.size()));
  fs::path tree;
  if (spec.find('/') != std::string::npos) {
    tree = spec;
  } else if (!paths.trees.empty()) {
    tree = paths.trees / spec / "src";
    if (!fs::exists(tree)) tree = paths.trees / spec;
  } else {
    error = "kernel:" + spec +
            " names a fetched tree, and CUSED_KERNEL_TREES is not set "
            "(give a path: kernel:/path/to/linux)";
    return std::nullopt;
  }
  if (!fs::exists(tree / "drivers/android/binder_alloc.c")) {
    error = tree.string() + " has no drivers/android/binder_alloc.c";
    return std::nullopt;
  }
  return tree;
}

std::optional<KernelDesignSource> kernel_source_of(std::string_view name,
                                                   const KernelDesignPaths& paths,
                                                   std::string& error) {
  KernelDesignSource source;
  std::string tree_error;
  // The shortest prefix before a '+' that is a tree; the whole name when none is.
  std::size_t end = name.find('+');
  for (;; end = name.find('+', end + 1)) {
    const std::string_view prefix = name.substr(0, end);
    std::string error_here;
    if (auto tree = kernel_tree_of(prefix, paths, error_here)) {
      source.tree = *tree;
      break;
    }
    if (tree_error.empty()) tree_error = error_here;
    if (end == std::string_view::npos) {
      error = tree_error;
      return std::nullopt;
    }
  }
  if (end != std::string_view::npos) {
    std::string_view rest = name.substr(end + 1);
    while (true) {
      const std::string_view patch = rest.substr(0, rest.find('+'));
      if (patch.empty() || !fs::is_regular_file(fs::path(patch))) {
        error = "no patch file '" + std::string(patch) + "' (kernel:TREE+PATCH[+PATCH...]: " +
                "a patch's path is taken from the working directory)";
        return std::nullopt;
      }
      source.patches.emplace_back(patch);
      if (patch.size() == rest.size()) break;
      rest.remove_prefix(patch.size() + 1);
    }
  }
  source.label = source.patches.empty() ? source.tree.string()
                                        : patched_tree_label(source.tree, source.patches);
  return source;
}

std::optional<KernelBuild> build_kernel_design_of(const KernelDesignSource& source,
                                                  const KernelDesignPaths& paths,
                                                  std::string& error) {
  if (source.patches.empty()) return build_kernel_design(source.tree, paths, error);
  return build_patched_kernel_design(source.tree, source.patches, paths, error);
}

std::optional<KernelBuild> build_kernel_design(const fs::path& tree, const KernelDesignPaths& paths,
                                               std::string& error, const std::string& shown_as) {
  const fs::path android = tree / "drivers/android";
  const std::vector<fs::path> sources = {android / "binder_alloc.c", android / "binder_alloc.h",
                                         android / "binder_trace.h", tree / "tools/lib/rbtree.c"};
  auto version = tree_version(tree);
  if (!version) {
    error = tree.string() + ": no .version or Makefile to take the kernel version from";
    return std::nullopt;
  }
  int major = 0, minor = 0, sub = 0;
  std::sscanf(version->c_str(), "%d.%d.%d", &major, &minor, &sub);
  const std::string version_code =
      std::to_string((major << 16) + (minor << 8) + std::min(sub, 255));
  const std::vector<std::string> cc = split_words(paths.cc);
  std::vector<std::string> flags = {"-std=gnu11",          "-O2",      "-g",   "-fPIC",
                                    "-fvisibility=hidden", "-pthread", "-Wall"};
  // A scratch copy's path is gone after the build: reports (WARN_ON's file, the atomic-sleep
  // check's line) name what it was made from instead.
  if (!shown_as.empty()) flags.push_back("-ffile-prefix-map=" + tree.string() + "=" + shown_as);
  // cused's own sanitizers on the file too; the sanitizer's runtime is the executable's, so the
  // object keeps those symbols undefined (no -z defs).
  if (!kSanitize.empty()) {
    flags.push_back("-fsanitize=" + std::string(kSanitize));
    flags.push_back("-fno-omit-frame-pointer");
  }
  for (const std::string& flag : split_words(env_or("CUSED_KERNEL_CFLAGS", "")))
    flags.push_back(flag);

  Hash hash;
  hash.add(std::to_string(CUSED_KABI_VERSION));
  hash.add(paths.cc);
  for (const std::string& flag : flags)
    if (!flag.starts_with("-ffile-prefix-map=")) hash.add(flag);
  hash.add(shown_as);
  hash.add(*version);
  for (const fs::path& source : sources) {
    auto text = read_file(source);
    if (!text) {
      error = "cannot read " + source.string();
      return std::nullopt;
    }
    hash.add(*text);
  }
  const std::string alloc_spinlock = alloc_lock_is_spinlock(android / "binder_alloc.h") ? "1" : "0";
  // The ABI header: beside the shim's API once installed, in uapi/ of a source tree.
  fs::path abi_dir = paths.shim / "include";
  if (!fs::exists(abi_dir / "cused_kernel_abi.h"))
    abi_dir = paths.shim.parent_path().parent_path() / "uapi";
  hash.add(read_file(abi_dir / "cused_kernel_abi.h").value_or(""));
  const std::vector<fs::path> shim = shim_files(paths.shim);
  if (shim.empty() || !fs::exists(paths.shim / "glue.c")) {
    error = "no kernel shim at " + paths.shim.string() + " (CUSED_KERNEL_SHIM)";
    return std::nullopt;
  }
  for (const fs::path& file : shim) {
    hash.add(fs::relative(file, paths.shim).string());
    hash.add(read_file(file).value_or(""));
  }

  KernelBuild build;
  build.version = *version;
  build.object = paths.cache / ("binder_alloc-" + *version + "-" + hash.hex() + ".so");
  if (fs::exists(build.object)) {
    build.cached = true;
    return build;
  }
  // A machine without the compiler (the tests/vm guest) serves only what is in the cache: say
  // so, and what to do, rather than the compiler's absence in execvp's words.
  const std::string compiler = cc.empty() ? paths.cc : cc.front();
  if (!find_program(compiler)) {
    error = "building " + (shown_as.empty() ? tree.string() : shown_as) +
            "'s binder_alloc.c needs a C compiler, and there is no '" + compiler +
            "' here (not in PATH; $CC names the compiler); its object " +
            build.object.filename().string() + " is not in the cache " + paths.cache.string() +
            ": build it where there is a compiler (cused kernel-build, with the same sources, "
            "shim and $CC) and bring that cache here (CUSED_KERNEL_CACHE)";
    return std::nullopt;
  }
  std::optional<ScratchDirectory> scratch;
  try {
    scratch.emplace(paths.cache, "build");
  } catch (const std::exception& e) {
    error = e.what();
    return std::nullopt;
  }
  const fs::path work = scratch->path();
  const fs::path log = work / "build.log";
  // tools/lib/rbtree.c is the kernel's userspace rbtree, built against the tree's tools/include.
  std::vector<std::string> rbtree = cc;
  rbtree.insert(rbtree.end(), flags.begin(), flags.end());
  rbtree.insert(rbtree.end(),
                {"-I", (tree / "tools/include").string(), "-c",
                 (tree / "tools/lib/rbtree.c").string(), "-o", (work / "rbtree.o").string()});
  std::vector<std::string> link = cc;
  link.insert(link.end(), flags.begin(), flags.end());
  if (kSanitize.empty()) link.push_back("-Wl,-z,defs");
  link.insert(link.end(), {"-shared",
                           "-DKBUILD_MODNAME=\"binder\"",
                           "-DCUSED_LINUX_VERSION_CODE=" + version_code,
                           "-DCUSED_ALLOC_SPINLOCK=" + alloc_spinlock,
                           "-DCUSED_KERNEL_RELEASE=\"" + *version + "\"",
                           "-I",
                           (paths.shim / "include").string(),
                           "-I",
                           abi_dir.string(),
                           "-I",
                           paths.shim.string(),
                           "-I",
                           android.string(),
                           (android / "binder_alloc.c").string(),
                           (paths.shim / "runtime.c").string(),
                           (paths.shim / "lockdep.c").string(),
                           (paths.shim / "glue.c").string(),
                           (work / "rbtree.o").string(),
                           "-o",
                           (work / "object.so").string()});
  if (!run_program(rbtree, log) || !run_program(link, log)) {
    error = "building " + (shown_as.empty() ? tree.string() : shown_as) +
            "'s binder_alloc.c failed:\n" + read_file(log).value_or("(no output)");
    return std::nullopt;
  }
  // A rename: a concurrent build of the same object (another test) leaves one whole file.
  std::error_code ec;
  fs::rename(work / "object.so", build.object, ec);
  if (!fs::exists(build.object)) {
    error = "cannot store " + build.object.string();
    return std::nullopt;
  }
  return build;
}

std::optional<core::alloc::KernelObject> load_kernel_design(std::string name, const fs::path& tree,
                                                            const fs::path& object,
                                                            std::string& error) {
  void* handle = dlopen(object.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    error = std::string("dlopen: ") + dlerror();
    return std::nullopt;
  }
  using Get = const cused_kabi* (*)();
  auto get = reinterpret_cast<Get>(dlsym(handle, "cused_kabi_get"));
  if (!get) {
    error = object.string() + " is not a cused kernel design (no cused_kabi_get)";
    dlclose(handle);
    return std::nullopt;
  }
  core::alloc::KernelObject loaded;
  loaded.name = std::move(name);
  loaded.tree = tree.string();
  loaded.path = object.string();
  loaded.abi = get();
  // Kept loaded for the process's life: allocators of the design may exist until exit.
  loaded.handle = std::shared_ptr<void>(handle, [](void*) {});
  return loaded;
}

namespace {

const core::alloc::Design* resolve(std::string_view name, std::string& error) {
  if (!name.starts_with(kPrefix)) return nullptr;
  const KernelDesignPaths paths = kernel_design_paths();
  auto source = kernel_source_of(name, paths, error);
  if (!source) return nullptr;
  auto build = build_kernel_design_of(*source, paths, error);
  if (!build) return nullptr;
  auto object = load_kernel_design(std::string(name), source->label, build->object, error);
  if (!object) return nullptr;
  return core::alloc::register_kernel_design(std::move(*object), error);
}

}  // namespace

void enable_kernel_designs() {
  core::alloc::set_design_resolver(&resolve);
  // The opt-in for a daemon or a suite (cused check-design turns it on itself).
  if (env_or("CUSED_KERNEL_LOCKDEP", "") == "1") core::alloc::set_kernel_lockdep(true);
}

}  // namespace cused::host
