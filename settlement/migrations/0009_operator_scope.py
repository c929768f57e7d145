import django.db.models.deletion
from django.db import migrations, models


def backfill(apps, schema_editor):
    """Rows written before: a negative-wallet alert gets its wallet's player (``payload["wallet"]``),
    an audit row on a wallet, a dispute or such an alert gets that object's operator."""
    Account = apps.get_model("accounts", "Account")
    Alert = apps.get_model("settlement", "Alert")
    Dispute = apps.get_model("settlement", "Dispute")
    OperatorAction = apps.get_model("settlement", "OperatorAction")
    for alert in Alert.objects.filter(kind="negative_wallet", player__isnull=True).iterator():
        wallet = alert.payload.get("wallet") if isinstance(alert.payload, dict) else None
        player = Account.objects.filter(pk=wallet, kind="wallet").values_list("player_id", flat=True).first() \
            if isinstance(wallet, int) else None
        if player is not None:
            Alert.objects.filter(pk=alert.pk).update(player_id=player)
    owners = {"accounts.account": (Account, "operator_id"), "settlement.dispute": (Dispute, "player__operator_id"),
              "settlement.alert": (Alert, "player__operator_id")}
    for label, (model, operator) in owners.items():
        rows = OperatorAction.objects.filter(target_model=label, operator__isnull=True)
        pks = {int(pk) for pk in rows.values_list("target_pk", flat=True) if pk.isdigit()}
        by_operator = {}
        for pk, operator_id in model.objects.filter(pk__in=pks).values_list("pk", operator):
            if operator_id is not None:
                by_operator.setdefault(operator_id, []).append(str(pk))
        for operator_id, targets in by_operator.items():
            rows.filter(target_pk__in=targets).update(operator_id=operator_id)


class Migration(migrations.Migration):

    dependencies = [
        ('accounts', '0005_operators'),
        ('settlement', '0008_watch_wallets'),
    ]

    operations = [
        migrations.AddField(
            model_name='alert',
            name='player',
            field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.PROTECT,
                                    related_name='alerts', to='accounts.player'),
        ),
        migrations.AddField(
            model_name='operatoraction',
            name='operator',
            field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.PROTECT,
                                    related_name='+', to='accounts.operator'),
        ),
        migrations.RunPython(backfill, migrations.RunPython.noop),
    ]
