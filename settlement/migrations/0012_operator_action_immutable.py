"""Audit rows are immutable: on PostgreSQL they cannot be updated or deleted (the ledger's trigger
function; TRUNCATE, used only by test teardown, is not affected). And the audited sign-ins,
failed sign-ins, CSV exports and pay-table edits."""

from django.db import migrations, models

from adminkit.schema import immutable_rows


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
        immutable_rows("settlement_operatoraction"),
    ]
