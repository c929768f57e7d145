"""Let PostgreSQL rewrite a bet in place when betting closes and when its round is settled (a HOT
update: no index entry written), and drop the indexes nothing needs.

A HOT update needs two things: no index on a column the update changes, and room for the new row
version in the same page. Closing betting and settlement change ``state`` (and settlement
``outcome``, ``returned``, ``settled_at``), each in ONE statement over every bet of the round, so:

- ``bet_state`` goes: ``state`` has four values; the services filter it within a round, the
  player API within a player, the Bet Record walks ``bet_placed`` newest first (or a player's, a
  table's, a round's index) and filters it there. With it, each settled bet wrote a new entry
  into all 11 indexes (``make bench-settlement`` prints the share of HOT updates);
- ``fillfactor`` 45: a page is filled to 45% at insertion, so the new versions of all its bets fit
  beside the old ones (a settled row is ~15% larger); the old versions are pruned on the page's
  next visit. The table is about twice as large for it;
- redundant indexes go: ``round_id`` and ``player_id`` alone (the leading columns of
  ``one_record_id_per_round`` and ``bet_player_placed``), ``bet_round_type`` (no query filters a
  round's bets by type where the round's own index is not enough), and the ``varchar_pattern_ops``
  copy of the ``idempotency_key`` unique index that ``unique=True`` builds for LIKE searches nobody
  makes (the key is unique through the ``bet_idempotency_key`` constraint instead).

The fillfactor applies to pages written from now on (``VACUUM FULL wagering_bet`` rewrites old ones).
"""

import django.db.models.deletion
from django.db import migrations, models

FILLFACTOR = 45


def set_fillfactor(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(f"ALTER TABLE wagering_bet SET (fillfactor = {FILLFACTOR})")


def reset_fillfactor(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute("ALTER TABLE wagering_bet RESET (fillfactor)")


class Migration(migrations.Migration):

    dependencies = [
        ("accounts", "0002_ledger_immutable"),
        ("tables", "0003_theoretical_rtp"),
        ("wagering", "0002_bet_table_currency"),
    ]

    operations = [
        migrations.AddConstraint(
            model_name="bet",
            constraint=models.UniqueConstraint(fields=("idempotency_key",), name="bet_idempotency_key"),
        ),
        migrations.AlterField(
            model_name="bet",
            name="idempotency_key",
            field=models.CharField(max_length=128),
        ),
        migrations.RemoveIndex(model_name="bet", name="bet_round_type"),
        migrations.RemoveIndex(model_name="bet", name="bet_state"),
        migrations.AlterField(
            model_name="bet",
            name="player",
            field=models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.PROTECT, related_name="bets",
                                    to="accounts.player"),
        ),
        migrations.AlterField(
            model_name="bet",
            name="round",
            field=models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.PROTECT, related_name="bets",
                                    to="tables.round"),
        ),
        migrations.RunPython(set_fillfactor, reset_fillfactor),
    ]
