"""Reports over seeds and configs: `runs` reads results directories, `stats` has IQM and
bootstrap intervals, `figures` draws PNGs, `markdown` writes the report. CLI:
`python -m rlsuite.report`."""
