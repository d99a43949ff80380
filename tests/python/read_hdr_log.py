"""Reads an HdrHistogram interval log with HdrHistogram's own Python package (PyPI `hdrhistogram`,
imported as `hdrh`) and prints one JSON object per interval: its count and its 99th percentile.

Usage: read_hdr_log.py LOG
"""

import json
import sys

from hdrh.histogram import HdrHistogram
from hdrh.log import HistogramLogReader


def main() -> None:
    reference = HdrHistogram(1, 3_600_000_000, 3)
    reader = HistogramLogReader(sys.argv[1], reference)
    intervals = []
    while True:
        histogram = reader.get_next_interval_histogram()
        if histogram is None:
            break
        intervals.append(
            {
                "count": histogram.get_total_count(),
                "p99_us": histogram.get_value_at_percentile(99.0),
            }
        )
    reader.close()
    print(json.dumps(intervals))


if __name__ == "__main__":
    main()
