"""Reads Accounts by key set through the official Python Spanner client (Read, not a query).

Used by spanprof's tests to check that a client nobody here wrote reads the built-in local instance
by keys and by a key range. The instance is found through SPANNER_EMULATOR_HOST.

usage: read_keys.py   (one JSON object per read on stdout: its name and its rows)
"""

import json
import os
import sys

from google.auth.credentials import AnonymousCredentials
from google.cloud import spanner
from google.cloud.spanner_v1 import KeyRange, KeySet


def main():
    client = spanner.Client(project="test-project", credentials=AnonymousCredentials())
    database = client.instance("test-instance").database("test-db")
    reads = [
        ("keys", KeySet(keys=[[2], [1]]), 0),
        ("range", KeySet(ranges=[KeyRange(start_closed=[5], end_open=[8])]), 0),
        ("all", KeySet(all_=True), 3),
    ]
    for name, keyset, limit in reads:
        with database.snapshot() as snapshot:
            rows = snapshot.read("Accounts", ("AccountId", "Balance"), keyset, limit=limit)
            # INT64 arrives as Python ints: printed as the strings Spanner sends.
            out = [[str(v) for v in row] for row in rows]
        print(json.dumps({"read": name, "rows": out}))
    print(f"read_keys: {len(reads)} reads", file=sys.stderr)


if __name__ == "__main__":
    main()
    # As read_rows.py: leave without interpreter finalization, where grpcio's finalizers can hang.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)
