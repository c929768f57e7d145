"""The platform's HTTP APIs: ``game`` (the studio's game server, ``/api/game/v1/``), ``player``
(players' bet history, ``/api/v1/``) and what they share (``common``: the JSON parser and the
error format)."""
