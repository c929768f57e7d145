"""``python -m operator_wallet``: see ``operator_wallet.cli``."""

from operator_wallet.cli import main

main()
