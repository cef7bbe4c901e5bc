local report = ...
report:section("Kernels")
local by_type = report.trace:kernel_breakdown{duration_ratio = 7}
report:table(by_type)
