#include "core/alloc/variant.h"

#include <stdexcept>

#include "core/alloc/designs/registry.h"

namespace cused::core::alloc {

LockVariant LockVariant::named(std::string_view name) {
  if (auto lock = parse_lock_variant(name)) return *lock;
  throw std::invalid_argument("no allocator design named " + std::string(name));
}

std::string_view to_string(LockVariant lock) { return design_of(lock).name; }

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

std::optional<LockVariant> parse_lock_variant(std::string_view text) {
  if (const Design* design = find_design(text)) return design->variant();
  return std::nullopt;
}

std::string lock_variant_names(std::string_view separator) {
  std::string names;
  for (const Design& design : designs()) {
    if (!names.empty()) names += separator;
    names += design.name;
  }
  return names;
}

std::optional<PageTableVariant> parse_page_table_variant(std::string_view text) {
  for (PageTableVariant pages : {PageTableVariant::eager, PageTableVariant::lazy})
    if (text == to_string(pages)) return pages;
  return std::nullopt;
}

}  // namespace cused::core::alloc
