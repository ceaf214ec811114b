"""Errors that mean the user's input is wrong: reported as one line, exit code 2."""


class UsageError(Exception):
    """Bad input: the message names the problem and the fix."""
