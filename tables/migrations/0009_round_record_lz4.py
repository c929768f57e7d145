"""Compress a round's record with lz4 on PostgreSQL (built with it: ``--with-lz4``, as Debian's is).

A boundless round's record holds every bet of the round (20,000 players: about 2.8 MB of JSON),
written while the game server waits for its answer (``record_result``). PostgreSQL compresses such
a value before storing it out of line (TOAST), by default with pglz, which took 85 ms of such a
record where lz4 takes 20 ms (the stored value is 40% larger). Values written before keep theirs.
A server without lz4 keeps pglz (the statement is skipped)."""

from django.db import migrations


def _compression(method):
    def run(apps, schema_editor):
        if schema_editor.connection.vendor != "postgresql":
            return
        schema_editor.execute(f"""DO $$ BEGIN
            ALTER TABLE tables_round ALTER COLUMN record SET COMPRESSION {method};
        EXCEPTION WHEN feature_not_supported THEN NULL; END $$""")
    return run


class Migration(migrations.Migration):

    dependencies = [("tables", "0008_code_unique_ignoring_case")]

    operations = [migrations.RunPython(_compression("lz4"), _compression("pglz"))]
