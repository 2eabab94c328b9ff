"""`taotoken bench`: LLM-aware load testing of the gateway.

`run.run(options, io)` is the command (validate, resolve the settings, run, render); below it,
`campaign.BenchRun` + `campaign.run_bench(bench_run, view=None) -> BenchReport` is the work: every model, at every
step of a sweep, `repeat` times, each run one series (engine.run_series); `view.render_text(report)` is the text
and `BenchReport.to_dict()` the --json contract.

This package imports nothing itself: the app imports `bench.cli` to register the command on every start of the
CLI, and the engine (asyncio, ssl, worker processes) is for bench's runs alone.
"""
