"""Studios: every table belongs to one; the tables from before studios go to the ``default``
studio. Game-server service accounts become studio API keys (``StudioAPIKey``, hashed)."""

import django.db.models.deletion
from django.db import migrations, models

import tables.models


def tables_to_default_studio(apps, schema_editor):
    Studio, Table = apps.get_model("tables", "Studio"), apps.get_model("tables", "Table")
    studio, _ = Studio.objects.get_or_create(code="default", defaults={"name": "Default studio"})
    Table.objects.update(studio=studio)


class Migration(migrations.Migration):

    dependencies = [
        ('tables', '0005_round_rules_version'),
    ]

    operations = [
        migrations.CreateModel(
            name='Studio',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('code', models.SlugField(max_length=32, unique=True)),
                ('name', models.CharField(max_length=100)),
                ('created_at', models.DateTimeField(auto_now_add=True)),
            ],
        ),
        migrations.AddField(
            model_name='table',
            name='studio',
            field=models.ForeignKey(null=True, on_delete=django.db.models.deletion.PROTECT, related_name='tables', to='tables.studio'),
        ),
        migrations.RunPython(tables_to_default_studio, migrations.RunPython.noop),
        migrations.AlterField(
            model_name='table',
            name='studio',
            field=models.ForeignKey(default=tables.models.default_studio, on_delete=django.db.models.deletion.PROTECT, related_name='tables', to='tables.studio'),
        ),
        migrations.CreateModel(
            name='StudioAPIKey',
            fields=[
                ('id', models.CharField(editable=False, max_length=150, primary_key=True, serialize=False, unique=True)),
                ('prefix', models.CharField(editable=False, max_length=8, unique=True)),
                ('hashed_key', models.CharField(editable=False, max_length=150)),
                ('created', models.DateTimeField(auto_now_add=True, db_index=True)),
                ('name', models.CharField(default=None, help_text='A free-form name for the API key. Need not be unique. 50 characters max.', max_length=50)),
                ('revoked', models.BooleanField(blank=True, default=False, help_text='If the API key is revoked, clients cannot use it anymore. (This cannot be undone.)')),
                ('expiry_date', models.DateTimeField(blank=True, help_text='Once API key expires, clients cannot use it anymore.', null=True, verbose_name='Expires')),
                ('signing_secret', models.CharField(blank=True, editable=False, max_length=128)),
                ('studio', models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='api_keys', to='tables.studio')),
            ],
            options={
                'verbose_name': 'game-server API key',
                'verbose_name_plural': 'game-server API keys',
                'ordering': ('-created',),
                'abstract': False,
            },
        ),
    ]
