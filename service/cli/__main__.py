"""``python -m service.cli`` runs the ``shortlist`` command."""

from service.cli import main

main()
