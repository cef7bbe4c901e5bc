-- Attach to an unmodified workload, VTune / Nsight Systems style: run it (and every process it
-- starts) with the collector injected, then report what it announced through NVTX and ITT.
--   profsh scripts/attach.lua [CMD [ARGS...]]      (default: the bundled NVTX sample workload)
-- Writes workload.profsh and workload_trace.json (for Perfetto UI) in the current folder.
local command = {}
for i = 1, #(arg or {}) do command[i] = arg[i] end
if #command == 0 then command = {profsh.library_dir .. "/nvtx_pipeline", "10"} end

local p = profsh.profile{activities = {"nvtx", "itt"}}
local status = p:run(command)

print(p:key_averages():table{sort_by = "cpu_time_total", row_limit = 15})
print(p.summary.text)
for _, w in ipairs(p.warnings) do print("warning: " .. w) end

-- One row per process of the tree: what ran, and how much it announced.
for _, proc in ipairs(p.metadata.profsh.processes) do
  print(string.format("pid %-7d ppid %-7d %-8s %s", proc.pid, proc.ppid, proc.ended, proc.command))
end

p:save("workload.profsh")
p:export_chrome_trace("workload_trace.json")
print("wrote workload.profsh and workload_trace.json")
if status ~= 0 then os.exit(status) end
