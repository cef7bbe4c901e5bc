-- Reports: profsh.report(traces, {template=, output=, title=}) runs a report template over
-- traces and writes one HTML page or a Markdown file. A template is a Lua chunk that receives
-- the report (`local report = ...`): report.trace, report.traces, and the methods below that
-- add sections, text, tables, charts, flamegraphs and a timeline. The methods check their
-- arguments here, in Lua, so a mistake is reported at the template's own file and line.
local profsh, builtins, write_report, restore_chunk_names = ...

profsh.help_topics.report = [[
profsh.report(traces, {template="summary", output="report.html", title=T}) -> files written
  A report of a Trace, a path or a list of them, from a report template: one self-contained
  HTML page (.html: sortable tables, charts, the flamegraph; opens offline) or Markdown (.md:
  charts as tables, the flamegraph as an SVG file beside it). Built-in templates: summary, gpu,
  compile, ranks (one trace per rank), diff (two traces). A name is looked for as NAME.lua in
  the folders of $PROFSH_TEMPLATES first; a path (FILE.lua) is used as it is.
  profsh.templates() lists the names. Command line: profsh report TRACE... -o OUT --template T;
  profsh run --report OUT -- CMD.
  A template is Lua; it gets the report:  local report = ...
    report.trace, report.traces, report.paths; report:title(t), report:subtitle(t)
    report:section(title [, id]), report:heading(t), report:text(fmt, ...), report:list{...}
    report:table(rows | averages | list, {columns=, labels=, units=, sort=, ascending=, limit=50})
    report:chart{kind="bar"|"stacked"|"line", categories=, x=, series={{name=, values=}}, unit=}
    report:chart{kind=..., rows=R, category="col" (or x="col"), values={"col", ...}}
    report:flamegraph(trace, opts), report:flamegraph_diff(a, b, opts), report:svg(text)
    report:timeline(trace), report:link(section_id, text)
    report:count(n, "process", "processes"), report:number(n) ("403,782,144"),
    report:bytes(n) ("403.8 MB"), report:duration(us) ("2.24 s"): numbers for text
  Errors name the template's file and line.]]

local Report = {}
-- report.trace is the first of report.traces, which are loaded when a template first reads them
-- (the ranks template loads its paths with profsh.load_ranks instead, and a job of many large
-- ranks is not held twice).
Report.__index = function(self, key)
  if key == "trace" then return self.traces[1] end
  return Report[key]
end

-- Raises `message` at the template line that called the report method (level 3: the method's
-- caller, seen from the helper that checks it).
local function fail(method, message, level)
  error("report:" .. method .. ": " .. message, (level or 2) + 1)
end

local function type_name(v)
  local mt = type(v) == "userdata" and getmetatable(v)
  return type(mt) == "table" and mt.__name or nil
end

local function is_trace(v) return type_name(v) == "profsh.Trace" end
local function is_averages(v) return type_name(v) == "profsh.Averages" end

local function text_arg(method, v, what)
  if type(v) ~= "string" and type(v) ~= "number" then
    fail(method, what .. " must be a string, got " .. type(v), 3)
  end
  return tostring(v)
end

local function lazy_traces(given, paths)
  return setmetatable({}, {
    __index = function(list, i)
      if type(i) ~= "number" or given[i] == nil then return nil end
      local t = given[i]
      if type(t) == "string" then t = profsh.load(t) end
      rawset(list, i, t)
      return t
    end,
    __len = function() return #paths end})
end

local function new_report(traces, paths, title)
  return setmetatable({traces = lazy_traces(traces, paths), paths = paths, _ids = {}, _links = {},
                       _doc = {title = title, sections = {}}}, Report)
end

-- report:title(text), report:subtitle(text): the page's title and the line below it.
function Report:title(text) self._doc.title = text_arg("title", text, "the title") end
function Report:subtitle(text) self._doc.subtitle = text_arg("subtitle", text, "the subtitle") end

-- report:section(title [, id]) -> id: starts a section; what follows goes into it. The id
-- (letters, digits, - and _) is what report:link and the table of contents point at.
function Report:section(title, id)
  title = text_arg("section", title, "the title")
  if id == nil then
    id = title:lower():gsub("[^%w]+", "-"):gsub("^%-+", ""):gsub("%-+$", "")
    if id == "" then id = "section" end
    local base, n = id, 1
    while self._ids[id] do n = n + 1; id = base .. "-" .. n end
  elseif type(id) ~= "string" or not id:match("^[%w_-]+$") then
    fail("section", "the id must be letters, digits, - and _ (got " .. tostring(id) .. ")")
  elseif self._ids[id] then
    fail("section", "a section with the id '" .. id .. "' is already there")
  end
  self._ids[id] = true
  self._current = {id = id, title = title, blocks = {}}
  table.insert(self._doc.sections, self._current)
  return id
end

function Report:_add(block)
  if not self._current then self:section("Overview") end
  table.insert(self._current.blocks, block)
end

-- report:heading(text), report:text(format, ...), report:list(items)
function Report:heading(text) self:_add{kind = "heading", text = text_arg("heading", text, "the text")} end

function Report:text(text, ...)
  text = text_arg("text", text, "the text")
  if select("#", ...) > 0 then text = string.format(text, ...) end
  self:_add{kind = "text", text = text}
end

function Report:list(items)
  if type(items) ~= "table" then fail("list", "a list of strings expected, got " .. type(items)) end
  local out = {}
  for i, item in ipairs(items) do out[i] = text_arg("list", item, "item " .. i) end
  self:_add{kind = "list", items = out}
end

-- Numbers in text as tables show them: report:count(1, "process", "processes") -> "1 process",
-- report:number(403782144) -> "403,782,144", report:bytes(403782144) -> "403.8 MB" (decimal
-- units, as the charts' axes), report:duration(2235204) (us) -> "2.24 s".
local function grouped(n)
  local text = string.format("%.0f", n)
  local sign, digits = text:match("^(-?)(%d+)$")
  if not digits then return text end
  return sign .. digits:reverse():gsub("(%d%d%d)", "%1,"):reverse():gsub("^,", "")
end

local function number_arg(method, v)
  if type(v) ~= "number" then fail(method, "a number expected, got " .. type(v), 3) end
  return v
end

function Report:count(n, one, many)
  number_arg("count", n)
  return grouped(n) .. " " .. text_arg("count", n == 1 and one or many or one .. "s", "the noun")
end

function Report:number(n) return grouped(number_arg("number", n)) end

local function scaled(v, scale)
  local i = 1
  while i < #scale and math.abs(v) < scale[i][1] do i = i + 1 end
  local x = v / scale[i][1]
  local digits = x == math.floor(x) and 0 or math.abs(x) >= 10 and 1 or 2
  return string.format("%." .. digits .. "f %s", x, scale[i][2])
end

function Report:bytes(n)
  return scaled(number_arg("bytes", n), {{1e12, "TB"}, {1e9, "GB"}, {1e6, "MB"}, {1e3, "kB"}, {1, "B"}})
end

function Report:duration(us)
  return scaled(number_arg("duration", us), {{1e6, "s"}, {1e3, "ms"}, {1, "\u{b5}s"}})
end

-- report:link(section_id, text): a link to another section (checked once the template is done).
function Report:link(section_id, text)
  local info = debug.getinfo(2, "Sl")
  text_arg("link", section_id, "the section id")
  table.insert(self._links, {id = section_id, where = info.short_src .. ":" .. (info.currentline or 0)})
  self:_add{kind = "link", section = section_id, text = text_arg("link", text or section_id, "the text")}
end

-- The unit a column's values are in, from its name, when the template gives none.
local function unit_of(name, from_averages)
  if from_averages and (name:match("time") or name == "cpu_time" or name == "cuda_time") then return "us" end
  if from_averages and name:match("memory") then return "bytes" end
  if name:match("_us$") or name:match("%(us%)$") then return "us" end
  if name:match("_ns$") or name:match("%(ns%)$") then return "ns" end
  if name:match("_ms$") or name:match("%(ms%)$") then return "ms" end
  if name:match("bytes$") then return "bytes" end
  if name:match("_pct$") or name:match("percent") or name:match("%%") then return "%" end
  return ""
end

-- A list in a cell (input shapes, a stack) as text: [[1, 3], [3]], "a; b" for strings.
local function cell_text(v, depth)
  if type(v) ~= "table" then return tostring(v) end
  if (depth or 0) > 4 then return "..." end
  local parts = {}
  for i, x in ipairs(v) do parts[i] = cell_text(x, (depth or 0) + 1) end
  return "[" .. table.concat(parts, ", ") .. "]"
end

local default_average_columns = {"key", "count", "self_cpu_time_total", "cpu_time_total", "cpu_time"}

local function compare_cells(a, b, ascending)
  -- Numbers before texts before nothing, whatever the direction.
  local ta, tb = type(a), type(b)
  if ta ~= tb then
    local rank = {number = 1, string = 2, boolean = 3}
    return (rank[ta] or 4) < (rank[tb] or 4)
  end
  if ta ~= "number" and ta ~= "string" then return false end
  if ascending then return a < b else return a > b end
end

-- report:table(source [, options]): a sortable table. source: an analysis' rows (t:kernel_breakdown()
-- ...), key averages (t:key_averages()), or a list of row tables with options.columns.
-- options: columns (names, in order), units ({column = "us"}), sort (a column), ascending,
-- limit (rows kept, 50 by default; 0: all), caption, labels ({column = "shown name"}).
function Report:table(source, options)
  options = options or {}
  if type(options) ~= "table" then fail("table", "options must be a table") end
  local columns, rows, notes = options.columns, {}, {}
  local from_averages = is_averages(source)
  if from_averages then
    columns = columns or default_average_columns
    for _, a in ipairs(source:sorted(options.sort or "self_cpu_time_total")) do
      local row = {}
      for _, c in ipairs(columns) do
        local ok, v = pcall(function() return a[c] end)
        if not ok then fail("table", "key averages have no column '" .. tostring(c) .. "'") end
        row[c] = v
      end
      rows[#rows + 1] = row
    end
  elseif type(source) == "table" then
    local ok, source_columns = pcall(function() return source.columns end)
    columns = columns or (ok and source_columns) or nil
    if type(columns) ~= "table" then
      fail("table", "the rows name no columns: give options.columns")
    end
    local ok_notes, source_notes = pcall(function() return source.notes end)
    if ok_notes and type(source_notes) == "table" then
      for _, n in ipairs(source_notes) do notes[#notes + 1] = tostring(n) end
    end
    for i, r in ipairs(source) do
      if type(r) ~= "table" then fail("table", "row " .. i .. " is a " .. type(r) .. ", not a table") end
      rows[i] = r
    end
  else
    fail("table", "rows, key averages or a list of row tables expected, got " .. type(source))
  end
  local sort_column
  if options.sort then
    for i, c in ipairs(columns) do if c == options.sort then sort_column = i end end
    if not sort_column then fail("table", "no column '" .. tostring(options.sort) .. "' to sort by") end
    if not from_averages then
      local key, ascending = options.sort, options.ascending
      table.sort(rows, function(a, b) return compare_cells(a[key], b[key], ascending) end)
    end
  end
  local limit = options.limit or 50
  local out_columns, out_rows = {}, {}
  local units, labels = options.units or {}, options.labels or {}
  for i, c in ipairs(columns) do
    out_columns[i] = {name = text_arg("table", labels[c] or c, "a column name"),
                      unit = units[c] or unit_of(c, from_averages)}
  end
  for i, r in ipairs(rows) do
    if limit > 0 and i > limit then break end
    local row = {}
    for k, c in ipairs(columns) do
      local v = r[c]
      if type(v) == "table" then
        v = cell_text(v)
      elseif v ~= nil and type(v) ~= "number" and type(v) ~= "string" and type(v) ~= "boolean" then
        v = tostring(v)
      end
      row[k] = v
    end
    out_rows[i] = row
  end
  self:_add{kind = "table", caption = options.caption, columns = out_columns, rows = out_rows,
            notes = notes, total_rows = #rows, sort_column = sort_column,
            descending = sort_column ~= nil and not options.ascending}
end

local function number_list(method, values, what)
  if type(values) ~= "table" then fail(method, what .. " must be a list of numbers", 3) end
  local out = {}
  for i, v in ipairs(values) do
    if type(v) ~= "number" then fail(method, what .. "[" .. i .. "] is a " .. type(v) .. ", not a number", 3) end
    out[i] = v
  end
  return out
end

-- report:chart{kind = "bar"|"stacked"|"line", title, unit, x_name, ...}: a chart. Data as
--   categories = {...}, series = {{name=, values={...}}, ...}   (bars; line: x = {...} instead)
-- or from rows: rows = R, category = "column" (bars) or x = "column" (line), values = {"col", ...},
-- limit (bars kept, 20 by default). HTML draws it; Markdown shows its table.
function Report:chart(spec)
  if type(spec) ~= "table" then fail("chart", "a table {kind=, ...} expected") end
  local kind = spec.kind or "bar"
  if kind ~= "bar" and kind ~= "stacked" and kind ~= "line" then
    fail("chart", "kind must be bar, stacked or line, not " .. tostring(kind))
  end
  local chart = {kind = "chart", chart = kind, title = spec.title, unit = spec.unit, x_name = spec.x_name,
                 step = spec.step, categories = {}, x = {}, series = {}}
  if spec.rows ~= nil then
    if type(spec.rows) ~= "table" then fail("chart", "rows must be a list of row tables") end
    local value_columns = spec.values
    if type(value_columns) == "string" then value_columns = {value_columns} end
    if type(value_columns) ~= "table" then fail("chart", "values must name the columns to draw") end
    local limit = spec.limit or (kind == "line" and 0 or 20)
    local label = spec.category or spec.x
    if type(label) ~= "string" then fail("chart", (kind == "line" and "x" or "category") .. " must name a column") end
    chart.x_name = chart.x_name or label
    for s, c in ipairs(value_columns) do chart.series[s] = {name = (spec.labels or {})[c] or c, values = {}} end
    for i, r in ipairs(spec.rows) do
      if limit > 0 and i > limit then break end
      if kind == "line" then
        if type(r[label]) ~= "number" then fail("chart", "row " .. i .. ": x column '" .. label .. "' is not a number") end
        chart.x[i] = r[label]
      else
        chart.categories[i] = tostring(r[label])
      end
      for s, c in ipairs(value_columns) do
        local v = r[c]
        if v ~= nil and type(v) ~= "number" then fail("chart", "row " .. i .. ": column '" .. c .. "' is not a number") end
        chart.series[s].values[i] = v or 0
      end
    end
  else
    if kind == "line" then
      chart.x = number_list("chart", spec.x, "x")
    else
      if type(spec.categories) ~= "table" then fail("chart", "categories must be a list") end
      for i, c in ipairs(spec.categories) do chart.categories[i] = text_arg("chart", c, "category " .. i) end
    end
    if type(spec.series) ~= "table" or #spec.series == 0 then fail("chart", "series must be a list of {name=, values=}") end
    local points = kind == "line" and #chart.x or #chart.categories
    for s, se in ipairs(spec.series) do
      if type(se) ~= "table" then fail("chart", "series " .. s .. " must be a table {name=, values=}") end
      local values = number_list("chart", se.values, "series " .. s .. " values")
      if #values ~= points then
        fail("chart", ("series %d has %d values for %d %s"):format(s, #values, points, kind == "line" and "x values" or "categories"))
      end
      chart.series[s] = {name = text_arg("chart", se.name or ("series " .. s), "a series name"), values = values}
    end
  end
  self:_add(chart)
end

-- report:flamegraph(trace [, options]): the trace's flamegraph (trace:flamegraph's options, and
-- title); report:flamegraph_diff(before, after [, options]) its differential one.
function Report:flamegraph(trace, options)
  if not is_trace(trace) then fail("flamegraph", "a Trace expected, got " .. type(trace)) end
  options = options or {}
  local title = options.title or "Flamegraph"
  local flame_options = {}
  for k, v in pairs(options) do if k ~= "title" then flame_options[k] = v end end
  local ok, summary, svg = pcall(profsh.flamegraph, trace, nil, flame_options)
  if not ok then fail("flamegraph", tostring(summary)) end
  self._svgs = (self._svgs or 0) + 1
  self:_add{kind = "svg", title = title, svg = svg,
            file = (self._svgs == 1 and "flamegraph" or "flamegraph-" .. self._svgs) .. ".svg"}
  -- Python stacks: what was drawn without one (the graph still adds up to the total).
  if summary.note then self:text("Drawn without a stack of their own: %s.", summary.note) end
end

function Report:flamegraph_diff(before, after, options)
  options = options or {}
  local title = options.title or "Differential flamegraph"
  local flame_options = {}
  for k, v in pairs(options) do if k ~= "title" then flame_options[k] = v end end
  local ok, summary, svg = pcall(profsh.flamegraph_diff, before, after, nil, flame_options)
  if not ok then fail("flamegraph_diff", tostring(summary)) end
  self._svgs = (self._svgs or 0) + 1
  self:_add{kind = "svg", title = title, svg = svg, file = "flamegraph-diff-" .. self._svgs .. ".svg"}
end

-- report:svg(text [, {title=, file=}]): an SVG of the template's own.
function Report:svg(svg, options)
  options = options or {}
  self._svgs = (self._svgs or 0) + 1
  local file = options.file or ("figure-" .. self._svgs .. ".svg")
  if type(file) ~= "string" or not file:match("^[%w_-]+%.svg$") then
    fail("svg", "file must be NAME.svg (letters, digits, - and _), got " .. tostring(file))
  end
  self._files = self._files or {}
  if self._files[file] then fail("svg", "two figures are named " .. file) end
  self._files[file] = true
  self:_add{kind = "svg", svg = text_arg("svg", svg, "the SVG"), title = options.title, file = file}
end

-- report:timeline(trace [, {buckets=200, lanes=48}]): how busy each process's threads and each
-- GPU stream are over the trace (the busiest `lanes` tracks).
function Report:timeline(trace, options)
  if not is_trace(trace) then fail("timeline", "a Trace expected, got " .. type(trace)) end
  options = options or {}
  self:_add{kind = "timeline", trace = trace, buckets = options.buckets or 200, lanes = options.lanes or 48}
end

-- Finding a template: a path (holds "/" or ends in .lua), else NAME.lua in the folders of
-- $PROFSH_TEMPLATES (":"-separated, first match wins, so a user's template may replace a
-- built-in one), else a built-in template.
local function find_template(name)
  if type(name) ~= "string" or name == "" then error("report: template must be a name or a file path", 3) end
  if name:find("/", 1, true) or name:match("%.lua$") then
    local f, err = io.open(name, "r")
    if not f then error("report: cannot read template " .. err, 3) end
    local source = f:read("a")
    f:close()
    return source, "@" .. name
  end
  for dir in (os.getenv("PROFSH_TEMPLATES") or ""):gmatch("[^:]+") do
    local path = dir .. "/" .. name .. ".lua"
    local f = io.open(path, "r")
    if f then
      local source = f:read("a")
      f:close()
      return source, "@" .. path
    end
  end
  if builtins[name] then return builtins[name], "=[built-in template " .. name .. "]" end
  local names = {}
  for n in pairs(builtins) do names[#names + 1] = n end
  table.sort(names)
  error(("report: no template named '%s' (built in: %s; PROFSH_TEMPLATES=%s)"):format(
    name, table.concat(names, ", "), os.getenv("PROFSH_TEMPLATES") or "unset"), 3)
end

-- profsh.templates() -> the names of the templates found ($PROFSH_TEMPLATES's and built-in).
function profsh.templates()
  local seen, names = {}, {}
  for dir in (os.getenv("PROFSH_TEMPLATES") or ""):gmatch("[^:]+") do
    local p = io.popen("ls -1 '" .. dir:gsub("'", "'\\''") .. "' 2>/dev/null")
    if p then
      for file in p:lines() do
        local n = file:match("^(.+)%.lua$")
        if n and not seen[n] then seen[n] = true; names[#names + 1] = n end
      end
      p:close()
    end
  end
  for n in pairs(builtins) do if not seen[n] then seen[n] = true; names[#names + 1] = n end end
  table.sort(names)
  return names
end

local function basename(path) return (tostring(path):match("([^/]+)$") or tostring(path)) end

-- profsh.report(traces, {template = "summary", output = "report.html", title = T}) -> files written.
-- traces: a Trace, a path, or a list of them.
function profsh.report(traces, options)
  options = options or {}
  if type(options) ~= "table" then error("report: options must be a table {template=, output=, title=}", 2) end
  if type(traces) == "string" or is_trace(traces) then traces = {traces} end
  if type(traces) ~= "table" or #traces == 0 then error("report: a trace, a path or a list of them expected", 2) end
  local paths = {}
  for i, t in ipairs(traces) do
    if type(t) == "string" then
      local f, err = io.open(t, "r")
      if not f then error("report: cannot read " .. err, 2) end
      f:close()
      paths[i] = t
    elseif is_trace(t) then
      paths[i] = t.path
    else
      error("report: traces[" .. i .. "] is a " .. type(t) .. ", not a Trace or a path", 2)
    end
  end
  local name = options.template or "summary"
  local source, chunkname = find_template(name)
  local chunk, err = load(source, chunkname, "t")
  if not chunk then error("report template: " .. restore_chunk_names(err), 0) end
  local names = {}
  for i, p in ipairs(paths) do names[i] = basename(p) end
  local report = new_report(traces, paths, options.title or ("profsh report: " .. table.concat(names, " vs ")))
  report.template = name
  -- An error raised outside the template's own lines (in profsh's C++ functions) gets the
  -- template line that led to it.
  local function locate(message)
    message = tostring(message)
    for level = 2, 60 do
      local info = debug.getinfo(level, "Sl")
      if not info then break end
      if info.source == chunkname then
        local where = info.short_src .. ":" .. (info.currentline or 0) .. ":"
        if message:sub(1, #where) ~= where then message = where .. " " .. message end
        break
      end
    end
    return message
  end
  local ok, failure = xpcall(chunk, locate, report)
  if not ok then error("report template failed: " .. restore_chunk_names(failure), 0) end
  for _, link in ipairs(report._links) do
    if not report._ids[link.id] then
      error("report template failed: " .. restore_chunk_names(link.where) .. ": report:link: no section has the id '" .. link.id .. "'", 0)
    end
  end
  if #report._doc.sections == 0 then
    error("report template failed: " .. chunkname:gsub("^[@=]", "") .. " added nothing to the report", 0)
  end
  local written, files = pcall(write_report, report._doc, options.output or "report.html")
  if not written then error("report: " .. tostring(files):gsub("^%[profsh report library%]:%d+: ", ""), 0) end
  return files
end
