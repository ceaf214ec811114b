"""Evaluating trained checkpoints: find one, restore it, play or score it.

`locate` turns a results path into a checkpoint and its env, `damage` names a damaged
checkpoint file and the last intact checkpoint; `acting` is one decision of a restored
policy, `policy` and `multiagent` restore single- and multi-agent policies with their
connectors, `joint` a team trained as one agent (MADDPG, MASAC), `rollout` plays
episodes, `tables` prints their returns, `video` writes and reads MP4s; `rl` and
`supervised` evaluate each kind of checkpoint, `command` is `python -m rlsuite.evaluate`
behind its flags (`options`).
"""
