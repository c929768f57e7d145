"""A ledger transaction's ``key`` in collation "C" (compared byte by byte) on PostgreSQL, with one
index on it instead of two, and no second index on its currency either.

A key is an ASCII id (``payout:<bet>``, ``resettle:<bet>:<n>``). In the database's collation
(a locale's, such as ``C.UTF-8``) every comparison in the unique key's index goes through the
locale, and PostgreSQL cannot use that index for a prefix match (``key LIKE 'resettle:12:%'``,
``settlement.selectors.bets_money_entries``): Django gave the column a second index for it
(``varchar_pattern_ops``, ``..._like``). In collation "C" the unique index serves both, so the
second is dropped. The currency's ``_like`` index served no query (a currency code is never
matched by prefix; its plain index stays, for the admin's filter). A settlement's payouts insert
one transaction each, so each such row now updates four indexes, not six. Keys order as before
(``C.UTF-8`` orders by code point, as "C" does for ASCII). Nothing changes on other databases."""

from django.db import migrations

from adminkit.schema import pattern_indexes_dropped, postgresql_only

TABLE = "accounts_ledgertransaction"


class Migration(migrations.Migration):

    dependencies = [("accounts", "0014_wallet_hot_updates")]

    operations = [
        postgresql_only(f'ALTER TABLE {TABLE} ALTER COLUMN key TYPE varchar(128) COLLATE "C"',
                        f'ALTER TABLE {TABLE} ALTER COLUMN key TYPE varchar(128) COLLATE "default"'),
        pattern_indexes_dropped(TABLE, ["key", "currency_id"]),
    ]
