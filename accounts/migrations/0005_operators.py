"""Operators: the casino brands that bring players and money. Every player and every ledger account
becomes an operator's; the data there is moves to the ``default`` operator (transfer mode, every
currency), whose players the game server keeps naming by their code."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models
from django.db.models import F, Q

DEFAULT = "default"


def to_the_default_operator(apps, schema_editor):
    Operator = apps.get_model("accounts", "Operator")
    operator = Operator.objects.create(code=DEFAULT, name="Default operator", wallet_mode="transfer")
    operator.currencies.set(apps.get_model("accounts", "Currency").objects.all())
    apps.get_model("accounts", "Player").objects.update(operator=operator, game_code=F("code"))
    apps.get_model("accounts", "Account").objects.update(operator=operator)


def from_the_default_operator(apps, schema_editor):
    apps.get_model("accounts", "Player").objects.update(operator=None, game_code=None)
    apps.get_model("accounts", "Account").objects.update(operator=None)
    apps.get_model("accounts", "Operator").objects.filter(code=DEFAULT).delete()


class Migration(migrations.Migration):

    dependencies = [
        ("accounts", "0004_entry_account_index_covers_the_foreign_key"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name="Operator",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("code", models.SlugField(max_length=32, unique=True)),
                ("name", models.CharField(max_length=100)),
                ("wallet_mode", models.CharField(choices=[("transfer", "Transfer (the platform's wallets)"),
                                                          ("seamless", "Seamless (the operator's wallet)")],
                                                 default="transfer", max_length=8)),
                ("wallet_url", models.URLField(blank=True)),
                ("wallet_secret", models.CharField(blank=True, max_length=128)),
                ("wallet_timeout_ms", models.PositiveIntegerField(default=3000)),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                ("currencies", models.ManyToManyField(blank=True, related_name="operators", to="accounts.currency")),
            ],
            options={
                "constraints": [
                    models.CheckConstraint(condition=~Q(code__contains=":"), name="operator_code_has_no_colon"),
                    models.CheckConstraint(condition=Q(wallet_mode="transfer") | ~Q(wallet_url="") & ~Q(wallet_secret=""),
                                           name="seamless_operator_has_wallet"),
                ],
            },
        ),
        migrations.CreateModel(
            name="OperatorAPIKey",
            fields=[
                ("id", models.CharField(editable=False, max_length=150, primary_key=True, serialize=False, unique=True)),
                ("prefix", models.CharField(editable=False, max_length=8, unique=True)),
                ("hashed_key", models.CharField(editable=False, max_length=150)),
                ("created", models.DateTimeField(auto_now_add=True, db_index=True)),
                ("name", models.CharField(default=None, help_text="A free-form name for the API key. Need not be "
                                          "unique. 50 characters max.", max_length=50)),
                ("revoked", models.BooleanField(blank=True, default=False, help_text="If the API key is revoked, "
                                                "clients cannot use it anymore. (This cannot be undone.)")),
                ("expiry_date", models.DateTimeField(blank=True, help_text="Once API key expires, clients cannot "
                                                     "use it anymore.", null=True, verbose_name="Expires")),
                ("operator", models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name="api_keys",
                                               to="accounts.operator")),
            ],
            options={"verbose_name": "operator API key", "verbose_name_plural": "operator API keys",
                     "ordering": ("-created",), "abstract": False},
        ),
        migrations.CreateModel(
            name="OperatorAPICall",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("method", models.CharField(max_length=8)),
                ("path", models.CharField(max_length=255)),
                ("status", models.PositiveSmallIntegerField()),
                ("at", models.DateTimeField(auto_now_add=True)),
                ("key", models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name="calls",
                                          to="accounts.operatorapikey")),
                ("operator", models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name="+",
                                               to="accounts.operator")),
            ],
            options={"verbose_name": "operator API call",
                     "indexes": [models.Index(fields=["operator", "at"], name="operator_call_at")]},
        ),
        migrations.CreateModel(
            name="OperatorStaff",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("operator", models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name="staff",
                                               to="accounts.operator")),
                ("user", models.OneToOneField(on_delete=django.db.models.deletion.CASCADE, related_name="operator_staff",
                                              to=settings.AUTH_USER_MODEL)),
            ],
            options={"verbose_name_plural": "operator staff"},
        ),
        migrations.AddField(model_name="player", name="operator",
                            field=models.ForeignKey(null=True, on_delete=django.db.models.deletion.PROTECT,
                                                    related_name="players", to="accounts.operator")),
        migrations.AddField(model_name="player", name="game_code", field=models.CharField(max_length=100, null=True)),
        migrations.AddField(model_name="player", name="display_name",
                            field=models.CharField(blank=True, default="", max_length=100), preserve_default=False),
        migrations.AddField(model_name="account", name="operator",
                            field=models.ForeignKey(null=True, on_delete=django.db.models.deletion.PROTECT,
                                                    related_name="accounts", to="accounts.operator")),
        migrations.RunPython(to_the_default_operator, from_the_default_operator),
        migrations.AlterField(model_name="player", name="operator",
                              field=models.ForeignKey(on_delete=django.db.models.deletion.PROTECT,
                                                      related_name="players", to="accounts.operator")),
        migrations.AlterField(model_name="player", name="game_code",
                              field=models.CharField(max_length=100, unique=True)),
        migrations.AlterField(model_name="player", name="code", field=models.CharField(max_length=64)),
        migrations.AddConstraint(model_name="player", constraint=models.UniqueConstraint(
            fields=("operator", "code"), name="one_player_code_per_operator")),
        migrations.AlterField(model_name="account", name="operator",
                              field=models.ForeignKey(on_delete=django.db.models.deletion.PROTECT,
                                                      related_name="accounts", to="accounts.operator")),
        migrations.RemoveConstraint(model_name="account", name="one_named_account_per_currency"),
        migrations.AddConstraint(model_name="account", constraint=models.UniqueConstraint(
            condition=~Q(kind="wallet"), fields=("operator", "kind", "name", "currency"),
            name="one_named_account_per_operator_currency")),
        migrations.CreateModel(
            name="PlayerSession",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("token_hash", models.CharField(max_length=64, unique=True)),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                ("expires_at", models.DateTimeField()),
                ("last_used_at", models.DateTimeField()),
                ("revoked_at", models.DateTimeField(blank=True, null=True)),
                ("currency", models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name="+",
                                               to="accounts.currency")),
                ("player", models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name="sessions",
                                             to="accounts.player")),
            ],
        ),
    ]
