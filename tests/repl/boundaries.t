# Where Lua meets C++: values whose metamethods raise, arguments that are wrong, a profile with
# no trace. None of it may end the REPL (an error outside a protected call aborts) or skip C++
# destructors (the ASan build checks for leaks: the names below are longer than std::string's
# inline buffer).
profsh> profsh.profile(setmetatable({}, {__index = function() error("options read through __index") end}))
<profsh.Profile nvtx,itt,torch: not run yet>
profsh> profsh.record_function("a range name longer than fifteen bytes", 42)
stdin:1: bad argument #2 to 'record_function' (function expected, got number)
profsh> profsh.record_function("a range name longer than fifteen bytes", function() error("fn failed") end)
stdin:1: fn failed
profsh> profsh.record_function({}, print)
stdin:1: bad argument #1 to 'record_function' (a name expected, got table)
profsh> q = profsh.profile{schedule=profsh.schedule{wait=5, warmup=1}}
profsh> q:start(); q:stop()
profsh> q.windows, q.a_field_name_longer_than_fifteen_bytes
0	nil
profsh> q:key_averages()
stdin:1: the profile has no trace: no window was recorded (were there steps?)
profsh> setmetatable({}, {__pairs = function() error("no pairs") end, __tostring = function() error("no text") end})
stdin:1: no text
profsh> profsh = nil
profsh> 1 + 1
2
