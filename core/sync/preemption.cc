#include "core/sync/preemption.h"

namespace cused::sync {

PreemptionControl*& thread_preemption_control() {
  thread_local PreemptionControl* control = nullptr;
  return control;
}

}  // namespace cused::sync
