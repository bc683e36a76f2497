"""The trial tests' one way to run ``netsim ARGV`` in-process (shared by test_trial7/8/9)."""
from netsim.cli import main


def run_cli(argv, capsys):
    """Run ``netsim ARGV`` in-process; return (exit status, stderr lines that are not blank)."""
    try:
        rc = main([str(a) for a in argv])
    except SystemExit as e:  # argparse
        rc = e.code
    err = [ln for ln in capsys.readouterr().err.splitlines() if ln.strip()]
    return rc, err
