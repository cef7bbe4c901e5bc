// profsh's own recommendation rules, one function each (recommendations_profsh.cpp,
// recommendations_gaps.cpp): nullopt when the trace does not show the cause.
#pragma once

#include <optional>

#include "engine/analysis/model/event_model.h"
#include "engine/analysis/tensorboard/recommendations.h"

namespace profsh::recommendations {

std::optional<Recommendation> PageableCopies(const EventModel& model,
                                             const RecommendationOptions& options);
std::optional<Recommendation> SynchronousCopies(const EventModel& model,
                                                const RecommendationOptions& options);
std::optional<Recommendation> SynchronizationsInSteps(const EventModel& model,
                                                      const RecommendationOptions& options);
std::optional<Recommendation> GpuGaps(const EventModel& model,
                                      const RecommendationOptions& options);
std::optional<Recommendation> ShortKernels(const EventModel& model,
                                           const RecommendationOptions& options);
std::optional<Recommendation> Recompiles(const EventModel& model,
                                         const RecommendationOptions& options);

}  // namespace profsh::recommendations
