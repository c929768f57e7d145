"""On PostgreSQL, players are found by the start of their code or game code in any case (the
admin's search, the Bet Record's player filter: ``UPPER(code) LIKE 'DEMO-REAL-000%'``) through an
index each: ``text_pattern_ops`` answers a prefix whatever the database's collation."""

from django.db import migrations

SQL = """
CREATE INDEX IF NOT EXISTS player_code_prefix ON accounts_player (upper(code::text) text_pattern_ops);
CREATE INDEX IF NOT EXISTS player_game_code_prefix ON accounts_player (upper(game_code::text) text_pattern_ops);
"""
REVERSE = "DROP INDEX IF EXISTS player_code_prefix; DROP INDEX IF EXISTS player_game_code_prefix;"


def forwards(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(SQL, params=None)


def backwards(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(REVERSE, params=None)


class Migration(migrations.Migration):
    dependencies = [("accounts", "0008_ledger_chain")]
    operations = [migrations.RunPython(forwards, backwards)]
