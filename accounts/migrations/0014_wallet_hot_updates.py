"""Let PostgreSQL rewrite a wallet in place when a post changes its balance and chain head (a HOT
update: no index entry written).

A post locks its wallets and updates each once per statement: a stake or a round's payouts update
every wallet they touch in ONE statement, so every row of a page may get a new version at once.
A HOT update needs room for the new version in the same page (no index covers ``balance``,
``negative_flagged`` or ``chain_head``): with the table's default fillfactor (100) a page is full
from its first insertion, and most wallet updates wrote a new entry into each of the six indexes a
wallet row is in instead (the pk, currency's two, operator, player, one-wallet-per-player: about
eight WAL records per wallet where a HOT update writes one). A page must hold two versions of each
of its rows, and a wallet's row grows from 89 bytes when created (96 aligned) to 114 (120) once it
has a chain head: ``fillfactor`` 35 fills a page at creation with about 28 rows, whose two versions
then take about 7,100 of its 8,192 bytes (50 left the last rows of each page without room). The
room comes back once the old versions are removed: pruned when a page is visited with little free
room, or vacuumed (autovacuum); a post that follows the last one on the same wallets before that
writes those it cannot fit elsewhere. The table is about three times as large for it.

The fillfactor applies to pages written from now on (``VACUUM FULL accounts_account`` rewrites old ones).
"""

from django.db import migrations

from adminkit.schema import postgresql_only

FILLFACTOR = 35


class Migration(migrations.Migration):

    dependencies = [("accounts", "0013_ledger_references_per_statement")]

    operations = [postgresql_only(f"ALTER TABLE accounts_account SET (fillfactor = {FILLFACTOR})",
                                  "ALTER TABLE accounts_account RESET (fillfactor)")]
