"""Audit rows are immutable: on PostgreSQL they cannot be updated or deleted (the ledger's trigger
function; TRUNCATE, used only by test teardown, is not affected). And the audited sign-ins,
failed sign-ins, CSV exports and pay-table edits."""

from django.db import migrations, models

SQL = """
CREATE TRIGGER operatoraction_immutable BEFORE UPDATE OR DELETE ON settlement_operatoraction
    FOR EACH ROW EXECUTE FUNCTION ledger_row_immutable();
"""
REVERSE = "DROP TRIGGER IF EXISTS operatoraction_immutable ON settlement_operatoraction;"


def forwards(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(SQL, params=None)


def backwards(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(REVERSE, params=None)


class Migration(migrations.Migration):

    dependencies = [
        ('settlement', '0011_adjustments'),
        ('accounts', '0002_ledger_immutable'),
    ]

    operations = [
        migrations.AlterField(
            model_name='operatoraction',
            name='action',
            field=models.CharField(choices=[('void_round', 'Void round'), ('reverse_round', 'Reverse settled round'), ('resettle_round', 'Resettle round'), ('assign_dispute', 'Assign dispute'), ('resolve_dispute', 'Resolve dispute'), ('manual_adjustment', 'Manual adjustment'), ('acknowledge_alert', 'Acknowledge alert'), ('retry_movement', 'Retry wallet movement'), ('request_adjustment', 'Request adjustment (awaiting approval)'), ('approve_adjustment', 'Approve adjustment'), ('login', 'Sign in to the admin'), ('login_failed', 'Failed sign-in to the admin'), ('export_csv', 'Export CSV'), ('edit_pay_tables', 'Edit pay tables')], max_length=32),
        ),
        migrations.RunPython(forwards, backwards),
    ]
