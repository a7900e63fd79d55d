// SPDX-License-Identifier: GPL-2.0-only
// The registry of allocator designs (core/alloc/designs/registry.cc) and what is derived from it:
// alloc_lock='s parser and printer, the trace ids, and docs/variants.md's table of designs.
#include "core/alloc/designs/registry.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "core/lock_trace.h"
#include "cused/host/memfd_buffer_file.h"

namespace cused::core::alloc::testing {
namespace {

TEST(DesignRegistry, NamesParseToTheirRowsAndPrintBack) {
  std::set<std::string_view> names;
  std::set<std::uint8_t> trace_ids;
  for (const Design& design : designs()) {
    EXPECT_TRUE(names.insert(design.name).second) << design.name;
    EXPECT_TRUE(trace_ids.insert(design.trace_id).second) << design.name;
    EXPECT_EQ(parse_lock_variant(design.name), design.variant());
    EXPECT_EQ(to_string(design.variant()), design.name);
    EXPECT_EQ(find_design_by_trace_id(design.trace_id), &design);
    EXPECT_FALSE(design.description.empty()) << design.name;
    EXPECT_FALSE(design.doc.empty()) << design.name;
  }
  EXPECT_EQ(designs()[0].name, "mutex") << "the default design";
  EXPECT_EQ(designs()[0].trace_id, kSleepingLockDesign);
  EXPECT_FALSE(parse_lock_variant("rwlock"));
  EXPECT_THROW(LockVariant::named("rwlock"), std::invalid_argument);
}

TEST(DesignRegistry, EachDesignMakesAnAllocatorOfItsVariant) {
  PageLru lru;
  for (const Design& design : designs()) {
    auto file = host::MemfdBufferFile::create("registry", 1 << 20);
    for (PageTableVariant pages : {PageTableVariant::eager, PageTableVariant::lazy}) {
      const Variant variant{design.variant(), pages};
      auto alloc = make_allocator(*file, variant, lru);
      EXPECT_EQ(alloc->variant(), variant);
      ASSERT_EQ(alloc->map(1 << 20), 0);
      EXPECT_TRUE(alloc->new_buffer(64, 0, 0, false, 1)) << design.name;
    }
  }
}

// The cells of docs/variants.md's table of designs (the rows under its "| design |" header).
std::vector<std::vector<std::string>> doc_table() {
  const char* root = std::getenv("CUSED_SOURCE_ROOT");
  if (!root) ADD_FAILURE() << "CUSED_SOURCE_ROOT is not set (meson sets it)";
  std::ifstream doc(std::string(root ? root : ".") + "/docs/variants.md");
  std::vector<std::vector<std::string>> rows;
  std::string line;
  bool in_table = false;
  while (std::getline(doc, line)) {
    if (line.starts_with("| design |")) {
      in_table = true;
      std::getline(doc, line);  // |---|
      continue;
    }
    if (!in_table) continue;
    if (!line.starts_with("|")) break;
    std::vector<std::string> cells;
    std::stringstream row(line.substr(1));
    std::string cell;
    while (std::getline(row, cell, '|')) {
      const auto first = cell.find_first_not_of(' ');
      const auto last = cell.find_last_not_of(' ');
      cells.push_back(first == std::string::npos ? "" : cell.substr(first, last - first + 1));
    }
    rows.push_back(cells);
  }
  return rows;
}

TEST(DesignRegistry, DocsVariantsTableIsTheRegistry) {
  const auto rows = doc_table();
  ASSERT_EQ(rows.size(), designs().size()) << "docs/variants.md's table of designs";
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const Design& design = designs()[i];
    const std::vector<std::string> expected{
        "`" + std::string(design.name) + "`", std::string(design.description),
        std::to_string(design.trace_id), design.racy_on_purpose ? "yes" : "no",
        std::string(design.doc)};
    EXPECT_EQ(rows[i], expected) << "row " << i << " of docs/variants.md's table of designs";
  }
}

}  // namespace
}  // namespace cused::core::alloc::testing
