"""``python -m ragmeter`` runs the command line."""

from ragmeter.cli.main import run

if __name__ == "__main__":
    run()
