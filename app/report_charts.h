#pragma once
// The report page's charts (app/report_page.h), as inline SVG: a run's
// timeline and a step's counter deltas.

#include <functional>
#include <string>

#include "engine/report.h"

namespace rxerun {

// The page's colour class of a step's status: ok, flaky, fail, error, none.
std::string_view status_class(StepStatus status);

// Every step as a bar on one time axis, in a box that scrolls: colour by
// outcome, attempts and expected failures said beside the bar, a step left
// running in the background (a capture, a background exec) drawn as a span
// until the step that takes it (revert, wait), or to the run's end. Each
// bar links to `href(step)`. Steps of a report without start times are laid
// end to end.
std::string render_timeline(const RunReport& run, const std::function<std::string(const StepReport&)>& href);

// The step's DEV.COUNTER facts (whole numbers) as one bar chart per device
// or netdev of the counters that moved, those that stayed at zero named under
// it; "" when it has none. "rxe1 sent nothing" must be seen at a glance: a
// device on which nothing moved says so instead of a chart.
std::string render_counters(const StepReport& step);

}  // namespace rxerun
