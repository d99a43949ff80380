"""Runs transfers between two accounts through the official Python Spanner client's read-write
transactions, and prints the two balances afterwards.

Used by spanprof's tests to check that a client nobody here wrote runs read-write transactions on
the built-in local instance: DML in a transaction, its commit, and its retry after an ABORTED. The
instance is found through SPANNER_EMULATOR_HOST, as for the Cloud Spanner emulator.

usage: transfer.py N   (the balances of accounts 1 and 2 as one JSON array on stdout; the attempts
                       the client made on stderr)
"""

import json
import sys

from google.auth.credentials import AnonymousCredentials
from google.cloud import spanner


def main():
    transfers = int(sys.argv[1])
    client = spanner.Client(project="test-project", credentials=AnonymousCredentials())
    database = client.instance("test-instance").database("test-db")
    attempts = 0

    def transfer(transaction):
        nonlocal attempts
        attempts += 1
        transaction.execute_update(
            "UPDATE Accounts SET Balance = Balance - 1 WHERE AccountId = 1"
        )
        transaction.execute_update(
            "UPDATE Accounts SET Balance = Balance + 1 WHERE AccountId = 2"
        )

    for _ in range(transfers):
        database.run_in_transaction(transfer)
    with database.snapshot() as snapshot:
        rows = list(
            snapshot.execute_sql(
                "SELECT Balance FROM Accounts WHERE AccountId IN (1, 2) ORDER BY AccountId"
            )
        )
    print(json.dumps([row[0] for row in rows]))
    print(f"{transfers} transfers in {attempts} attempts", file=sys.stderr)


if __name__ == "__main__":
    main()
