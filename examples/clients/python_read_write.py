"""A spanprof retry-lab driver for the official Python Spanner client (google-cloud-spanner 3.71.0).

Runs read-write transactions through the client's own runner (run_in_transaction, which retries
an ABORTED itself), each tagged `spanprof-rw`: it reads AccountId 1, then runs SPANPROF_SQL (a DML
statement; the lab gives an UPDATE of that row by default). Then one more transaction, tagged
`spanprof-rw-failing`, whose second statement the server refuses, so that what the client does
after a failure other than ABORTED is seen. The instance and database are those named by
SPANNER_EMULATOR_HOST, SPANPROF_PROJECT, SPANPROF_INSTANCE and SPANPROF_DATABASE (what
`spanprof client` sets); SPANPROF_TRANSACTIONS transactions (6). Prints `N committed in A
attempts` on stderr.

    spanprof client --read-write --abort-every 3 -- python3 examples/clients/python_read_write.py
"""

import os
import sys

from google.auth.credentials import AnonymousCredentials
from google.cloud import spanner

READ = "SELECT Balance FROM Accounts WHERE AccountId = 1"
REFUSED = "UPDATE NoSuchTable SET Balance = 0 WHERE AccountId = 1"


def main():
    sql = os.environ["SPANPROF_SQL"]
    transactions = int(os.environ.get("SPANPROF_TRANSACTIONS", "6"))
    client = spanner.Client(project=os.environ["SPANPROF_PROJECT"], credentials=AnonymousCredentials())
    database = client.instance(os.environ["SPANPROF_INSTANCE"]).database(os.environ["SPANPROF_DATABASE"])
    attempts = 0

    def work(transaction):
        nonlocal attempts
        attempts += 1
        list(transaction.execute_sql(READ))
        transaction.execute_update(sql)

    def failing(transaction):
        transaction.execute_update(sql)
        transaction.execute_update(REFUSED)

    for _ in range(transactions):
        database.run_in_transaction(work, transaction_tag="spanprof-rw")
    try:
        database.run_in_transaction(failing, transaction_tag="spanprof-rw-failing")
    except Exception as error:  # the refusal, as the program sees it
        print(f"the failing transaction failed: {type(error).__name__}", file=sys.stderr)
    print(f"{transactions} committed in {attempts} attempts", file=sys.stderr)


if __name__ == "__main__":
    main()
    # As python_client.py: leave without interpreter finalization (grpcio's finalizers can hang).
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)
