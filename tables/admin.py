"""Minimal admin registration of tables, limits, seats, shoes, rounds and their timeline (the
operator admin proper is built elsewhere)."""

from django.contrib import admin

from .models import Round, RoundEvent, Seat, Shoe, Table, TableLimit

admin.site.register([Table, TableLimit, Seat, Shoe, Round, RoundEvent])
