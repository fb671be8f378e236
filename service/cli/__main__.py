"""``python -m service.cli`` runs the ``shortlist`` command."""

from service.cli.commands import main

main()
