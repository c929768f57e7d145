"""On PostgreSQL, players are found by the start of their code or game code in any case (the
admin's search, the Bet Record's player filter: ``UPPER(code) LIKE 'DEMO-REAL-000%'``) through an
index each: ``text_pattern_ops`` answers a prefix whatever the database's collation."""

from django.db import migrations

from adminkit.schema import postgresql_only

SQL = """
CREATE INDEX IF NOT EXISTS player_code_prefix ON accounts_player (upper(code::text) text_pattern_ops);
CREATE INDEX IF NOT EXISTS player_game_code_prefix ON accounts_player (upper(game_code::text) text_pattern_ops);
"""
REVERSE = "DROP INDEX IF EXISTS player_code_prefix; DROP INDEX IF EXISTS player_game_code_prefix;"


class Migration(migrations.Migration):
    dependencies = [("accounts", "0008_ledger_chain")]
    operations = [postgresql_only(SQL, REVERSE)]
