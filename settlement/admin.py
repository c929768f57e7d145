"""Minimal admin registration of settlement's rows; the operator pages (Bet Record, disputes,
alerts) are built on top of these by the admin app."""

from django.contrib import admin

from .models import Alert, BetSettlement, Dispute, DisputeNote, OperatorAction, RoundCorrection

admin.site.register([Alert, BetSettlement, Dispute, DisputeNote, OperatorAction, RoundCorrection])
