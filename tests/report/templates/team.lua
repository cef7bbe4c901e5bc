-- A user's template, found by name through PROFSH_TEMPLATES. Every text in it is hostile: the
-- report must show it as written, run none of it, and keep the Markdown's tables whole.
local report = ...
local evil = [[<script>window.__pwned=1</script><img src=x onerror="window.__pwned=1"> "dq" 'sq' `tick` |pipe| *star* _u_ [l](http://x) é ü 日本 # h & &amp; </textarea>]]
report:title("Team report " .. evil)
report:subtitle("for " .. #report.traces .. " trace(s)")
report:section("Names " .. evil, "names")
report:text("Text " .. evil)
report:list({evil, "- a dash"})
report:table({{name = evil, value = 1}, {name = "plain", value = 2.5}},
             {columns = {"name", "value"}, units = {value = "us"}, sort = "value"})
report:chart{kind = "bar", title = "Chart " .. evil, unit = "us", categories = {evil, "b"},
             series = {{name = evil, values = {1, 2}}}}
report:chart{kind = "line", title = "Memory " .. evil, unit = "bytes", x_name = "ms", step = true,
             x = {0, 1.5, 2, 4}, series = {{name = evil, values = {0, 4096, 1024, 8192}}}}
report:heading(evil)
report:section("Operators", "ops")
report:table(report.trace:key_averages(), {limit = 3})
report:link("names", "Back " .. evil)
