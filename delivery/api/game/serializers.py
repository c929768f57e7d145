"""Serializers of the game-server API: request shapes (validated here only for their JSON types,
strictly: ``Strict*Field``, and their keys: ``StrictSerializer`` refuses any other; amounts stay
raw so that ``accounts.money.parse_amount`` rejects floats as ``invalid_amount``) and response
shapes. Money in answers is a decimal string with exactly the currency's minor units (``Money``:
the serializer's context gives them, ``{"minor_units": 2}``)."""

import re

from django.core.validators import RegexValidator
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from accounts.money import amount_string
from delivery.api.common import (
    AmountField,
    ErrorSerializer,
    StrictBooleanField,
    StrictCharField,
    StrictIntegerField,
    StrictSerializer,
)
from delivery.api.player.serializers import AMOUNT_SCHEMA
from tables.models import Round, RoundEvent, Table, TableLimit
from wagering.models import Bet, BetExtra


@extend_schema_field(AMOUNT_SCHEMA)
class Money(serializers.Field):
    """A ``Decimal`` (major units) as a decimal string with the minor units of the context's
    ``minor_units`` (the round's or table's currency). None stays None."""

    def __init__(self, **kwargs):
        kwargs["read_only"] = True
        super().__init__(**kwargs)

    def to_representation(self, value):
        return amount_string(value, self.context["minor_units"])


class LimitSerializer(serializers.ModelSerializer):
    min_stake = Money()
    max_stake = Money()
    chip_step = Money(help_text="Stakes are multiples of it.")

    class Meta:
        model = TableLimit
        fields = ["bet_type", "min_stake", "max_stake", "chip_step"]
        read_only_fields = fields


class TableSerializer(serializers.ModelSerializer):
    """A table with its limits per bet type (the context's ``minor_units`` are set per table)."""

    currency = serializers.CharField(source="currency_id", read_only=True)
    minor_units = serializers.IntegerField(source="currency.minor_units", read_only=True)
    limits = serializers.SerializerMethodField()

    class Meta:
        model = Table
        fields = ["code", "name", "variant", "currency", "minor_units", "status", "seats", "limits"]
        read_only_fields = fields

    @extend_schema_field(LimitSerializer(many=True))
    def get_limits(self, table):
        return LimitSerializer(sorted(table.limits.all(), key=lambda limit: limit.bet_type), many=True,
                               context={"minor_units": table.currency.minor_units}).data


class OpenRoundSerializer(StrictSerializer):
    external_id = StrictCharField(
        max_length=64, trim_whitespace=False, validators=[RegexValidator(
            r"\A\S(?:.*\S)?\Z", "a round id has no leading or trailing whitespace", flags=re.DOTALL)],
        help_text="The game server's round id (unique per table; no leading or trailing whitespace).")
    shoe = StrictIntegerField(min_value=1, max_value=2**31 - 1,
                              help_text="Sequence number of the shoe; a new one starts a new shoe.")
    burn_count = StrictIntegerField(min_value=0, max_value=11, default=0,
                                    help_text="A new shoe's cards burnt after the shuffle, the shown card included: "
                                              "the shown card and as many as it is worth, 2 to 11 (RULES 1). A "
                                              "round on a shoe already open burns none: 0 or left out.")


class RoundSerializer(serializers.ModelSerializer):
    table = serializers.SlugRelatedField(slug_field="code", read_only=True)
    shoe = serializers.IntegerField(source="shoe.sequence", read_only=True)
    state = serializers.CharField(read_only=True, help_text="open, closed, suspended, resulted, settled, "
                                  "settlement_failed, voided")

    class Meta:
        model = Round
        fields = ["id", "table", "external_id", "shoe", "shoe_round", "state", "opened_at", "closed_at",
                  "suspended_at", "cancelled_at", "resulted_at", "settled_at", "voided_at", "failure_reason"]
        read_only_fields = fields


class RecordedRoundSerializer(RoundSerializer):
    settlement = serializers.SerializerMethodField(
        help_text="queued: settlement was handed to the workers; deferred: the record is stored but the task "
                  "queue could not be reached: the platform settles the round once it is back (the same record "
                  "sent again is safe and queues it again); "
                  "none: nothing to queue (already settled, or settlement failed).")

    class Meta(RoundSerializer.Meta):
        fields = RoundSerializer.Meta.fields + ["settlement"]
        read_only_fields = fields

    def get_settlement(self, round_) -> str:
        return {True: "queued", False: "deferred"}.get(getattr(round_, "settle_queued", None), "none")


class RoundEventSerializer(serializers.ModelSerializer):
    kind = serializers.CharField(read_only=True, help_text="opened, bet_placed, betting_closed, ... (extensible)")
    class Meta:
        model = RoundEvent
        fields = ["id", "kind", "actor", "payload", "created_at"]
        read_only_fields = fields


#: The most play events one call reports.
MAX_EVENTS = 500


class PlayEventsSerializer(StrictSerializer):
    events = serializers.ListField(
        child=serializers.DictField(), min_length=1, max_length=MAX_EVENTS,
        help_text='Each {"kind": "card_scanned" | "card_rescanned" | "decision" | "auto_play", ...details}: '
                  'card_scanned {"card": "AS", "to": "dealer" | "seat:N" | "player"}, card_rescanned {"to", '
                  '"card" (the read that replaces the last card scanned to "to"; none while unreadable)}, '
                  'decision and auto_play {"seat": N (none at a boundless table), "action": "hit" | "stand" | '
                  '"double" | "split" | "surrender" (the variant\'s; auto_play: hit or stand), "hand": 1 | 2 '
                  '(optional), "record_id" (optional: the bet)}; other keys are kept as given.')


class RoundDetailSerializer(RoundSerializer):
    events = RoundEventSerializer(many=True, read_only=True)

    class Meta(RoundSerializer.Meta):
        fields = RoundSerializer.Meta.fields + ["events"]
        read_only_fields = fields


class BetRequestSerializer(serializers.Serializer):
    key = StrictCharField(help_text="The game server's idempotency key for this bet (unique at the table; "
                                     "another studio's keys never meet yours).")
    player = StrictCharField(help_text="The player's code.")
    type = serializers.ChoiceField(choices=Bet.Type.choices)
    stake = AmountField(help_text='Decimal string, e.g. "10.00" (never a float).')
    seat = StrictIntegerField(required=False, allow_null=True, help_text="Seat 1-7 (classic/premium).")
    record_id = StrictCharField(required=False, allow_null=True,
                                      help_text="The bet's id in the round record (default: key).")


class BetBatchSerializer(serializers.Serializer):
    bets = BetRequestSerializer(many=True)


class BetExtraSerializer(serializers.ModelSerializer):
    amount = Money()
    kind = serializers.CharField(read_only=True)

    class Meta:
        model = BetExtra
        fields = ["kind", "hand", "amount", "key", "created_at"]
        read_only_fields = fields


class BetSerializer(serializers.ModelSerializer):
    player = serializers.SlugRelatedField(slug_field="game_code", read_only=True)
    stake = Money()
    state = serializers.CharField(read_only=True, help_text="placed, accepted, settled, refunded")

    class Meta:
        model = Bet
        fields = ["id", "record_id", "idempotency_key", "player", "type", "seat", "stake", "state",
                  "follow_double", "follow_split", "placed_at"]
        read_only_fields = fields


class RoundBetSerializer(BetSerializer):
    """A bet of a round with its extra stakes and, once settled (or refunded), its result."""

    extras = BetExtraSerializer(many=True, read_only=True)
    returned = Money(allow_null=True, help_text="Everything credited back; null until settled or refunded.")
    outcome = serializers.CharField(read_only=True, allow_null=True,
                                    help_text="blackjack, win, push, lose, surrender, void... null until settled.")

    class Meta(BetSerializer.Meta):
        fields = BetSerializer.Meta.fields + ["extras", "outcome", "returned", "settled_at"]
        read_only_fields = fields


class RoundBetsSerializer(serializers.Serializer):
    round = RoundSerializer()
    bets = RoundBetSerializer(many=True)


class BetOutcomeSerializer(serializers.Serializer):
    index = serializers.IntegerField()
    created = serializers.BooleanField(help_text="False: the key had already placed these bets.")
    bets = BetSerializer(many=True, help_text="The bet, and its premium mirror on the second seat if any.")
    error = ErrorSerializer(allow_null=True)


class BetBatchResultSerializer(serializers.Serializer):
    code = serializers.CharField(required=False, help_text="Only when no item was accepted: none_accepted.")
    detail = serializers.CharField(required=False)
    results = BetOutcomeSerializer(many=True)


class ExtraRequestSerializer(StrictSerializer):
    bet = StrictCharField(help_text="The bet's record id.")
    kind = serializers.ChoiceField(choices=BetExtra.Kind.choices)
    hand = StrictIntegerField(min_value=1, max_value=2, default=1)
    cards = serializers.ListField(child=StrictCharField(max_length=8), required=False, max_length=32,
                                  help_text="The hand's cards (required for double and split).")


class ExtraBatchSerializer(serializers.Serializer):
    extras = ExtraRequestSerializer(many=True)


class ExtraOutcomeSerializer(serializers.Serializer):
    applied = serializers.BooleanField()
    action = serializers.CharField(allow_null=True, help_text="What to apply to the hand: the kind, or the fallback.")
    extra = BetExtraSerializer(allow_null=True)
    error = ErrorSerializer(allow_null=True, help_text="Batch only: why this request was rejected (nothing taken).")


class ExtraBatchResultSerializer(serializers.Serializer):
    code = serializers.CharField(required=False, help_text="Only when no item was accepted: none_accepted.")
    detail = serializers.CharField(required=False)
    results = ExtraOutcomeSerializer(many=True)


class ResultRequestSerializer(StrictSerializer):
    record = serializers.JSONField(help_text="The round record (docs/round-record.md).")
    cut_card_out = StrictBooleanField(default=False)


class ReasonSerializer(StrictSerializer):
    reason = StrictCharField(max_length=500)


class CancelSerializer(ReasonSerializer):
    host_disconnected = StrictBooleanField(default=False)
