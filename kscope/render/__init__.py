"""Reports as output: plain words and rows (text, view, names, ranks_rows, markdown: no rich),
rich tables for --once (tables, report, ranks, sweep, trace) and the sweep's plot. Never torch."""
