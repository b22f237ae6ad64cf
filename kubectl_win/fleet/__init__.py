"""doctor for many clusters in one run (scan.py) and, kept running, as Prometheus metrics (serve)."""
