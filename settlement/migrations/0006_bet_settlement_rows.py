"""Move each ``BetSettlement`` row (one per bet) to a ``SettlementDetail`` shared by the bets of
its round and correction whose detail is the same, point the bets at it, and drop
``BetSettlement``. Reversible: going back writes one ``BetSettlement`` per bet again."""

from django.db import migrations


def _tables(apps):
    return {name: apps.get_model(app, model)._meta.db_table for name, app, model in (
        ("old", "settlement", "BetSettlement"), ("new", "settlement", "SettlementDetail"), ("bet", "wagering", "Bet"))}


def forwards(apps, schema_editor):
    """Two statements, on PostgreSQL and SQLite alike (a table of millions of bets moves in the
    database, not through Python): one detail row per round, correction and equal detail, then
    each bet pointed at its own."""
    with schema_editor.connection.cursor() as cursor:
        cursor.execute("INSERT INTO {new} (round_id, correction, detail, settled_at) "
                       "SELECT b.round_id, s.correction, s.detail, min(s.settled_at) "
                       "FROM {old} s JOIN {bet} b ON b.id = s.bet_id GROUP BY b.round_id, s.correction, s.detail"
                       .format(**_tables(apps)))
        cursor.execute("UPDATE {bet} SET settlement_id = d.id FROM {old} s, {new} d "
                       "WHERE s.bet_id = {bet}.id AND d.round_id = {bet}.round_id AND d.correction = s.correction "
                       "AND d.detail = s.detail".format(**_tables(apps)))


def backwards(apps, schema_editor):
    """One ``BetSettlement`` per bet that points at a detail."""
    with schema_editor.connection.cursor() as cursor:
        cursor.execute("INSERT INTO {old} (bet_id, correction, detail, settled_at) "
                       "SELECT b.id, d.correction, d.detail, d.settled_at FROM {bet} b JOIN {new} d "
                       "ON d.id = b.settlement_id".format(**_tables(apps)))


class Migration(migrations.Migration):

    dependencies = [
        ("settlement", "0005_settlement_detail"),
        ("wagering", "0004_bet_settlement"),
    ]

    operations = [
        migrations.RunPython(forwards, backwards),
        migrations.DeleteModel(name="BetSettlement"),
    ]
