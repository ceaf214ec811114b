"""Evaluating trained policies: find a checkpoint, roll it out, record video.

`locate` turns a results path into a checkpoint and its env, `policy` restores the
RLModules and connectors of an RLlib checkpoint, `rollout` plays episodes, `video`
writes and reads MP4s. The CLI is `python -m rlsuite.evaluate`.
"""
