"""Serializers of the game-server API: request shapes (validated here only for their JSON types,
strictly: ``Strict*Field``; amounts stay raw so that ``accounts.money.parse_amount`` rejects floats
as ``invalid_amount``) and response shapes."""

from rest_framework import serializers

from delivery.api.common import AmountField, ErrorSerializer, StrictBooleanField, StrictCharField, StrictIntegerField
from tables.models import Round, RoundEvent
from wagering.models import Bet, BetExtra


class OpenRoundSerializer(serializers.Serializer):
    external_id = StrictCharField(max_length=64, help_text="The game server's round id (unique per table).")
    shoe = StrictIntegerField(min_value=1, max_value=2**31 - 1,
                              help_text="Sequence number of the shoe; a new one starts a new shoe.")
    burn_count = StrictIntegerField(min_value=0, max_value=10, default=0)


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


class RoundEventSerializer(serializers.ModelSerializer):
    kind = serializers.CharField(read_only=True, help_text="opened, bet_placed, betting_closed, ... (extensible)")
    class Meta:
        model = RoundEvent
        fields = ["id", "kind", "actor", "payload", "created_at"]
        read_only_fields = fields


class PlayEventsSerializer(serializers.Serializer):
    events = serializers.ListField(
        child=serializers.DictField(), min_length=1, max_length=500,
        help_text='Each {"kind": "card_scanned" | "card_rescanned" | "decision" | "auto_play", ...details}.')


class RoundDetailSerializer(RoundSerializer):
    events = RoundEventSerializer(many=True, read_only=True)

    class Meta(RoundSerializer.Meta):
        fields = RoundSerializer.Meta.fields + ["events"]
        read_only_fields = fields


class BetRequestSerializer(serializers.Serializer):
    key = StrictCharField(help_text="The game server's idempotency key for this bet (unique).")
    player = StrictCharField(help_text="The player's code.")
    type = serializers.ChoiceField(choices=Bet.Type.choices)
    stake = AmountField(help_text='Decimal string, e.g. "10.00" (never a float).')
    seat = StrictIntegerField(required=False, allow_null=True, help_text="Seat 1-7 (classic/premium).")
    record_id = StrictCharField(required=False, allow_null=True,
                                      help_text="The bet's id in the round record (default: key).")


class BetBatchSerializer(serializers.Serializer):
    bets = BetRequestSerializer(many=True)


class BetExtraSerializer(serializers.ModelSerializer):
    amount = AmountField()
    kind = serializers.CharField(read_only=True)

    class Meta:
        model = BetExtra
        fields = ["kind", "hand", "amount", "key", "created_at"]
        read_only_fields = fields


class BetSerializer(serializers.ModelSerializer):
    player = serializers.SlugRelatedField(slug_field="code", read_only=True)
    stake = AmountField()
    state = serializers.CharField(read_only=True, help_text="placed, accepted, settled, refunded")

    class Meta:
        model = Bet
        fields = ["id", "record_id", "idempotency_key", "player", "type", "seat", "stake", "state",
                  "follow_double", "follow_split", "placed_at"]
        read_only_fields = fields


class BetOutcomeSerializer(serializers.Serializer):
    index = serializers.IntegerField()
    created = serializers.BooleanField(help_text="False: the key had already placed these bets.")
    bets = BetSerializer(many=True, help_text="The bet, and its premium mirror on the second seat if any.")
    error = ErrorSerializer(allow_null=True)


class BetBatchResultSerializer(serializers.Serializer):
    results = BetOutcomeSerializer(many=True)


class ExtraRequestSerializer(serializers.Serializer):
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
    results = ExtraOutcomeSerializer(many=True)


class ResultRequestSerializer(serializers.Serializer):
    record = serializers.JSONField(help_text="The round record (docs/round-record.md).")
    cut_card_out = StrictBooleanField(default=False)


class ReasonSerializer(serializers.Serializer):
    reason = StrictCharField(max_length=500)


class CancelSerializer(ReasonSerializer):
    host_disconnected = StrictBooleanField(default=False)
