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

from adminkit.schema import postgresql_only

TABLE = "accounts_ledgertransaction"

#: Drops every ``varchar_pattern_ops`` index of the table (Django's ``_like`` ones, named by a hash).
DROP_PATTERN_INDEXES = f"""
DO $$
DECLARE name text;
BEGIN
    FOR name IN SELECT indexname FROM pg_indexes
                WHERE tablename = '{TABLE}' AND schemaname = current_schema()
                  AND indexdef LIKE '%varchar_pattern_ops%'
    LOOP
        EXECUTE format('DROP INDEX %I', name);
    END LOOP;
END $$"""


class Migration(migrations.Migration):

    dependencies = [("accounts", "0014_wallet_hot_updates")]

    operations = [postgresql_only(
        f'ALTER TABLE {TABLE} ALTER COLUMN key TYPE varchar(128) COLLATE "C"; {DROP_PATTERN_INDEXES}',
        f'ALTER TABLE {TABLE} ALTER COLUMN key TYPE varchar(128) COLLATE "default"; '
        f"CREATE INDEX {TABLE}_key_like ON {TABLE} (key varchar_pattern_ops); "
        f"CREATE INDEX {TABLE}_currency_id_like ON {TABLE} (currency_id varchar_pattern_ops)")]
