//! `Accounts`: the table read-write transactions move money in. 1,000 accounts (ids 1 to 1,000),
//! each holding a balance of 1,000, so a transfer's effects are easy to check: after N transfers
//! of one unit from account 1 to account 2, they hold 1,000 - N and 1,000 + N.

use std::ops::RangeInclusive;

use super::{DemoTable, field};
use crate::wire::{Type, Value};

/// The number of accounts.
pub const ACCOUNTS: i64 = 1_000;
/// Every account's balance when the table is loaded.
pub const OPENING_BALANCE: i64 = 1_000;

/// `Accounts(AccountId INT64 NOT NULL, Balance INT64 NOT NULL) PRIMARY KEY (AccountId)`.
pub fn table() -> DemoTable {
    DemoTable {
        name: "Accounts",
        columns: vec![
            field("AccountId", Type::Int64),
            field("Balance", Type::Int64),
        ],
        primary_key: vec!["AccountId"],
        length_limits: Vec::new(),
        parent: None,
        not_null: vec!["Balance"],
    }
}

/// The ids of the accounts: `1..=1000`.
pub fn ids() -> RangeInclusive<i64> {
    1..=ACCOUNTS
}

/// Every account as loaded, in key order: `[AccountId, Balance]`.
pub fn rows() -> impl Iterator<Item = Vec<Value>> {
    ids().map(|id| vec![Value::Int64(id), Value::Int64(OPENING_BALANCE)])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::demo::fits;

    #[test]
    fn a_thousand_accounts_of_a_thousand_each_in_key_order() {
        let table = table();
        let rows: Vec<Vec<Value>> = rows().collect();
        assert_eq!(rows.len(), 1_000);
        for (i, row) in rows.iter().enumerate() {
            assert_eq!(row, &vec![Value::Int64(i as i64 + 1), Value::Int64(1_000)]);
            for (field, value) in table.columns.iter().zip(row) {
                assert!(fits(&field.ty, value), "{}", field.name);
            }
        }
    }
}
