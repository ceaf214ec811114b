"""`python -m rlsuite.serve`: a checkpoint the suite wrote behind an HTTP endpoint on Ray Serve.

command.py (what serve does: find, check, start, wait for Ctrl-C), startup.py (the deploy
watched with a deadline until its route answers), options.py (its flags as
one dataclass), app.py (the Serve deployment: routes, dynamic batching, one line per
error), policies.py (RL policies with their connectors, per-session state, ONNX),
classifiers.py (ResNet and BERT checkpoints), inputs.py (request bodies checked against
the model's spaces: HTTP 400 with one line).
"""
