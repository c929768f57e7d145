"""An extra stake keeps the cards its double or split was taken on: a replay on other cards is a
conflict (null for the other kinds and the extras taken before)."""

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('wagering', '0007_bet_key_per_table'),
    ]

    operations = [
        migrations.AddField(
            model_name='betextra',
            name='cards',
            field=models.JSONField(blank=True, editable=False, null=True),
        ),
    ]
