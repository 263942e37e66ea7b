"""scripts/bench-report: runs netbuf's benchmark programs and renders their charts (see main.py)."""
