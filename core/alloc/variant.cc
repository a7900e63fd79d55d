#include "core/alloc/variant.h"

namespace cused::core::alloc {

std::string_view to_string(LockVariant lock) {
  switch (lock) {
    case LockVariant::mutex:
      return "mutex";
    case LockVariant::spin:
      return "spin";
    case LockVariant::spin_install:
      return "spin-install";
  }
  return "?";
}

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
  for (LockVariant lock : {LockVariant::mutex, LockVariant::spin, LockVariant::spin_install})
    if (text == to_string(lock)) return lock;
  return std::nullopt;
}

std::optional<PageTableVariant> parse_page_table_variant(std::string_view text) {
  for (PageTableVariant pages : {PageTableVariant::eager, PageTableVariant::lazy})
    if (text == to_string(pages)) return pages;
  return std::nullopt;
}

}  // namespace cused::core::alloc
