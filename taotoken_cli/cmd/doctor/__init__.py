"""`taotoken doctor`: every cause of a broken setup, found and explained in one run.

A check (`model.Check`) is a small unit with a stable id, a section and a title, registered in `registry`
by the modules under `checks/`; it returns a Result (ok / warn / fail / skipped, a one-line message,
details, fix lines and optional safe repairs). `runner` runs them concurrently under one deadline on a
shared `context.DoctorContext`; `view` turns the Report into text or JSON; `fix` applies the repairs;
`run` ties these together for the command.
"""

DEFAULT_TIMEOUT_S = 8.0  # with every host hanging the run still ends in about 9 s (start-up included)
