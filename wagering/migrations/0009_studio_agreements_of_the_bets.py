"""The agreements the platform had in fact before studio agreements: every operator whose players
hold bets at a studio's tables agrees with that studio, and the ``default`` operator (the data from
before operators) with the ``default`` studio (the tables from before studios), so that the
studios keep taking the bets they took. Any other pair is the provider's to agree."""

from django.db import migrations


def agreements_of_the_bets(apps, schema_editor):
    Agreement = apps.get_model("tables", "StudioAgreement")
    pairs = set(apps.get_model("wagering", "Bet").objects.values_list("player__operator_id", "table__studio_id")
                .distinct())
    operator = apps.get_model("accounts", "Operator").objects.filter(code="default").first()
    studio = apps.get_model("tables", "Studio").objects.filter(code="default").first()
    if operator is not None and studio is not None:
        pairs.add((operator.pk, studio.pk))
    Agreement.objects.bulk_create([Agreement(operator_id=o, studio_id=s) for o, s in sorted(pairs)],
                                  ignore_conflicts=True)


class Migration(migrations.Migration):

    dependencies = [
        ('accounts', '0010_operator_time_zone'),
        ('tables', '0007_studio_agreement'),
        ('wagering', '0008_extra_cards'),
    ]

    operations = [
        migrations.RunPython(agreements_of_the_bets, migrations.RunPython.noop),
    ]
