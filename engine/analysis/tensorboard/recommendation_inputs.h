// The figures the plugin's rules read (PluginRuleInputs), gathered from the views that compute
// them the plugin's way and from the event model (the plugin's EventParser flags).
#pragma once

#include "engine/analysis/tensorboard/recommendations.h"
#include "engine/trace/trace.h"

namespace profsh {

PluginRuleInputs PluginRuleInputsOf(const Trace& trace);

}  // namespace profsh
