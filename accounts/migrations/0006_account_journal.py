"""A seamless operator's players' wallets are journals of what crossed the operator's wallet: no
overdraft check, a balance below zero allowed."""

from django.db import migrations, models
from django.db.models import Q


class Migration(migrations.Migration):

    dependencies = [("accounts", "0005_operators")]

    operations = [
        migrations.AddField(model_name="account", name="journal", field=models.BooleanField(default=False)),
        migrations.RemoveConstraint(model_name="account", name="wallet_not_negative"),
        migrations.AddConstraint(model_name="account", constraint=models.CheckConstraint(
            condition=~Q(kind="wallet") | Q(balance__gte=0) | Q(negative_flagged=True) | Q(journal=True),
            name="wallet_not_negative")),
        migrations.AddConstraint(model_name="account", constraint=models.CheckConstraint(
            condition=Q(kind="wallet") | Q(journal=False), name="only_wallets_are_journals")),
    ]
