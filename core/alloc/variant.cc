// SPDX-License-Identifier: GPL-2.0-only
#include "core/alloc/variant.h"

// A design's name and its parse are the registry's (core/alloc/designs/registry.cc).

namespace cused::core::alloc {

std::string_view to_string(PageTableVariant pages) {
  return pages == PageTableVariant::eager ? "eager" : "lazy";
}

std::string to_string(const Variant& variant) {
  std::string text = "alloc_lock=";
  text += to_string(variant.lock);
  text += ",pages=";
  text += to_string(variant.pages);
  return text;
}

std::optional<PageTableVariant> parse_page_table_variant(std::string_view text) {
  for (PageTableVariant pages : {PageTableVariant::eager, PageTableVariant::lazy})
    if (text == to_string(pages)) return pages;
  return std::nullopt;
}

}  // namespace cused::core::alloc
