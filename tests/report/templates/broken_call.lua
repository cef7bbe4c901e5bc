local report = ...
report:section("First")
report:text("fine so far")
report:table(42)
